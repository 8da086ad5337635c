// Turns a parsed stub file into stubs the mock can serve, checked against the schema: the method
// exists, request bodies and answer messages are messages of the method's input and output types
// (unknown fields named, with the field meant), error details are known message types, a unary
// method answers one message. Every problem is an error at file:line:col; a file with an error yields
// no stubs (the server keeps the last good set, see stub-set.ts).
//
// Request bodies become JSON subsets in the form the request is compared in: proto JSON names, enum
// names, 64-bit integers as strings, only the fields the stub gives (stub-match.ts).
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import {
  type DescField,
  type DescMessage,
  type DescMethod,
  fromJson,
  type JsonObject,
  type JsonValue,
  toJson,
} from "@bufbuild/protobuf";
import { stubDocumentProblems, unknownDetailTypeProblem, unknownMethodProblem } from "../analysis/stub-check";
import { closest } from "../closest";
import { errorMessage } from "../errors";
import {
  type ParsedStub,
  parseStubFile,
  type StubAnswer,
  type StubDocument,
  type StubPredicate,
} from "../rpcfile/stub-syntax";
import type { Diagnostic, RpcVariable } from "../rpcfile/types";
import { VariableResolver } from "../rpcfile/variables";
import type { MockSchema } from "./mock-schema";

export interface LoadedAnswer extends StubAnswer {
  /** `# @when {subset}`, normalized. */
  whenSubset?: JsonValue;
}

export interface Stub {
  /** `file:line` of the request line (1-based), and the name when it has one: how logs name it. */
  readonly label: string;
  readonly file: string;
  /** 1-based line of the request line. */
  readonly line: number;
  readonly name?: string;
  readonly method: DescMethod;
  readonly priority: number;
  readonly perMessage: boolean;
  /** Position among all loaded stubs (earlier first among equal priorities). */
  order: number;
  /** Request headers that must be present: lower-case name and value. */
  readonly headers: readonly { name: string; value: string; line: number }[];
  /** Request messages that must match (subsets), in order, with their 1-based lines. */
  readonly body: readonly { subset: JsonValue; line: number }[];
  readonly predicates: readonly StubPredicate[];
  readonly answers: readonly LoadedAnswer[];
  /** File variables, resolved per call in answers. */
  readonly variables: readonly RpcVariable[];
}

export interface LoadedStubFile {
  stubs: Stub[];
  /** `file:line:col: message`, errors first. */
  problems: string[];
  errors: number;
}

/** `file:line:col: message` of a diagnostic (1-based). */
export function formatDiagnostic(file: string, d: Diagnostic): string {
  const where = `${file}:${d.range.start.line + 1}:${d.range.start.character + 1}`;
  return `${where}: ${d.severity === "error" ? "" : `${d.severity}: `}${d.message}`;
}

/** Parses and checks one stub file's text. `file` is how messages name it. */
export function loadStubText(
  text: string,
  file: string,
  schema: MockSchema,
  env: NodeJS.ProcessEnv = process.env,
): LoadedStubFile {
  const parsed = parseStubFile(text);
  const diagnostics = [...parsed.diagnostics];
  const at = (line: number, character: number, message: string, code = "schema") =>
    diagnostics.push({
      severity: "error",
      message,
      range: { start: { line, character }, end: { line, character } },
      code,
    });
  const resolver = new VariableResolver({
    fileVariables: parsed.variables,
    environment: {},
    processEnv: env,
    dotenv: {},
  });
  const stubs: Stub[] = [];
  for (const p of parsed.stubs) {
    const stub = loadStub(p, file, schema, parsed.variables, resolver, diagnostics, at);
    if (stub) stubs.push(stub);
  }
  diagnostics.sort(
    (a, b) =>
      (a.severity === "error" ? 0 : 1) - (b.severity === "error" ? 0 : 1) ||
      a.range.start.line - b.range.start.line ||
      a.range.start.character - b.range.start.character,
  );
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  return {
    stubs: errors > 0 ? [] : stubs,
    problems: diagnostics.map((d) => formatDiagnostic(file, d)),
    errors,
  };
}

