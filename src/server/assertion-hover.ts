// Hover in `# @assert` and `# @capture` lines: the option itself (its syntax), a path's root, each
// field on the path (its comments, number, type and options, through renderDocs), an error detail
// type, the operator, an enum value given as the value, and the captured variable.
import type { Hover, Position } from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";
import type { Analyzer } from "../core/analysis/analysis";
import { resolvePath } from "../core/analysis/assertion-check";
import { hoverMarkdown } from "../core/analysis/schema-docs";
import type { SchemaStore } from "../core/analysis/schema-store";
import {
  assertOperators,
  pathRoots,
  type ResponsePath,
  type RpcAssertion,
  type RpcCapture,
} from "../core/rpcfile/assertion-syntax";
import { describeShape } from "../core/rpcfile/response-path";
import type { Range, RpcRequest } from "../core/rpcfile/types";
import { code, escapeMarkdown } from "../core/schema/docs";
import { fullNameOf } from "../core/schema/lookup";

const optionDocs = {
  assert:
    '**@assert** `<path> <operator> [value]` — what the response must be, checked after the call: `status == ok`, `messages[0].name == "x"`, `messages.length >= 3`, `headers["content-type"] contains "grpc"`, `error.details[google.rpc.BadRequest].fieldViolations[0].field == "name"`. Operators: == != < <= > >= contains !contains matches !matches exists !exists isType. Without an assertion on `status` or `error`, the status must be ok.',
  capture:
    "**@capture** `<name> = <path>` — keeps a value of the response as `{{name}}` for the requests after this one in the same run (strings as they are, other values as JSON).",
};

function within(r: Range, p: Position): boolean {
  if (p.line < r.start.line || p.line > r.end.line) return false;
  if (p.line === r.start.line && p.character < r.start.character) return false;
  if (p.line === r.end.line && p.character > r.end.character) return false;
  return true;
}

function markdown(value: string, range: Range): Hover {
  return { contents: { kind: "markdown", value }, range };
}

/** Hover for a position in an assertion or capture line of `request`; null when it is not in one. */
export async function assertionHover(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  request: RpcRequest,
  p: Position,
): Promise<Hover | null> {
  const assertion = request.assertions.find((a) => within(a.range, p));
  const capture = assertion ? undefined : request.captures.find((c) => within(c.range, p));
  const line = assertion?.range ?? capture?.range;
  if (!line) return null;
  const lineText = doc.getText({
    start: { line: p.line, character: 0 },
    end: { line: p.line + 1, character: 0 },
  });
  const at = lineText.indexOf("@", line.start.character);
  const name = assertion ? "assert" : "capture";
  const nameRange: Range = {
    start: { line: p.line, character: at },
    end: { line: p.line, character: at + 1 + name.length },
  };
  if (at >= 0 && within(nameRange, p)) return markdown(optionDocs[name], nameRange);
  if (capture && within(capture.name.range, p)) {
    return markdown(
      `Captured as ${code(`{{${capture.name.text}}}`)} for the requests after this one: the value at ${code(capture.path.text)}.`,
      capture.name.range,
    );
  }
  const path = (assertion ?? (capture as RpcCapture)).path;
  if (within(path.range, p)) return pathHover(analyzer, store, doc, request, path, p);
  if (!assertion) return null;
  if (within(assertion.operator.range, p)) {
    return markdown(
      `${code(assertion.operator.text)} — ${escapeMarkdown(assertOperators[assertion.operator.text])}`,
      assertion.operator.range,
    );
  }
  if (assertion.value && within(assertion.value.range, p))
    return valueHover(analyzer, store, doc, request, assertion);
  return null;
}

async function pathHover(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  request: RpcRequest,
  path: ResponsePath,
  p: Position,
): Promise<Hover | null> {
  if (within(path.rootRange, p)) {
    return markdown(`${code(path.root)} — ${escapeMarkdown(pathRoots[path.root])}`, path.rootRange);
  }
  const index = path.segments.findIndex((s) => within(s.range, p));
  if (index < 0) return null;
  const segment = path.segments[index];
  const info = await analyzer.request(doc, request);
  const r = await resolvePath(store, info, path);
  const step = r?.steps[index];
  if (!step || !info.schema) return null;
  if (step.field) {
    return markdown(
      await hoverMarkdown(store, info.schema, fullNameOf(step.field), step.field),
      segment.range,
    );
  }
  if (step.type) {
    return markdown(await hoverMarkdown(store, info.schema, step.type.typeName, step.type), segment.range);
  }
  let end = segment.range.end.character - path.range.start.character;
  if (path.text[end] === "]") end++;
  const upTo = path.text.slice(0, end);
  return markdown(`${code(upTo)} — ${escapeMarkdown(describeShape(step.shape))}`, segment.range);
}

async function valueHover(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  request: RpcRequest,
  a: RpcAssertion,
): Promise<Hover | null> {
  const v = a.value;
  if (v?.kind !== "json" || typeof v.json !== "string") return null;
  const info = await analyzer.request(doc, request);
  const r = await resolvePath(store, info, a.path);
  let shape = r?.shape;
  if (shape?.kind === "list") shape = shape.of;
  if (shape?.kind !== "scalar" || !shape.enum || !info.schema) return null;
  const value = shape.enum.values.find((x) => x.name === v.json);
  if (!value) return null;
  return markdown(await hoverMarkdown(store, info.schema, fullNameOf(value), value), v.range);
}
