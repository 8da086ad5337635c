// Completion: request options after `# @`, paths, operators and values in `# @assert` and
// `# @capture` lines (assertion-completion.ts), common header names, the service and method in the
// URL, and in a body the fields of the message at the cursor (inserting `"name": `), enum values,
// and JSON skeletons of messages.
import type { DescExtension, DescField, DescMessage } from "@bufbuild/protobuf";
import {
  type CompletionItem,
  CompletionItemKind,
  CompletionItemTag,
  type CompletionList,
  InsertTextFormat,
  type Position,
  type Range,
} from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";
import type { Analyzer } from "../core/analysis/analysis";
import { fieldComments, fieldTypeText } from "../core/analysis/schema-docs";
import type { RequestSchema, SchemaStore } from "../core/analysis/schema-store";
import { pathStart } from "../core/analysis/url-parts";
import { isProtocolOwnedHeader } from "../core/header-line";
import { curlFlags } from "../core/invoke/curl-flags";
import { captureSources } from "../core/rpcfile/context";
import { positionIn } from "../core/rpcfile/parse";
import { requestAt } from "../core/rpcfile/request-at";
import { isStubText } from "../core/rpcfile/stub-syntax";
import type { RpcRequest } from "../core/rpcfile/types";
import { systemVariables } from "../core/rpcfile/variables";
import { fieldSkeleton, messageSkeleton } from "../core/schema/skeleton";
import { assertionItems } from "./assertion-completion";
import { bodyPlace, documentAt } from "./body-location";
import { stubCompletion } from "./stub-documents";

export const commonHeaders = [
  "Authorization",
  "Accept-Language",
  "Cookie",
  "Host",
  "User-Agent",
  "X-Api-Key",
  "X-Request-Id",
  "X-Correlation-Id",
  "X-Forwarded-For",
  "Traceparent",
  "Baggage",
].filter((h) => !isProtocolOwnedHeader(h));

function range(line: number, start: number, end: number): Range {
  return { start: { line, character: start }, end: { line, character: end } };
}

export interface CompletionOptions {
  /** The client takes a default edit range for the items of a list (LSP 3.17 `itemDefaults`). */
  editRangeDefault: boolean;
}