function loadStub(
  p: ParsedStub,
  file: string,
  schema: MockSchema,
  variables: RpcVariable[],
  resolver: VariableResolver,
  diagnostics: Diagnostic[],
  at: Report,
): Stub | undefined {
  const method = schema.methods.get(p.method);
  if (!method) {
    diagnostics.push(unknownMethodProblem(p.method, p.line, schema.methods.keys()));
    return undefined;
  }
  const resolveText = (doc: StubDocument): string | undefined => {
    if (doc.include) {
      try {
        return readFileSync(resolve(dirname(file), doc.include), "utf8");
      } catch (err) {
        at(doc.line, doc.character, `cannot read ${doc.include}: ${errorMessage(err)}`, "include");
        return undefined;
      }
    }
    const before = diagnostics.length;
    const text = resolver.resolve(
      {
        text: doc.text,
        range: {
          start: { line: doc.line, character: doc.character },
          end: { line: doc.line, character: doc.character },
        },
      },
      diagnostics,
    );
    return diagnostics.length > before ? undefined : text;
  };
  /** Reports a document's problems as a message of `desc` (stub-check.ts); true when it has errors. */
  const faulty = (doc: StubDocument, desc: DescMessage): boolean => {
    const problems = stubDocumentProblems(doc, desc);
    diagnostics.push(...problems);
    return problems.some((d) => d.severity === "error");
  };
  const body: { subset: JsonValue; line: number }[] = [];
  for (const doc of p.body) {
    if (faulty(doc, method.input)) continue;
    const text = resolveText(doc);
    if (text === undefined) continue;
    const subset = subsetOf(text, method.input, schema, (m) =>
      at(doc.line, doc.character, m, "invalid-body"),
    );
    if (subset !== undefined) body.push({ subset, line: doc.line + 1 });
  }
  if (method.methodKind === "unary" || method.methodKind === "server_streaming") {
    if (p.body.length > 1) {
      at(
        p.body[1].line,
        p.body[1].character,
        `${p.method} takes one request message; this stub gives ${p.body.length}`,
        "too-many-messages",
      );
    }
  }
  const headers = p.headers.map((h) => ({
    name: h.name.text.toLowerCase(),
    value: resolver.resolve(h.value, diagnostics),
    line: h.range.start.line + 1,
  }));
  if (p.perMessage && method.methodKind !== "bidi_streaming") {
    at(
      p.line,
      0,
      `@per-message answers each incoming message of a bidirectional stream; ${p.method} is ${method.methodKind.replace("_", " ")} (a client stream answers once, after its last message)`,
      "invalid-per-message",
    );
  }
  const answers = p.answers.map((a) => loadAnswer(a, p.method, method, schema, resolveText, at, faulty));
  return {
    label: `${file}:${p.line + 1}${p.name ? ` "${p.name}"` : ""}`,
    file,
    line: p.line + 1,
    name: p.name,
    method,
    priority: p.priority,
    perMessage: p.perMessage,
    order: 0,
    headers,
    body,
    predicates: p.predicates,
    answers,
    variables,
  };
}

type Report = (line: number, character: number, message: string, code?: string) => void;

/** One answer of a stub, checked against the method: its messages, their count, its error details. */
function loadAnswer(
  a: StubAnswer,
  methodName: string,
  method: DescMethod,
  schema: MockSchema,
  resolveText: (doc: StubDocument) => string | undefined,
  at: Report,
  faulty: (doc: StubDocument, desc: DescMessage) => boolean,
): LoadedAnswer {
  const answer: LoadedAnswer = { ...a };
  for (const m of a.messages) {
    if (faulty(m, method.output)) continue;
    if (m.include) {
      const text = resolveText(m);
      if (text === undefined) continue;
      m.text = text;
      m.include = undefined;
    }
    if (m.text.includes("{{")) continue; // checked when it is answered
    checkMessage(m.text, method.output, schema, (msg) => at(m.line, m.character, msg, "invalid-body"));
  }
  const single = method.methodKind === "unary" || method.methodKind === "client_streaming";
  if (single && a.messages.length > 1) {
    at(
      a.messages[1].line,
      a.messages[1].character,
      `${methodName} answers one message; this answer gives ${a.messages.length}`,
      "too-many-messages",
    );
  }
  if (single && a.status !== "ok" && a.messages.length > 0) {
    at(
      a.messages[0].line,
      a.messages[0].character,
      `${methodName} answers a message or an error, not both: remove the message or answer ok`,
      "message-with-error",
    );
  }
  checkDetails(a, schema, at, faulty);
  if (a.whenBody && !faulty(a.whenBody, method.input)) {
    const w = a.whenBody;
    answer.whenSubset = subsetOf(w.text, method.input, schema, (m) =>
      at(w.line, w.character, m, "invalid-body"),
    );
  }
  return answer;
}

