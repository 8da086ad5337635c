// The `@assert` and `@capture` request options, which make a request file test its responses:
//
//   # @assert <path> <operator> [<value>]      # @assert messages[0].greeting == "Hello, world"
//   # @capture <name> = <path>                 # @capture token = message.token
//
//   path     = root { "." key | "[" index "]" | "[*]" | "[" string "]" | "[" type "]" }
//   root     = status | message | messages | headers | trailers | error | duration
//   key      = [A-Za-z_][A-Za-z0-9_]*   a member of a JSON object (proto JSON names); on an array or a
//                                       string, `length` is its length
//   index    = -?[0-9]+                 an element of an array (negative: from the end)
//   "[*]"                               every element: the rest of the path is applied to each, and the
//                                       results form an array
//   string   = a JSON string            a member with any name: headers["content-type"]
//   type     = a message's full name    only right after error.details: the first detail of that type
//   operator = == != < <= > >= contains !contains matches !matches exists !exists isType
//   value    = a JSON literal, or a bare word (letters, digits, _ . -) that stands for a string
//              (`status == not_found`, `message.color == COLOR_RED`); `{{...}}` references are
//              resolved before the request is sent; after matches a /regex/flags, after isType one of
//              string number boolean object array null; exists and !exists take none.
//
// Every operator but exists and !exists fails when the path leads to nothing.
//
// The parsing is total: every problem is a diagnostic with the range of the offending part, and a
// line with a problem yields no assertion. Evaluation is in ../assertions/evaluate.ts; the
// language server checks paths against the method's output type (src/core/analysis/assertion-check.ts).
import type { JsonValue } from "@bufbuild/protobuf";
import type { Diagnostic, Range, Token } from "./types";

export type PathRoot = "status" | "message" | "messages" | "headers" | "trailers" | "error" | "duration";

/** The roots of a path and what each names, for messages, completion and hover. */
export const pathRoots: Readonly<Record<PathRoot, string>> = {
  status: "The RPC status code name: ok, not_found, invalid_argument, … (a string).",
  message: "The last response message as proto JSON (for unary and client-streaming methods, the response).",
  messages: "Every response message as proto JSON, in order (an array; `messages.length` counts them).",
  headers:
    'The response headers by name (case-insensitive), repeated values joined with ", ": `headers["content-type"]`.',
  trailers: 'The response trailers by name (case-insensitive), as headers: `trailers["x-request-cost"]`.',
  error:
    "The RPC error, absent when the status is ok: `error.code` (a code name), `error.message`, `error.details` (each detail as JSON with its @type; `error.details[google.rpc.BadRequest]` is the first of that type).",
  duration: "How long the call took, in milliseconds (a number).",
};

/** Members of `error`. */
export const errorMembers: Readonly<Record<string, string>> = {
  code: "The status code name, such as not_found.",
  message: "The error message (a string; empty when the server sent none).",
  details: "The error details: each as its JSON with an @type member; [TYPE] selects the first of a type.",
};

