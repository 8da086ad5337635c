// Diagnostics of a stub file of `protocall mock` in the editor (and `protocall check`): the stub
// syntax's own (stub-syntax.ts), then each stub against the workspace's schema, the one the mock
// serves by default: the method exists (with the closest name), and its documents are messages of
// the right types, from the same check the mock runs when it loads stubs (analysis/stub-check.ts), so a
// misspelled field is named at the same place, with the same words and the same quick fix.
import type { DescMessage, DescMethod } from "@bufbuild/protobuf";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb";
import { defaultCurlOptions } from "../invoke/options";
import { parseStubFile } from "../rpcfile/stub-syntax";
import type { Diagnostic } from "../rpcfile/types";
import { requestSchema } from "./request-schema";
import type { RequestSchema, SchemaStore, ServiceLookup } from "./schema-store";
import { checkStubDocuments, unknownDetailTypeProblem, unknownMethodProblem } from "./stub-check";

/** The schema stubs are checked against in the editor: the workspace's, as the mock serves by default. */
export function stubSchema(store: SchemaStore, baseDir: string): Promise<RequestSchema> {
  const options = defaultCurlOptions();
  options.reflect = false;
  return requestSchema(store, options, baseDir);
}

/** A stub's method (`package.Service/Method`) in the schema, with the service's look-up. */
export async function findStubMethod(
  store: SchemaStore,
  schema: RequestSchema,
  name: string,
): Promise<{ lookup: ServiceLookup; method?: DescMethod; methodName: string }> {
  const slash = name.lastIndexOf("/");
  const methodName = name.slice(slash + 1);
  const lookup = await store.findService(schema, name.slice(0, slash));
  return { lookup, method: lookup.service?.methods.find((m) => m.name === methodName), methodName };
}

/** Every diagnostic of a stub file's text; `baseDir` is the file's folder (its workspace schema). */
export async function stubFileDiagnostics(
  store: SchemaStore,
  text: string,
  baseDir: string,
): Promise<Diagnostic[]> {
  const parsed = parseStubFile(text);
  const out = [...parsed.diagnostics];
  if (parsed.stubs.length === 0) return out;
  const schema = await stubSchema(store, baseDir);
  if (schema.sources.length === 0) return out;
  for (const stub of parsed.stubs) {
    const { lookup, method, methodName } = await findStubMethod(store, schema, stub.method);
    if (!method) {
      if (lookup.failures.length > 0 || schema.incomplete.length > 0) continue;
      const candidates = lookup.service
        ? lookup.service.methods.map((m) => `${m.parent.typeName}/${m.name}`)
        : (lookup.known ?? []).map((s) => `${s}/${methodName}`);
      out.push(unknownMethodProblem(stub.method, stub.line, candidates));
      continue;
    }
    const types = await detailTypes(
      schema,
      stub.answers.flatMap((a) => a.details.map((d) => d.type)),
    );
    out.push(...checkStubDocuments(stub, method, (name) => types.get(name)));
    for (const d of stub.answers.flatMap((a) => a.details)) {
      if (types.has(d.type)) continue;
      const names = file_google_rpc_error_details.messages.map((m) => m.typeName);
      out.push(unknownDetailTypeProblem(d.type, d.json.line, d.typeCharacter, names));
    }
  }
  return out;
}

/** The message types of error details: `google.rpc.*` (which the mock always knows), then the sources. */
export async function detailTypes(
  schema: RequestSchema,
  names: readonly string[],
): Promise<Map<string, DescMessage>> {
  const found = new Map<string, DescMessage>();
  for (const name of new Set(names)) {
    const rpc = file_google_rpc_error_details.messages.find((m) => m.typeName === name);
    if (rpc) {
      found.set(name, rpc);
      continue;
    }
    for (const source of schema.sources) {
      const t = await source.findType(name).catch(() => undefined);
      if (t?.kind === "message") {
        found.set(name, t);
        break;
      }
    }
  }
  return found;
}
