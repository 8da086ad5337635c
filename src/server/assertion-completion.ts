// Completion in `# @assert` and `# @capture` lines: the roots of a path, the fields of the message
// (JSON names, with their comments) or the members at the path so far, indexes, `[*]` and error
// detail types in brackets, the operators, and values where the schema knows them (code names,
// enum values, true/false, JSON types after isType).
import { ScalarType } from "@bufbuild/protobuf";
import {
  type CompletionItem,
  CompletionItemKind,
  CompletionItemTag,
  type Position,
  type Range,
} from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";
import type { Analyzer } from "../core/analysis/analysis";
import { resolvePath } from "../core/analysis/assertion-check";
import { fieldComments, fieldTypeText } from "../core/analysis/schema-docs";
import type { SchemaStore } from "../core/analysis/schema-store";
import {
  assertOperators,
  errorMembers,
  jsonTypes,
  parseAssertion,
  pathRoots,
  statusCodeNames,
} from "../core/rpcfile/assertion-syntax";
import { type Shape, standardDetailTypes } from "../core/rpcfile/response-path";
import type { RpcRequest } from "../core/rpcfile/types";

/** `# @assert ` or `# @capture ` and what follows, up to the cursor. */
const assertionLine = /^(\s*(?:#|\/\/)\s*@(assert|capture))(\s+)(.*)$/;

/** Response headers and trailers worth offering in `headers[`. */
const commonResponseHeaders = [
  "content-type",
  "grpc-status",
  "grpc-message",
  "grpc-encoding",
  "content-encoding",
  "date",
  "server",
  "x-request-id",
];

function range(line: number, start: number, end: number): Range {
  return { start: { line, character: start }, end: { line, character: end } };
}

/** Where a word that the cursor is in ends. */
function wordEnd(text: string, at: number, pattern = /[\w.-]/): number {
  let i = at;
  while (i < text.length && pattern.test(text[i])) i++;
  return i;
}

/** The end of a path written from the start of `text`: the first whitespace outside quotes. */
function pathEnd(text: string): number {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (/\s/.test(c)) return i;
  }
  return -1;
}

/** Completion items for an assertion line, or undefined when `before` is not one. */
export async function assertionItems(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  request: RpcRequest | undefined,
  p: Position,
  lineText: string,
  before: string,
): Promise<CompletionItem[] | undefined> {
  const m = assertionLine.exec(before);
  // A `{{` reference in a value completes variables (completion.ts).
  if (!m || /\{\{\s*[\w.$-]*$/.test(before)) return undefined;
  const kind = m[2] as "assert" | "capture";
  let start = m[1].length + m[3].length;
  let rest = m[4];
  if (kind === "capture") {
    const eq = rest.indexOf("=");
    if (eq < 0) return [];
    const spaces = /^\s*/.exec(rest.slice(eq + 1))?.[0].length ?? 0;
    start += eq + 1 + spaces;
    rest = rest.slice(eq + 1 + spaces);
    if (pathEnd(rest) >= 0) return [];
  }
  const ctx: Context = { analyzer, store, doc, request, p, lineText };
  const end = pathEnd(rest);
  if (end < 0) return pathItems(ctx, rest, start);
  if (kind === "capture") return [];
  const path = rest.slice(0, end);
  const afterPath = rest.slice(end).replace(/^\s+/, "");
  const opStart = p.character - afterPath.length;
  const opEnd = pathEnd(afterPath);
  if (opEnd < 0) {
    return Object.entries(assertOperators).map(([op, doc], i) => ({
      label: op,
      kind: CompletionItemKind.Operator,
      documentation: doc,
      sortText: String(i).padStart(2, "0"),
      textEdit: { range: range(p.line, opStart, wordEnd(lineText, p.character, /\S/)), newText: `${op} ` },
    }));
  }
  const op = afterPath.slice(0, opEnd);
  const typed = afterPath.slice(opEnd).replace(/^\s+/, "");
  return valueItems(ctx, path, start, op, p.character - typed.length);
}

interface Context {
  analyzer: Analyzer;
  store: SchemaStore;
  doc: TextDocument;
  request: RpcRequest | undefined;
  p: Position;
  lineText: string;
}

/** What the path `text` (starting at column `start`) holds, when the schema knows. */
async function shapeAt(ctx: Context, text: string, start: number): Promise<Shape | undefined> {
  if (!ctx.request) return undefined;
  const line = ctx.p.line;
  const parsed = parseAssertion(
    { text: `${text} exists`, range: range(line, start, start + text.length + 7) },
    range(line, 0, 0),
  );
  if (!parsed.assertion) return undefined;
  const info = await ctx.analyzer.request(ctx.doc, ctx.request);
  const r = await resolvePath(ctx.store, info, parsed.assertion.path);
  return r?.shape;
}

async function pathItems(ctx: Context, text: string, start: number): Promise<CompletionItem[]> {
  const { p, lineText } = ctx;
  if (/^[A-Za-z_]*$/.test(text)) {
    const replace = range(p.line, start, wordEnd(lineText, p.character, /\w/));
    return Object.entries(pathRoots).map(([root, doc]) => ({
      label: root,
      kind: CompletionItemKind.Variable,
      documentation: doc,
      textEdit: { range: replace, newText: root },
    }));
  }
  const member = /^(.*)\.(\w*)$/.exec(text);
  if (member) {
    const replace = range(p.line, p.character - member[2].length, wordEnd(lineText, p.character, /\w/));
    const shape = await shapeAt(ctx, member[1], start);
    return shape ? await memberItems(ctx, shape, replace) : [];
  }
  const bracket = /^(.*)\[([\w.*"-]*)$/.exec(text);
  if (bracket) {
    const from = p.character - bracket[2].length;
    let to = wordEnd(lineText, p.character, /[\w.*"-]/);
    if (lineText[to] === "]") to++;
    const shape = await shapeAt(ctx, bracket[1], start);
    return shape ? bracketItems(shape, range(p.line, from, to)) : [];
  }
  return [];
}

async function memberItems(ctx: Context, shape: Shape, replace: Range): Promise<CompletionItem[]> {
  const length: CompletionItem = {
    label: "length",
    kind: CompletionItemKind.Property,
    detail: "number",
    documentation: "The number of elements of a list, or of characters of a string.",
    textEdit: { range: replace, newText: "length" },
  };
  switch (shape.kind) {
    case "message": {
      const info = ctx.request ? await ctx.analyzer.request(ctx.doc, ctx.request) : undefined;
      const comments = info?.schema ? await fieldComments(ctx.store, info.schema, shape.message) : new Map();
      return shape.message.fields.map((f) => {
        const comment = comments.get(f.name);
        return {
          label: f.jsonName,
          kind: CompletionItemKind.Field,
          detail: fieldTypeText(f),
          documentation: comment ? { kind: "markdown", value: comment } : undefined,
          tags: f.deprecated ? [CompletionItemTag.Deprecated] : undefined,
          sortText: String(f.number).padStart(6, "0"),
          textEdit: { range: replace, newText: f.jsonName },
        };
      });
    }
    case "record":
      return Object.keys(shape.members).map((name) => ({
        label: name,
        kind: CompletionItemKind.Property,
        documentation: errorMembers[name],
        textEdit: { range: replace, newText: name },
      }));
    case "list":
    case "details":
      return [length];
    case "scalar":
      return shape.text ? [length] : [];
    default:
      return [];
  }
}

function bracketItems(shape: Shape, replace: Range): CompletionItem[] {
  const item = (label: string, doc: string, kind: CompletionItemKind = CompletionItemKind.Value) => ({
    label,
    kind,
    documentation: doc,
    textEdit: { range: replace, newText: `${label}]` },
  });
  const elements = [
    item("0", "The first element."),
    item("-1", "The last element."),
    item("*", "Every element: the rest of the path is applied to each, and the results form an array."),
  ];
  switch (shape.kind) {
    case "list":
      return elements;
    case "details":
      return [
        ...standardDetailTypes.map((t) =>
          item(t, `The first error detail of type ${t}.`, CompletionItemKind.Class),
        ),
        ...elements,
      ];
    case "names":
      return commonResponseHeaders.map((h) => item(JSON.stringify(h), `The ${h} header.`));
    default:
      return [];
  }
}

async function valueItems(
  ctx: Context,
  path: string,
  pathStart: number,
  op: string,
  valueStart: number,
): Promise<CompletionItem[]> {
  const { p, lineText } = ctx;
  const replace = range(p.line, valueStart, wordEnd(lineText, p.character, /[\w.-]/));
  const words = (values: readonly string[], kind: CompletionItemKind, doc?: (v: string) => string) =>
    values.map((v) => ({
      label: v,
      kind,
      documentation: doc?.(v),
      textEdit: { range: replace, newText: v },
    }));
  if (op === "isType") return words(jsonTypes, CompletionItemKind.TypeParameter);
  if (op !== "==" && op !== "!=" && op !== "contains" && op !== "!contains") return [];
  if (path === "status" || path === "error.code") {
    return words(
      statusCodeNames,
      CompletionItemKind.EnumMember,
      (v) => `RPC status code ${statusCodeNames.indexOf(v)}`,
    );
  }
  let shape = await shapeAt(ctx, path, pathStart);
  if (shape?.kind === "list" && op.endsWith("contains")) shape = shape.of;
  if (shape?.kind !== "scalar") return [];
  if (shape.enum) {
    const e = shape.enum;
    return e.values.map((v) => ({
      label: v.name,
      kind: CompletionItemKind.EnumMember,
      detail: `${e.typeName} = ${v.number}`,
      tags: v.deprecated ? [CompletionItemTag.Deprecated] : undefined,
      textEdit: { range: replace, newText: v.name },
    }));
  }
  if (shape.scalar === ScalarType.BOOL) return words(["true", "false"], CompletionItemKind.Value);
  return [];
}