/** The RPC status codes by number, as their names appear in `status` and `error.code`. */
export const statusCodeNames: readonly string[] = [
  "ok",
  "canceled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

export type AssertOperator =
  | "=="
  | "!="
  | "<"
  | "<="
  | ">"
  | ">="
  | "contains"
  | "!contains"
  | "matches"
  | "!matches"
  | "exists"
  | "!exists"
  | "isType";

/** Each operator and what it checks, for messages, completion and hover. */
export const assertOperators: Readonly<Record<AssertOperator, string>> = {
  "==": "Equal as JSON values (objects and arrays deeply; a number equals a string holding the same number, as 64-bit integers are strings in proto JSON).",
  "!=": "Not equal (the opposite of ==).",
  "<": "Less than: two numbers (or strings holding numbers), or two strings in code-unit order.",
  "<=": "Less than or equal (see <).",
  ">": "Greater than (see <).",
  ">=": "Greater than or equal (see <).",
  contains:
    "A string holds the text, an array holds an element equal to the value, or an object holds every member of the value (an object).",
  "!contains": "The opposite of contains.",
  matches: "A string (or a number's JSON text) matches the regular expression /source/flags.",
  "!matches": "The opposite of matches.",
  exists: "The path leads to a value (null included).",
  "!exists": "The path leads to nothing.",
  isType: "The value's JSON type: string, number, boolean, object, array or null.",
};

export type JsonType = "string" | "number" | "boolean" | "object" | "array" | "null";
export const jsonTypes: readonly JsonType[] = ["string", "number", "boolean", "object", "array", "null"];

export type PathSegment =
  /** `.name` or `["name"]`. */
  | { kind: "key"; key: string; quoted: boolean; range: Range }
  /** `[0]`, `[-1]`. */
  | { kind: "index"; index: number; range: Range }
  /** `[*]`. */
  | { kind: "each"; range: Range }
  /** `[google.rpc.BadRequest]` after `error.details`. */
  | { kind: "type"; typeName: string; range: Range };

export interface ResponsePath {
  /** The path as written. */
  text: string;
  range: Range;
  root: PathRoot;
  rootRange: Range;
  segments: PathSegment[];
}

export type AssertValue =
  | {
      kind: "json";
      text: string;
      range: Range;
      /** The value; undefined while the text holds `{{...}}` references (see resolveAssertionValue). */
      json?: JsonValue;
      /** A bare word (`ok`, `COLOR_RED`) standing for a string. */
      bare: boolean;
      /** The digits of a number as written, for exact comparison of 64-bit integers. */
      numberText?: string;
    }
  | { kind: "regex"; text: string; range: Range; source: string; flags: string }
  | { kind: "type"; text: string; range: Range; type: JsonType };

/** `# @assert <path> <operator> [<value>]`. */
export interface RpcAssertion {
  /** The option's value: path, operator and value as written. */
  expression: Token;
  /** The whole option line. */
  range: Range;
  path: ResponsePath;
  operator: { text: AssertOperator; range: Range };
  value?: AssertValue;
}

/** `# @capture <name> = <path>`. */
export interface RpcCapture {
  name: Token;
  path: ResponsePath;
  /** The whole option line. */
  range: Range;
}

const keyPattern = /^[A-Za-z_][A-Za-z0-9_]*/;
const typePattern = /^[A-Za-z_][A-Za-z0-9_.]*/;
const bareWord = /^[A-Za-z_][\w.-]*$/;
const captureName = /^[A-Za-z_][\w.-]*$/;
const regexFlags = /^[dgimsuvy]*$/;

/** A diagnostic-producing reader of one option value, with positions on its line. */
class Reader {
  readonly diagnostics: Diagnostic[] = [];
  constructor(
    readonly text: string,
    readonly line: number,
    readonly start: number,
  ) {}

  range(from: number, to: number): Range {
    return {
      start: { line: this.line, character: this.start + from },
      end: { line: this.line, character: this.start + Math.max(to, from) },
    };
  }

  error(message: string, from: number, to: number, code = "invalid-assertion"): undefined {
    this.diagnostics.push({ severity: "error", message, range: this.range(from, to), code });
    return undefined;
  }
}

/** Parses the value of `# @assert`. Problems are diagnostics; then there is no assertion. */
export function parseAssertion(
  value: Token | undefined,
  lineRange: Range,
): { assertion?: RpcAssertion; diagnostics: Diagnostic[] } {
  if (!value || value.text.trim() === "") {
    return {
      diagnostics: [
        {
          severity: "error",
          message:
            '@assert needs a path, an operator and (usually) a value: write # @assert status == ok or # @assert messages[0].name == "x"',
          range: lineRange,
          code: "missing-value",
        },
      ],
    };
  }
  const r = new Reader(value.text, value.range.start.line, value.range.start.character);
  const text = value.text;
  const path = readPath(r, 0);
  if (!path) return { diagnostics: r.diagnostics };
  let i = path.end;
  while (i < text.length && /\s/.test(text[i])) i++;
  if (i >= text.length) {
    r.error(
      `@assert needs an operator after the path: ${Object.keys(assertOperators).join(" ")}`,
      path.end,
      path.end,
      "missing-operator",
    );
    return { diagnostics: r.diagnostics };
  }
  const opStart = i;
  while (i < text.length && !/\s/.test(text[i])) i++;
  const opText = text.slice(opStart, i);
  if (!Object.hasOwn(assertOperators, opText)) {
    const hint = nearestName(opText, Object.keys(assertOperators));
    r.error(
      `unknown operator "${opText}"${hint ? ` (did you mean ${hint}?)` : ""}; operators: ${Object.keys(assertOperators).join(" ")}`,
      opStart,
      i,
      "unknown-operator",
    );
    return { diagnostics: r.diagnostics };
  }
  const operator = { text: opText as AssertOperator, range: r.range(opStart, i) };
  while (i < text.length && /\s/.test(text[i])) i++;
  const valueStart = i;
  const valueText = text.slice(valueStart).trimEnd();
  const valueRange = r.range(valueStart, valueStart + valueText.length);
  const assertion: RpcAssertion = { expression: value, range: lineRange, path: path.path, operator };
  const op = operator.text;
  if (op === "exists" || op === "!exists") {
    if (valueText !== "") {
      r.error(`${op} takes no value; remove ${JSON.stringify(valueText)}`, valueStart, text.length);
    }
    return finish(r, assertion);
  }
  if (valueText === "") {
    const example =
      op === "matches" || op === "!matches"
        ? "/^Hello/"
        : op === "isType"
          ? "string"
          : op === "contains" || op === "!contains"
            ? '"text"'
            : 'a JSON value such as 3 or "text"';
    r.error(`${op} needs a value after it, such as ${example}`, opStart, i, "missing-value");
    return { diagnostics: r.diagnostics };
  }
  if (op === "isType") {
    if (!(jsonTypes as readonly string[]).includes(valueText)) {
      const hint = nearestName(valueText, jsonTypes);
      r.error(
        `isType takes a JSON type: ${jsonTypes.join(", ")}${hint ? ` (did you mean ${hint}?)` : ""}; found ${JSON.stringify(valueText)}`,
        valueStart,
        valueStart + valueText.length,
      );
      return { diagnostics: r.diagnostics };
    }
    assertion.value = { kind: "type", text: valueText, range: valueRange, type: valueText as JsonType };
    return finish(r, assertion);
  }
  if (op === "matches" || op === "!matches") {
    const regex = readRegex(r, valueText, valueStart);
    if (!regex) return { diagnostics: r.diagnostics };
    assertion.value = { kind: "regex", text: valueText, range: valueRange, ...regex };
    return finish(r, assertion);
  }
  const json = readJsonValue(valueText);
  if (json === undefined) {
    r.error(
      `invalid value ${valueText}: a value is JSON (a "string" in double quotes, a number, true, false, null, [an array] or {an object}), or a bare word such as ok`,
      valueStart,
      valueStart + valueText.length,
      "invalid-value",
    );
    return { diagnostics: r.diagnostics };
  }
  assertion.value = { kind: "json", text: valueText, range: valueRange, ...json };
  return finish(r, assertion);
}

function finish(r: Reader, assertion: RpcAssertion): { assertion?: RpcAssertion; diagnostics: Diagnostic[] } {
  checkCodeValue(r, assertion);
  return r.diagnostics.length > 0 ? { diagnostics: r.diagnostics } : { assertion, diagnostics: [] };
}

/** `status` and `error.code` are code names: a value that is none is a mistake the parser can see. */
function checkCodeValue(r: Reader, a: RpcAssertion): void {
  const p = a.path;
  const isCode =
    (p.root === "status" && p.segments.length === 0) ||
    (p.root === "error" &&
      p.segments.length === 1 &&
      p.segments[0].kind === "key" &&
      p.segments[0].key === "code");
  const v = a.value;
  const op = a.operator.text;
  if (!isCode) return;
  if (op === "<" || op === "<=" || op === ">" || op === ">=") {
    r.diagnostics.push({
      severity: "error",
      message: `${p.text} is a code name such as ok or not_found: compare it with == or !=`,
      range: a.operator.range,
      code: "invalid-assertion",
    });
    return;
  }
  if ((op !== "==" && op !== "!=") || v?.kind !== "json" || v.json === undefined) return;
  const value = v.json;
  if (typeof value === "number") {
    const name = statusCodeNames[value];
    r.diagnostics.push({
      severity: "error",
      message: `${p.text} is a code name, not a number${name ? `: write ${name}` : `; codes: ${statusCodeNames.join(", ")}`}`,
      range: v.range,
      code: "invalid-status",
      ...(name ? { replacement: name } : {}),
    });
  } else if (typeof value !== "string" || !statusCodeNames.includes(value)) {
    const hint = typeof value === "string" ? nearestName(value, statusCodeNames) : undefined;
    r.diagnostics.push({
      severity: "error",
      message: `unknown status code ${typeof value === "string" ? value : JSON.stringify(value)}${hint ? ` (did you mean ${hint}?)` : ""}; codes: ${statusCodeNames.join(", ")}`,
      range: v.range,
      code: "invalid-status",
      ...(hint ? { replacement: v.bare ? hint : JSON.stringify(hint) } : {}),
    });
  }
}

/** Parses the value of `# @capture`: `<name> = <path>`. */
export function parseCapture(
  value: Token | undefined,
  lineRange: Range,
): { capture?: RpcCapture; diagnostics: Diagnostic[] } {
  const usage = "write # @capture <name> = <path>, such as # @capture token = message.token";
  if (!value || value.text.trim() === "") {
    return {
      diagnostics: [
        {
          severity: "error",
          message: `@capture needs a variable name and a path: ${usage}`,
          range: lineRange,
          code: "missing-value",
        },
      ],
    };
  }
  const r = new Reader(value.text, value.range.start.line, value.range.start.character);
  const text = value.text;
  const eq = text.indexOf("=");
  if (eq < 0) {
    r.error(`@capture needs "=" between the variable name and the path: ${usage}`, 0, text.length);
    return { diagnostics: r.diagnostics };
  }
  const nameText = text.slice(0, eq).trimEnd();
  if (!captureName.test(nameText)) {
    r.error(
      `invalid variable name ${JSON.stringify(nameText)}: use letters, digits, _ . and -, starting with a letter or _`,
      0,
      Math.max(nameText.length, 1),
      "invalid-variable-name",
    );
    return { diagnostics: r.diagnostics };
  }
  let i = eq + 1;
  while (i < text.length && /\s/.test(text[i])) i++;
  if (i >= text.length) {
    r.error(`@capture needs a path after "=": ${usage}`, eq, eq + 1, "missing-value");
    return { diagnostics: r.diagnostics };
  }
  const path = readPath(r, i);
  if (!path) return { diagnostics: r.diagnostics };
  const rest = text.slice(path.end).trim();
  if (rest !== "") {
    const at = text.indexOf(rest, path.end);
    r.error(
      `unexpected ${JSON.stringify(rest)} after the path: a capture is a name and a path only`,
      at,
      at + rest.length,
    );
    return { diagnostics: r.diagnostics };
  }
  const name: Token = { text: nameText, range: r.range(0, nameText.length) };
  return { capture: { name, path: path.path, range: lineRange }, diagnostics: [] };
}

/**
 * Reads a path starting at `from`; it ends at the first whitespace outside a quoted name. Undefined
 * (with a diagnostic) when it is invalid.
 */
function readPath(r: Reader, from: number): { path: ResponsePath; end: number } | undefined {
  const text = r.text;
  const rootMatch = keyPattern.exec(text.slice(from));
  if (!rootMatch) {
    const end = wordEnd(text, from);
    return r.error(
      `expected a path such as messages[0].name, found ${JSON.stringify(text.slice(from, end))}; a path starts with ${Object.keys(pathRoots).join(", ")}`,
      from,
      end,
      "invalid-path",
    );
  }
  const rootText = rootMatch[0];
  if (!Object.hasOwn(pathRoots, rootText)) {
    const hint = nearestName(rootText, Object.keys(pathRoots));
    return r.error(
      `unknown path start "${rootText}"${hint ? ` (did you mean ${hint}?)` : ""}; a path starts with ${Object.keys(pathRoots).join(", ")}`,
      from,
      from + rootText.length,
      "unknown-path-root",
    );
  }
  const root = rootText as PathRoot;
  const segments: PathSegment[] = [];
  let i = from + rootText.length;
  while (i < text.length && !/\s/.test(text[i])) {
    const c = text[i];
    if (c === ".") {
      const m = keyPattern.exec(text.slice(i + 1));
      if (!m) {
        const end = wordEnd(text, i + 1);
        return r.error(
          end > i + 1
            ? `${JSON.stringify(text.slice(i + 1, end))} is not a name: write names with other characters in brackets and quotes, such as ["content-type"]`
            : `a name must follow "." in a path`,
          i,
          Math.max(end, i + 1),
          "invalid-path",
        );
      }
      segments.push({ kind: "key", key: m[0], quoted: false, range: r.range(i + 1, i + 1 + m[0].length) });
      i += 1 + m[0].length;
      continue;
    }
    if (c === "[") {
      const seg = readBracket(r, i, root, segments);
      if (!seg) return undefined;
      segments.push(seg.segment);
      i = seg.end;
      continue;
    }
    const last = segments[segments.length - 1];
    if (c === "-" && last?.kind === "key" && !last.quoted) {
      // `headers.content-type`: a name with a dash, which only brackets and quotes can hold.
      const dashed = /^[\w-]*/.exec(text.slice(i))?.[0] ?? "";
      const name = last.key + dashed;
      const from = last.range.start.character - r.start - 1;
      r.diagnostics.push({
        severity: "error",
        message: `a name with "-" goes in brackets and quotes: write ["${name}"]`,
        range: r.range(from, i + dashed.length),
        code: "invalid-path",
        replacement: `[${JSON.stringify(name)}]`,
      });
      return undefined;
    }
    const end = wordEnd(text, i);
    return r.error(
      `unexpected ${JSON.stringify(text.slice(i, end))} in the path: names follow ".", indexes and quoted names go in brackets (messages[0], headers["content-type"])`,
      i,
      end,
      "invalid-path",
    );
  }
  const path: ResponsePath = {
    text: text.slice(from, i),
    range: r.range(from, i),
    root,
    rootRange: r.range(from, from + rootText.length),
    segments,
  };
  if (!checkPathShape(r, path)) return undefined;
  return { path, end: i };
}

function readBracket(
  r: Reader,
  at: number,
  root: PathRoot,
  before: PathSegment[],
): { segment: PathSegment; end: number } | undefined {
  const text = r.text;
  const i = at + 1;
  const close = (segment: PathSegment, contentEnd: number) => {
    if (text[contentEnd] !== "]") {
      return r.error('expected "]" to close the bracket', at, Math.max(contentEnd, at + 1), "invalid-path");
    }
    return { segment, end: contentEnd + 1 };
  };
  const c = text[i];
  if (c === '"') {
    let j = i + 1;
    for (; j < text.length; j++) {
      if (text[j] === "\\") j++;
      else if (text[j] === '"') break;
    }
    if (j >= text.length) return r.error("this quoted name is not closed", i, text.length, "invalid-path");
    let key: string;
    try {
      key = JSON.parse(text.slice(i, j + 1)) as string;
    } catch {
      return r.error("invalid quoted name: it is a JSON string", i, j + 1, "invalid-path");
    }
    return close({ kind: "key", key, quoted: true, range: r.range(i, j + 1) }, j + 1);
  }
  if (c === "*") return close({ kind: "each", range: r.range(i, i + 1) }, i + 1);
  const number = /^-?[0-9]+/.exec(text.slice(i));
  if (number) {
    const index = Number(number[0]);
    if (!Number.isSafeInteger(index)) {
      return r.error(`index ${number[0]} is too large`, i, i + number[0].length, "invalid-path");
    }
    return close({ kind: "index", index, range: r.range(i, i + number[0].length) }, i + number[0].length);
  }
  const type = typePattern.exec(text.slice(i));
  if (type) {
    const last = before[before.length - 1];
    const afterDetails =
      root === "error" && before.length === 1 && last?.kind === "key" && last.key === "details";
    if (!afterDetails) {
      return r.error(
        `[${type[0]}] without quotes names an error detail type and goes right after error.details; for a member named ${type[0]} write .${type[0]} or ["${type[0]}"]`,
        i,
        i + type[0].length,
        "invalid-path",
      );
    }
    return close(
      { kind: "type", typeName: type[0], range: r.range(i, i + type[0].length) },
      i + type[0].length,
    );
  }
  return r.error(
    'expected an index ([0], [-1]), [*], a quoted name (["name"]) or, after error.details, a type name',
    at,
    Math.max(wordEnd(text, i), at + 1),
    "invalid-path",
  );
}

/** What the parser can check without a schema: members of roots that have fixed shapes. */
function checkPathShape(r: Reader, path: ResponsePath): boolean {
  const [first, second] = path.segments;
  const at = (s: PathSegment) => s.range;
  const fail = (message: string, range: Range) => {
    r.diagnostics.push({ severity: "error", message, range, code: "invalid-path" });
    return false;
  };
  switch (path.root) {
    case "status":
    case "duration":
      if (first)
        return fail(
          `${path.root} is a ${path.root === "status" ? "code name" : "number"}: it has no members`,
          at(first),
        );
      return true;
    case "headers":
    case "trailers":
      if (first && first.kind !== "key")
        return fail(`${path.root} are looked up by name: ${path.root}["name"]`, at(first));
      if (second && !(second.kind === "key" && second.key === "length"))
        return fail(
          `a ${path.root === "headers" ? "header" : "trailer"} value is a string: only .length may follow it`,
          at(second),
        );
      return true;
    case "error":
      if (first) {
        if (first.kind !== "key" || !Object.hasOwn(errorMembers, first.key)) {
          const name = first.kind === "key" ? first.key : undefined;
          const hint = name !== undefined ? nearestName(name, Object.keys(errorMembers)) : undefined;
          r.diagnostics.push({
            severity: "error",
            message: `error has the members ${Object.keys(errorMembers).join(", ")}${name !== undefined ? `, not "${name}"` : ""}${hint ? ` (did you mean ${hint}?)` : ""}`,
            range: at(first),
            code: "unknown-path-member",
            ...(hint ? { replacement: hint } : {}),
          });
          return false;
        }
        if (first.key === "code" && second)
          return fail("error.code is a code name: it has no members", at(second));
      }
      return true;
    default:
      return true;
  }
}

function readRegex(r: Reader, text: string, start: number): { source: string; flags: string } | undefined {
  if (!text.startsWith("/")) {
    return r.error(
      `matches takes a regular expression between slashes, such as /^Hello/ or /world/i; found ${text}`,
      start,
      start + text.length,
      "invalid-regex",
    );
  }
  let inClass = false;
  let i = 1;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    else if (c === "/" && !inClass) break;
  }
  if (i >= text.length) {
    return r.error("the regular expression has no closing /", start, start + text.length, "invalid-regex");
  }
  const source = text.slice(1, i);
  const flags = text.slice(i + 1);
  if (!regexFlags.test(flags)) {
    return r.error(
      `invalid regular expression flags "${flags}": use d g i m s u v y`,
      start + i + 1,
      start + text.length,
      "invalid-regex",
    );
  }
  try {
    new RegExp(source, flags);
  } catch (err) {
    const reason =
      err instanceof Error ? err.message.replace(/^Invalid regular expression: /, "") : String(err);
    return r.error(`invalid regular expression: ${reason}`, start, start + text.length, "invalid-regex");
  }
  return { source, flags };
}

