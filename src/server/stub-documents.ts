// Completion and hover in a stub file of `protocall mock`: inside a stub's JSON documents, the
// fields and values of the type that document is — the method's input type for the request part and
// `# @when` subsets, its output type for the answers, the detail's type for `# @detail TYPE {…}` —
// with the same items and hovers as a request's body (completion.ts documentItems, hover.ts
// documentHover), from the schema the editor checks stubs against (core/analysis/stub-diagnostics.ts).
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { DescMessage, DescMethod } from "@bufbuild/protobuf";
import type { CompletionItem, Hover } from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";
import type { RequestSchema, SchemaStore } from "../core/analysis/schema-store";
import { detailTypes, findStubMethod, stubSchema } from "../core/analysis/stub-diagnostics";
import { positionIn } from "../core/rpcfile/parse";
import { type ParsedStub, parseStubFile, type StubDocument } from "../core/rpcfile/stub-syntax";
import type { Position, RpcBodyPart } from "../core/rpcfile/types";
import { documentItems } from "./completion";
import { documentHover } from "./hover";

/** Which type a stub document is: the method's input or output, or a detail's type. */
type DocumentType = "input" | "output" | { detail: string };

interface Found {
  stub: ParsedStub;
  part: RpcBodyPart & { kind: "json" };
  type: DocumentType;
}

function partOf(doc: StubDocument): RpcBodyPart & { kind: "json" } {
  const start = { line: doc.line, character: doc.character };
  return {
    kind: "json",
    text: doc.text,
    range: { start, end: positionIn(doc.text, start, doc.text.length) },
  };
}

function contains(part: RpcBodyPart, p: Position): boolean {
  const { start, end } = part.range;
  if (p.line < start.line || p.line > end.line) return false;
  if (p.line === start.line && p.character < start.character) return false;
  return !(p.line === end.line && p.character > end.character);
}

/** The stub document at a position, with the type it is. */
function documentAtPosition(text: string, p: Position): Found | undefined {
  for (const stub of parseStubFile(text).stubs) {
    const candidates: [StubDocument, DocumentType][] = [
      ...stub.body.map((d): [StubDocument, DocumentType] => [d, "input"]),
      ...stub.answers.flatMap((a) => [
        ...(a.whenBody ? [[a.whenBody, "input"] as [StubDocument, DocumentType]] : []),
        ...a.messages.map((d): [StubDocument, DocumentType] => [d, "output"]),
        ...a.details.map((d): [StubDocument, DocumentType] => [d.json, { detail: d.type }]),
      ]),
    ];
    for (const [doc, type] of candidates) {
      if (doc.include) continue;
      const part = partOf(doc);
      if (contains(part, p)) return { stub, part, type };
    }
  }
  return undefined;
}

/** The stub document at a position, its schema and its message type. */
async function placeOf(
  store: SchemaStore,
  doc: TextDocument,
  p: Position,
): Promise<{ found: Found; schema: RequestSchema; message: DescMessage } | undefined> {
  const found = documentAtPosition(doc.getText(), p);
  if (!found) return undefined;
  const baseDir = doc.uri.startsWith("file:") ? dirname(fileURLToPath(doc.uri)) : process.cwd();
  const schema = await stubSchema(store, baseDir);
  const { method } = await findStubMethod(store, schema, found.stub.method);
  const message = method && (await typeOf(schema, method, found.type));
  return message ? { found, schema, message } : undefined;
}

/** Completion items at a position of a stub file (none outside its JSON documents). */
export async function stubCompletion(
  store: SchemaStore,
  doc: TextDocument,
  p: Position,
  lineText: string,
): Promise<CompletionItem[]> {
  const at = await placeOf(store, doc, p);
  return at ? documentItems(store, at.schema, { body: [at.found.part] }, at.message, p, lineText) : [];
}

/** The hover at a position of a stub file: a field or enum value of its JSON documents. */
export async function stubHover(store: SchemaStore, doc: TextDocument, p: Position): Promise<Hover | null> {
  const at = await placeOf(store, doc, p);
  return at ? documentHover(store, at.schema, { body: [at.found.part] }, at.message, p) : null;
}

async function typeOf(
  schema: RequestSchema,
  method: DescMethod,
  type: DocumentType,
): Promise<DescMessage | undefined> {
  if (type === "input") return method.input;
  if (type === "output") return method.output;
  return (await detailTypes(schema, [type.detail])).get(type.detail);
}
