// Hover text and comments of schema elements, looked up with source info (comments, options by
// name) in the request's sources and cached per schema and name: a second hover is a map look-up.
import {
  type DescExtension,
  type DescField,
  type DescMessage,
  type DescMethod,
  type Registry,
  ScalarType,
} from "@bufbuild/protobuf";
import { commentBlocks, renderDocs } from "../schema/docs";
import { describe, type LookupResult } from "../schema/lookup";
import { lookupInSource } from "../schema/source-lookup";
import type { NamedDesc } from "../schema/types";
import type { RequestSchema, SchemaStore } from "./schema-store";

/** The element with its source info from the first source that declares it; `desc` itself otherwise. */
async function lookupDocumented(
  schema: RequestSchema,
  fullName: string,
  degraded?: () => void,
): Promise<(LookupResult & { registry?: Registry }) | undefined> {
  for (const source of schema.docSources) {
    try {
      const found = await lookupInSource(source, fullName);
      if (found) return found;
    } catch {
      // An unreachable source: try the next, and do not keep what the others give for good (the
      // source may answer, with comments, on the next hover).
      degraded?.();
    }
  }
  return undefined;
}

/** Markdown hover text of an element. */
export function hoverMarkdown(
  store: SchemaStore,
  schema: RequestSchema,
  fullName: string,
  desc: NamedDesc,
): Promise<string> {
  const key = `hover\u0000${schema.key}\u0000${fullName}`;
  return store.remember(key, async () => {
    const found = await lookupDocumented(schema, fullName, () => store.forgetLater(key));
    return renderDocs(found ?? describe(desc), { registry: found?.registry }).markdown;
  });
}

/** The comments of each field of a message (by field name), read once per schema and message. */
export function fieldComments(
  store: SchemaStore,
  schema: RequestSchema,
  message: DescMessage,
): Promise<Map<string, string>> {
  const key = `fields\u0000${schema.key}\u0000${message.typeName}`;
  return store.remember(key, async () => {
    const out = new Map<string, string>();
    const found = await lookupDocumented(schema, message.typeName, () => store.forgetLater(key));
    const documented = found?.desc.kind === "message" ? found.desc : message;
    for (const f of documented.fields) {
      const comment = commentBlocks(describe(f).comments).join("\n\n");
      if (comment !== "") out.set(f.name, comment);
    }
    return out;
  });
}

const scalarName = (s: ScalarType) => ScalarType[s].toLowerCase();

/** `string`, `repeated demo.v1.Color`, `map<string, int64>`. */
export function fieldTypeText(field: DescField | DescExtension): string {
  const element =
    field.message?.typeName ??
    field.enum?.typeName ??
    (field.scalar !== undefined ? scalarName(field.scalar) : "");
  if (field.fieldKind === "map") return `map<${scalarName(field.mapKey)}, ${element}>`;
  return field.fieldKind === "list" ? `repeated ${element}` : element;
}

/**
 * Renders the method's hover text and reads its input's field comments in the background, once per
 * schema, so that the first hover or completion in a request finds them ready.
 */
export function prefetchDocs(store: SchemaStore, schema: RequestSchema, method: DescMethod): void {
  setImmediate(() => {
    hoverMarkdown(store, schema, `${method.parent.typeName}.${method.name}`, method).catch(() => {});
    fieldComments(store, schema, method.input).catch(() => {});
  });
}