export async function complete(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  p: Position,
  options: CompletionOptions = { editRangeDefault: false },
): Promise<CompletionItem[] | CompletionList> {
  const lineText = doc.getText(range(p.line, 0, Number.MAX_SAFE_INTEGER)).replace(/\r?\n$/, "");
  // A stub file of `protocall mock`: its documents are messages of the stub's method.
  if (isStubText(doc.getText())) return stubCompletion(store, doc, p, lineText);
  const before = lineText.slice(0, p.character);
  const option = /^\s*(?:#|\/\/)\s*@([\w-]*)$/.exec(before);
  if (option) return optionItems(p, p.character - option[1].length, wordEnd(lineText, p.character));
  const assertion = await assertionItems(
    analyzer,
    store,
    doc,
    requestAt(analyzer.get(doc).file, p),
    p,
    lineText,
    before,
  );
  if (assertion) return assertion;
  const optionValue = /^\s*(?:#|\/\/)\s*@([\w-]+)\s+([\w-]*)$/.exec(before);
  if (optionValue) {
    const values = optionValues(optionValue[1]);
    const start = p.character - optionValue[2].length;
    return values.map((v) => ({
      label: v,
      kind: CompletionItemKind.EnumMember,
      textEdit: { range: range(p.line, start, wordEnd(lineText, p.character)), newText: v },
    }));
  }
  const reference = /\{\{\s*([\w.$-]*)$/.exec(before);
  if (reference) return variableItems(analyzer, doc, p, lineText, p.character - reference[1].length);
  const a = analyzer.get(doc);
  // Past the last line of a request (an empty body being started) still belongs to it.
  const request = requestAt(a.file, p) ?? a.file.requests.findLast((r) => r.range.start.line <= p.line);
  if (!request) return [];
  if (request.url && p.line === request.url.range.start.line) {
    if (p.character < request.url.range.start.character) return [];
    return urlItems(analyzer, store, doc, request, p, options);
  }
  const requestLine = request.requestLine?.start.line ?? Number.MAX_SAFE_INTEGER;
  const headersEnd = request.bodyRange?.start.line ?? Number.MAX_SAFE_INTEGER;
  const inHeaders = p.line > requestLine && p.line < headersEnd && !isAfterBlank(doc, requestLine, p.line);
  if (inHeaders) {
    if (before.includes(":") || /^\s*(#|\/\/)/.test(before)) return [];
    const start = before.length - before.trimStart().length;
    return commonHeaders.map((h) => ({
      label: h,
      kind: CompletionItemKind.Property,
      textEdit: { range: range(p.line, start, wordEnd(lineText, p.character)), newText: `${h}: ` },
    }));
  }
  if (p.line > requestLine) return bodyItems(analyzer, store, doc, request, p, lineText);
  return [];
}

function isAfterBlank(doc: TextDocument, from: number, line: number): boolean {
  for (let l = from + 1; l < line; l++) {
    if (doc.getText(range(l, 0, Number.MAX_SAFE_INTEGER)).trim() === "") return true;
  }
  return false;
}

function wordEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length && /[\w-]/.test(text[i])) i++;
  return i;
}

/**
 * `{{` references: file variables, names captured by requests of the file, the selected
 * environment's variables, system variables.
 */
function variableItems(
  analyzer: Analyzer,
  doc: TextDocument,
  p: Position,
  lineText: string,
  start: number,
): CompletionItem[] {
  let end = start;
  while (end < lineText.length && /[\w.$-]/.test(lineText[end])) end++;
  const closed = lineText.slice(end).trimStart().startsWith("}}");
  const edit = (name: string) => ({ range: range(p.line, start, end), newText: closed ? name : `${name}}}` });
  const items: CompletionItem[] = [];
  const seen = new Set<string>();
  for (const v of analyzer.get(doc).file.variables) {
    if (seen.has(v.name.text)) continue;
    seen.add(v.name.text);
    items.push({
      label: v.name.text,
      kind: CompletionItemKind.Variable,
      detail: v.value.text,
      textEdit: edit(v.name.text),
    });
  }
  for (const [name, sources] of captureSources(analyzer.get(doc).file)) {
    if (seen.has(name)) continue;
    seen.add(name);
    items.push({
      label: name,
      kind: CompletionItemKind.Variable,
      detail: `captured by ${sources.map((s) => s.label).join(", ")}`,
      textEdit: edit(name),
    });
  }
  for (const [name, value] of Object.entries(analyzer.environment(doc))) {
    if (seen.has(name)) continue;
    seen.add(name);
    items.push({
      label: name,
      kind: CompletionItemKind.Variable,
      detail: `environment: ${value}`,
      textEdit: edit(name),
    });
  }
  for (const [name, spec] of Object.entries(systemVariables)) {
    const usage = [name, ...spec.args].join(" ");
    items.push({
      label: name,
      kind: CompletionItemKind.Function,
      detail: usage,
      documentation: spec.doc,
      textEdit: edit(spec.args.length > 0 ? `${name} ` : name),
    });
  }
  return items;
}

/** The values an option takes, when they are a fixed set. */
function optionValues(name: string): string[] {
  const flag = curlFlags.find((f) => f.name === name);
  if (!flag) return [];
  if (flag.kind === "bool") return ["true", "false"];
  switch (name) {
    case "protocol":
      return ["connect", "grpc", "grpcweb"];
    case "reflect-protocol":
      return ["grpc-v1", "grpc-v1alpha"];
    case "log-format":
      return ["text", "color", "json"];
    default:
      return [];
  }
}

function optionItems(p: Position, start: number, end: number): CompletionItem[] {
  const items: CompletionItem[] = [
    {
      label: "name",
      kind: CompletionItemKind.Property,
      detail: "names the request",
      textEdit: { range: range(p.line, start, end), newText: "name " },
    },
  ];
  items.push(
    {
      label: "assert",
      kind: CompletionItemKind.Property,
      detail: "@assert <path> <operator> [value]",
      documentation:
        'What the response must be, such as `# @assert status == ok` or `# @assert messages[0].name == "x"`.',
      textEdit: { range: range(p.line, start, end), newText: "assert " },
    },
    {
      label: "capture",
      kind: CompletionItemKind.Property,
      detail: "@capture <name> = <path>",
      documentation:
        "Keeps a value of the response as {{name}} for the requests after this one, such as `# @capture token = message.token`.",
      textEdit: { range: range(p.line, start, end), newText: "capture " },
    },
  );
  for (const flag of curlFlags) {
    if (flag.name === "help") continue;
    items.push({
      label: flag.name,
      kind: CompletionItemKind.Property,
      detail: flag.kind === "bool" ? `--${flag.name}` : `--${flag.name} <${flag.kind}>`,
      documentation: flag.help,
      textEdit: {
        range: range(p.line, start, end),
        newText: flag.kind === "bool" ? flag.name : `${flag.name} `,
      },
    });
  }
  return items;
}

async function urlItems(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  request: RpcRequest,
  p: Position,
  options: CompletionOptions,
): Promise<CompletionItem[] | CompletionList> {
  const url = request.url;
  if (!url) return [];
  const offset = p.character - url.range.start.character;
  const text = url.text;
  const path = pathStart(text);
  if (offset <= path) return [];
  const info = await analyzer.request(doc, request);
  if (!info.schema) return [];
  const segStart = text.lastIndexOf("/", offset - 1) + 1;
  let segEnd = text.indexOf("/", offset);
  if (segEnd < 0) segEnd = text.length;
  const replace = range(p.line, url.range.start.character + segStart, url.range.start.character + segEnd);
  const previous = text.slice(text.lastIndexOf("/", segStart - 2) + 1, segStart - 1);
  if (segStart - 1 > path && previous.includes(".")) {
    const lookup = await store.findService(info.schema, previous);
    const service = lookup.service;
    if (!service) return [];
    return service.methods.map((m) => ({
      label: m.name,
      kind: CompletionItemKind.Method,
      detail: `${m.methodKind.replace("_", " ")}: ${m.input.typeName} → ${m.output.typeName}`,
      tags: m.deprecated ? [CompletionItemTag.Deprecated] : undefined,
      textEdit: { range: replace, newText: m.name },
    }));
  }
  const schema = info.schema;
  if (options.editRangeDefault) {
    // Thousands of services in a large schema: one shared edit range instead of one per item keeps
    // the answer small (the items are built once per schema).
    const items = await store.remember(`service-items\u0000${schema.key}`, async () =>
      (await store.listServices(schema)).map(
        (s): CompletionItem => ({ label: s, kind: CompletionItemKind.Module }),
      ),
    );
    return { isIncomplete: false, itemDefaults: { editRange: replace }, items };
  }
  const services = await store.listServices(schema);
  return services.map((s) => ({
    label: s,
    kind: CompletionItemKind.Module,
    textEdit: { range: replace, newText: s },
  }));
}

async function bodyItems(
  analyzer: Analyzer,
  store: SchemaStore,
  doc: TextDocument,
  request: RpcRequest,
  p: Position,
  lineText: string,
): Promise<CompletionItem[]> {
  const info = await analyzer.request(doc, request);
  const method = info.method;
  if (!method || !info.schema) return [];
  return documentItems(store, info.schema, request, method.input, p, lineText);
}

/**
 * Completion in the JSON documents of `request` (a request's body, or a stub's documents), each a
 * message of type `message`: field names, values, and outside any document a skeleton of the message.
 */
export async function documentItems(
  store: SchemaStore,
  schema: RequestSchema,
  request: Pick<RpcRequest, "body">,
  message: DescMessage,
  p: Position,
  lineText: string,
): Promise<CompletionItem[]> {
  const indent = /^\s*/.exec(lineText)?.[0] ?? "";
  if (!documentAt(request, p)) {
    // Outside any document: a skeleton of the whole message.
    return [
      skeletonItem(
        message.typeName,
        messageSkeleton(message),
        indent,
        range(p.line, p.character, p.character),
      ),
    ];
  }
  const place = bodyPlace(request, message, p);
  if (!place) return [];
  const { part, location } = place;
  const token = location.token;
  const at = (offset: number) => positionIn(part.text, part.range.start, offset);
  const tokenRange: Range | undefined = token ? { start: at(token.start), end: at(token.end) } : undefined;
  let replace = tokenRange ?? { start: p, end: p };
  if (token && tokenRange && !/^[\w$.-]*"?$/.test(part.text.slice(place.offset, token.end))) {
    // `"qu` before more text: the string runs on to the next quote; replace only what was typed.
    replace = { start: tokenRange.start, end: p };
  }
  if (location.role === "key") {
    if (!place.message) return [];
    const keyMessage = place.message;
    const present = new Set<string>();
    if (location.container.kind === "object") {
      for (const m of location.container.members) if (m.key !== token) present.add(m.key.value);
    }
    const comments = await fieldComments(store, schema, keyMessage);
    const quoted = token?.kind === "string" && !token.bare;
    const items: CompletionItem[] = [];
    for (const f of keyMessage.fields) {
      if (present.has(f.jsonName) || present.has(f.name)) continue;
      const comment = comments.get(f.name);
      items.push({
        label: f.jsonName,
        kind: CompletionItemKind.Field,
        detail: fieldTypeText(f),
        documentation: comment ? { kind: "markdown", value: comment } : undefined,
        tags: f.deprecated ? [CompletionItemTag.Deprecated] : undefined,
        filterText: quoted ? `"${f.jsonName}"` : f.jsonName,
        sortText: String(f.number).padStart(6, "0"),
        textEdit: { range: replace, newText: `"${f.jsonName}": ` },
      });
    }
    return items;
  }
  const field = place.field;
  if (!field) return [];
  if (
    !place.element &&
    field.fieldKind !== "scalar" &&
    field.fieldKind !== "enum" &&
    field.fieldKind !== "message"
  ) {
    // The value of a list or map field as a whole.
    if (field.kind !== "field") return [];
    return [skeletonItem(fieldTypeText(field), fieldSkeleton(field), indent, replace)];
  }
  return valueItems(field, indent, replace);
}

function valueItems(field: DescField | DescExtension, indent: string, replace: Range): CompletionItem[] {
  if (field.enum) {
    return field.enum.values.map((v) => ({
      label: `"${v.name}"`,
      kind: CompletionItemKind.EnumMember,
      detail: `${field.enum?.typeName} = ${v.number}`,
      tags: v.deprecated ? [CompletionItemTag.Deprecated] : undefined,
      textEdit: { range: replace, newText: `"${v.name}"` },
    }));
  }
  if (field.message)
    return [
      skeletonItem(field.message.typeName, messageSkeleton(field.message as DescMessage), indent, replace),
    ];
  if (field.scalar === 8 /* BOOL */) {
    return ["true", "false"].map((v) => ({
      label: v,
      kind: CompletionItemKind.Value,
      textEdit: { range: replace, newText: v },
    }));
  }
  return [];
}

function skeletonItem(typeName: string, value: unknown, indent: string, replace: Range): CompletionItem {
  const text = JSON.stringify(value, null, 2).replace(/\n/g, `\n${indent}`);
  return {
    label: text.length > 40 ? `${text.replace(/\s+/g, " ").slice(0, 37)}...` : text.replace(/\s+/g, " "),
    kind: CompletionItemKind.Snippet,
    detail: `skeleton of ${typeName}`,
    insertTextFormat: InsertTextFormat.PlainText,
    textEdit: { range: replace, newText: text },
  };
}
