// Hover: the method or service in the URL, a JSON key in a body (its field), an enum value in a body,
// request options (the flag's help), `{{references}}` (where the value comes from), and the parts of
// `@assert` and `@capture` lines (assertion-hover.ts). Markdown comes from the schema engine's renderDocs.
import type { DescMessage } from "@bufbuild/protobuf";
import type { Hover, Position } from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";
import type { Analyzer } from "../core/analysis/analysis";
import { hoverMarkdown } from "../core/analysis/schema-docs";
import type { RequestSchema, SchemaStore } from "../core/analysis/schema-store";
import { curlFlagsByName } from "../core/invoke/curl-flags";
import { captureSources } from "../core/rpcfile/context";
import { positionIn } from "../core/rpcfile/parse";
import { requestAt } from "../core/rpcfile/request-at";
import { isStubText } from "../core/rpcfile/stub-syntax";
import type { Range, RpcRequest, Token } from "../core/rpcfile/types";
import { findReferences, systemVariables } from "../core/rpcfile/variables";
import { code, escapeMarkdown } from "../core/schema/docs";
import { fullNameOf } from "../core/schema/lookup";
import { assertionHover } from "./assertion-hover";
import { bodyPlace } from "./body-location";
import { stubHover } from "./stub-documents";

export function within(r: Range, p: Position): boolean {
  if (p.line < r.start.line || p.line > r.end.line) return false;
  if (p.line === r.start.line && p.character < r.start.character) return false;
  if (p.line === r.end.line && p.character > r.end.character) return false;
  return true;
}

function markdown(value: string, range: Range): Hover {
  return { contents: { kind: "markdown", value }, range };
}

export async function hover(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  p: Position,
): Promise<Hover | null> {
  // A stub file of `protocall mock`: its documents are messages of the stub's method.
  if (isStubText(doc.getText())) return stubHover(store, doc, p);
  const a = analyzer.get(doc);
  const request = requestAt(a.file, p);
  if (!request) return null;
  for (const o of request.options) {
    if (within(o.name.range, p)) {
      const flag = curlFlagsByName.get(o.name.text);
      if (flag) return markdown(`**@${flag.name}** (\`--${flag.name}\`)\n\n${flag.help}`, o.name.range);
    }
  }
  const reference = referenceHover(analyzer, doc, request, p);
  if (reference) return reference;
  const assertion = await assertionHover(analyzer, store, doc, request, p);
  if (assertion) return assertion;
  const url = request.url;
  const inUrl = url && within(url.range, p);
  const inBody = request.bodyRange && within(request.bodyRange, p);
  if (!inUrl && !inBody) return null;
  const info = await analyzer.request(doc, request);
  if (!info.schema) return null;
  if (inUrl) {
    const parts = info.url;
    if (parts?.method && info.method && within(parts.method.range, p)) {
      const m = info.method;
      return markdown(await hoverMarkdown(store, info.schema, fullNameOf(m), m), parts.method.range);
    }
    const service = info.lookup?.service;
    if (parts?.service && service && within(parts.service.range, p)) {
      return markdown(
        await hoverMarkdown(store, info.schema, service.typeName, service),
        parts.service.range,
      );
    }
    return null;
  }
  const method = info.method;
  if (!method) return null;
  return documentHover(store, info.schema, request, method.input, p);
}

/** Hover in the JSON documents of `request` (a request's body, or a stub's documents) of type `message`. */
export async function documentHover(
  store: SchemaStore,
  schema: RequestSchema,
  request: Pick<RpcRequest, "body">,
  message: DescMessage,
  p: Position,
): Promise<Hover | null> {
  const place = bodyPlace(request, message, p);
  const token = place?.location.token;
  if (!place || !token || !place.field) return null;
  const range = {
    start: positionIn(place.part.text, place.part.range.start, token.start),
    end: positionIn(place.part.text, place.part.range.start, token.end),
  };
  const field = place.field;
  if (place.location.role === "key") {
    return markdown(await hoverMarkdown(store, schema, fullNameOf(field), field), range);
  }
  if (token.kind === "string" && field.enum) {
    const value = field.enum.values.find((v) => v.name === token.value);
    if (value) return markdown(await hoverMarkdown(store, schema, fullNameOf(value), value), range);
  }
  return null;
}

/** A `{{...}}` reference: where its value comes from, and the value (environment, file, captures). */
function referenceHover(
  analyzer: Analyzer,
  doc: TextDocument,
  request: RpcRequest,
  p: Position,
): Hover | null {
  const tokens: Token[] = [];
  if (request.url) tokens.push(request.url);
  for (const h of request.headers) tokens.push(h.name, h.value);
  for (const o of request.options) if (o.value) tokens.push(o.value);
  for (const part of request.body) tokens.push(part.kind === "json" ? part : part.path);
  for (const a of request.assertions) if (a.value?.kind === "json") tokens.push(a.value);
  const token = tokens.find((t) => within(t.range, p) && t.text.includes("{{"));
  if (!token) return null;
  const ref = findReferences(token).find((r) => within(r.range, p));
  if (!ref) return null;
  if (ref.system) {
    const spec = systemVariables[ref.name];
    if (!spec) return null;
    return markdown(`${code([ref.name, ...spec.args].join(" "))} — ${escapeMarkdown(spec.doc)}`, ref.range);
  }
  const file = analyzer.get(doc).file;
  const name = ref.expression;
  const variable = file.variables.findLast((v) => v.name.text === name);
  const fileText = variable
    ? `file variable ${code(`@${variable.name.text}`)} = ${code(variable.value.text)} (line ${variable.range.start.line + 1})`
    : undefined;
  // In the order variables resolve (variables.ts): the selected environment, the file, $shared.
  const { selected, shared } = analyzer.environmentLayers(doc);
  if (Object.hasOwn(selected, name)) {
    return markdown(
      `Environment variable ${code(name)} = ${code(selected[name])}${fileText ? `, over the ${fileText}` : ""}`,
      ref.range,
    );
  }
  if (fileText) return markdown(`${fileText[0].toUpperCase()}${fileText.slice(1)}`, ref.range);
  if (Object.hasOwn(shared, name)) {
    return markdown(`Environment variable ${code(name)} = ${code(shared[name])} (from $shared)`, ref.range);
  }
  const captured = captureSources(file).get(name);
  if (captured) {
    const by = captured.map((s) => `request ${code(s.label)} (line ${s.line + 1})`).join(", ");
    return markdown(`Captured by ${by}: it has a value once that request has run`, ref.range);
  }
  return null;
}