/**
 * Reads a value: JSON, or a bare word standing for a string. `{{...}}` references leave the JSON
 * undefined until they are resolved. Undefined for anything else.
 */
export function readJsonValue(
  text: string,
): { json?: JsonValue; bare: boolean; numberText?: string } | undefined {
  if (text.includes("{{")) return { bare: false };
  try {
    const json = JSON.parse(text) as JsonValue;
    return typeof json === "number" ? { json, bare: false, numberText: text.trim() } : { json, bare: false };
  } catch {
    if (bareWord.test(text)) return { json: text, bare: true };
    return undefined;
  }
}

function wordEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && !/\s/.test(text[i])) i++;
  return i;
}

/** The candidate closest to `name` (case-insensitive edit distance up to 2, or a third of it), if any. */
export function nearestName(name: string, candidates: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const c of candidates) {
    if (c === name) continue;
    const d = c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8 || a.length > 128 || b.length > 128) return 99;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/**
 * Fills in the values of assertions that hold `{{...}}` references, substituting them with
 * `resolve` (which reports undefined variables itself). The result is JSON; a value that is exactly
 * one reference and does not read as JSON is taken as a string. Other invalid results are
 * diagnostics, and their assertions are left out.
 */
export function resolveAssertionValues(
  assertions: readonly RpcAssertion[],
  resolve: (token: Token, diagnostics: Diagnostic[]) => string,
  diagnostics: Diagnostic[],
): RpcAssertion[] {
  const out: RpcAssertion[] = [];
  for (const a of assertions) {
    const v = a.value;
    if (v?.kind !== "json" || v.json !== undefined) {
      out.push(a);
      continue;
    }
    const before = diagnostics.length;
    const text = resolve({ text: v.text, range: v.range }, diagnostics);
    if (diagnostics.length > before) continue;
    if (text.includes("{{")) {
      // A reference kept for a capture that has not run yet (variables.ts, pendingCaptures).
      out.push(a);
      continue;
    }
    const read = readJsonValue(text);
    const single = /^\{\{[^{}]*\}\}$/.test(v.text.trim());
    if (read?.json !== undefined) {
      out.push({ ...a, value: { ...v, ...read } });
    } else if (single) {
      out.push({ ...a, value: { ...v, json: text, bare: false } });
    } else {
      diagnostics.push({
        severity: "error",
        message: `after substituting variables, the value ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)} is not JSON; put references in strings in quotes, as in == "{{name}}"`,
        range: v.range,
        code: "invalid-value",
      });
    }
  }
  return out;
}