/** An answer's error details: known message types, valid messages, and only with an error status. */
function checkDetails(
  a: StubAnswer,
  schema: MockSchema,
  at: Report,
  faulty: (doc: StubDocument, desc: DescMessage) => boolean,
): void {
  for (const d of a.details) {
    const desc = schema.message(d.type);
    if (!desc) {
      const names = [...schema.registry].filter((t) => t.kind === "message").map((t) => t.typeName);
      const problem = unknownDetailTypeProblem(d.type, d.json.line, d.typeCharacter, names);
      at(d.json.line, d.typeCharacter, problem.message, problem.code);
      continue;
    }
    if (!faulty(d.json, desc) && !d.json.text.includes("{{")) {
      checkMessage(d.json.text, desc, schema, (msg) =>
        at(d.json.line, d.json.character, msg, "invalid-detail"),
      );
    }
  }
  if (a.status === "ok" && a.details.length > 0) {
    at(
      a.details[0].json.line,
      0,
      'error details go with an error status: write `>>> not_found "message"`',
      "details-without-error",
    );
  }
}

/** Checks that JSON text is a message of the type; reports why not. */
export function checkMessage(
  text: string,
  desc: DescMessage,
  schema: MockSchema,
  report: (message: string) => void,
): boolean {
  let json: JsonValue;
  try {
    json = JSON.parse(text) as JsonValue;
  } catch (err) {
    report(`invalid JSON: ${errorMessage(err)}`);
    return false;
  }
  try {
    fromJson(desc, json, { registry: schema.registry });
    return true;
  } catch (err) {
    report(`not a ${desc.typeName}: ${withHint(errorMessage(err), desc)}`);
    return false;
  }
}

/** Adds the field meant to fromJson's "unknown field" error. */
function withHint(message: string, desc: DescMessage): string {
  const m = /key "([^"]+)" is unknown/.exec(message) ?? /unknown field "?([\w.]+)"?/i.exec(message);
  if (!m) return message;
  const names = desc.fields.flatMap((f) => [f.name, f.jsonName]);
  const [hint] = closest(m[1], names);
  return hint ? `${message} (did you mean ${hint}?)` : message;
}

/**
 * The request subset a stub's body gives, in the form requests are compared in: read as the input
 * type (so proto names, enum numbers and the like are accepted), written back as proto JSON, keeping
 * only the fields the stub wrote.
 */
function subsetOf(
  text: string,
  desc: DescMessage,
  schema: MockSchema,
  report: (message: string) => void,
): JsonValue | undefined {
  let json: JsonValue;
  try {
    json = JSON.parse(text) as JsonValue;
  } catch (err) {
    report(`invalid JSON: ${errorMessage(err)}`);
    return undefined;
  }
  try {
    const message = fromJson(desc, json, { registry: schema.registry });
    const full = toJson(desc, message, { registry: schema.registry, alwaysEmitImplicit: true });
    return pickGiven(json, full, desc);
  } catch (err) {
    report(`not a ${desc.typeName}: ${withHint(errorMessage(err), desc)}`);
    return undefined;
  }
}

function fieldOf(desc: DescMessage, key: string): DescField | undefined {
  return desc.fields.find((f) => f.jsonName === key || f.name === key);
}

/** The members of `full` (normalized) that `given` (as written) names, recursively for messages. */
function pickGiven(given: JsonValue, full: JsonValue, desc: DescMessage): JsonValue {
  if (given === null || typeof given !== "object" || Array.isArray(given)) return full;
  if (full === null || typeof full !== "object" || Array.isArray(full)) return full;
  if (desc.typeName.startsWith("google.protobuf.")) return full;
  const out: JsonObject = {};
  for (const key of Object.keys(given)) {
    const field = fieldOf(desc, key);
    if (!field) continue;
    const value = (full as JsonObject)[field.jsonName];
    if (value === undefined) continue;
    const g = (given as JsonObject)[key];
    if (field.fieldKind === "message") out[field.jsonName] = pickGiven(g, value, field.message);
    else if (field.fieldKind === "list" && field.message && Array.isArray(g) && Array.isArray(value)) {
      const m = field.message;
      out[field.jsonName] = value.map((v, i) => pickGiven(g[i] ?? null, v, m));
    } else out[field.jsonName] = value;
  }
  return out;
}
