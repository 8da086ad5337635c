// Checks a call's outcome against a request's `@assert` options and takes its `@capture` values.
// Pure and synchronous: the outcome is a plain object (outcome.ts), the assertions come from the
// parser (../rpcfile/assertion-syntax.ts, which documents the language), and every result carries a
// one-line message such as `expected messages[0].greeting == "Hello, world", got "Hello, x"`.
//
// A request passes when every check holds. Unless an assertion is about `status` or `error`, one
// implicit check comes first: the status must be ok (as a request without assertions has always
// been judged), so asserting on a failing call's error is how a failure is expected. A call that
// failed outside the RPC (no connection, no status) checks nothing: every check is "not run".
//
// Unset fields: the messages hold every field without presence at its default and leave out every
// field with presence that is not set (call-outcome.ts), so `exists` asks "is it set?" and a path to
// an unset field leads to nothing (README: "Request files that test themselves").
import type { JsonValue } from "@bufbuild/protobuf";
import type {
  AssertValue,
  PathSegment,
  ResponsePath,
  RpcAssertion,
  RpcCapture,
} from "../rpcfile/assertion-syntax";
import type { Range } from "../rpcfile/types";
import type { CallOutcome, HeaderPair, OutcomeDetail } from "./outcome";
import type { SnapshotDifference } from "./snapshot";

export interface CheckResult {
  /** `status` is the implicit "status == ok" check; `snapshot` compares with a stored response (snapshot.ts). */
  kind: "assert" | "capture" | "status" | "snapshot";
  /** As written: `messages[0].greeting == "Hello"`, `token = message.token`, `status == ok`. */
  text: string;
  /** Where: the option's line (the request line for the implicit status check). */
  range: Range;
  passed: boolean;
  /** Whether the path led to a value. */
  found: boolean;
  /**
   * The check was not evaluated: the call failed outside the RPC (it is not passed, and is counted
   * apart from the checks that failed).
   */
  notRun?: true;
  /** The value at the path, when found. */
  actual?: JsonValue;
  /** One line: what was expected and what was found, or what held. */
  message: string;
  /** A snapshot check that failed: every difference, by path. */
  diff?: SnapshotDifference[];
}

export interface Evaluation {
  /** The implicit status check (when there is one), the assertions in order, then the captures. */
  checks: CheckResult[];
  /** Captured variables: strings as they are, other values as JSON text. */
  captured: Record<string, string>;
  passed: boolean;
}

/** What the evaluator needs of a request. */
export interface RequestChecks {
  assertions: readonly RpcAssertion[];
  captures: readonly RpcCapture[];
  /** Where the implicit status check is reported. */
  range: Range;
}

type Lookup = { found: true; value: JsonValue } | { found: false; reason: string };

/** Evaluates every assertion and capture of a request against a call's outcome. */
export function evaluateChecks(outcome: CallOutcome, request: RequestChecks): Evaluation {
  const checks: CheckResult[] = [];
  const aboutStatus = request.assertions.some((a) => a.path.root === "status" || a.path.root === "error");
  if (outcome.status === undefined && outcome.failure !== undefined) {
    return { checks: notRun(outcome.failure, request, !aboutStatus), captured: {}, passed: false };
  }
  if (!aboutStatus) checks.push(implicitStatus(outcome, request.range));
  for (const a of request.assertions) checks.push(evaluateAssertion(outcome, a));
  const captured: Record<string, string> = {};
  for (const c of request.captures) {
    const text = `${c.name.text} = ${c.path.text}`;
    const found = lookupPath(outcome, c.path);
    if (!found.found) {
      checks.push({
        kind: "capture",
        text,
        range: c.range,
        passed: false,
        found: false,
        message: `cannot capture ${c.name.text}: ${c.path.text} leads to nothing (${found.reason})`,
      });
      continue;
    }
    captured[c.name.text] = typeof found.value === "string" ? found.value : JSON.stringify(found.value);
    checks.push({
      kind: "capture",
      text,
      range: c.range,
      passed: true,
      found: true,
      actual: found.value,
      message: `captured ${c.name.text} = ${show(found.value)}`,
    });
  }
  return { checks, captured, passed: checks.every((c) => c.passed) };
}

/** Every check of a request whose call failed outside the RPC: none could be checked. */
function notRun(failure: string, request: RequestChecks, implicit: boolean): CheckResult[] {
  const message = `not checked: the call failed: ${failure}`;
  const base = { passed: false, found: false, notRun: true as const, message };
  const out: CheckResult[] = [];
  if (implicit) out.push({ ...base, kind: "status", text: "status == ok", range: request.range });
  for (const a of request.assertions) {
    out.push({ ...base, kind: "assert", text: assertionText(a), range: a.range });
  }
  for (const c of request.captures) {
    out.push({ ...base, kind: "capture", text: `${c.name.text} = ${c.path.text}`, range: c.range });
  }
  return out;
}

function assertionText(a: RpcAssertion): string {
  return `${a.path.text} ${a.operator.text}${a.value ? ` ${a.value.text}` : ""}`;
}

function implicitStatus(outcome: CallOutcome, range: Range): CheckResult {
  const base = { kind: "status" as const, text: "status == ok", range };
  if (outcome.status === "ok") {
    // Written out rather than spread from `base`: V8 spreads this shape at ~15 µs a call, and a load
    // run checks it on every response.
    return {
      kind: "status",
      text: "status == ok",
      range,
      passed: true,
      found: true,
      actual: "ok",
      message: "status == ok",
    };
  }
  if (outcome.status === undefined) {
    return {
      ...base,
      passed: false,
      found: false,
      message: `the call failed: ${outcome.failure ?? "no RPC status"}`,
    };
  }
  const detail = outcome.error?.message ? `: ${outcome.error.message}` : "";
  return {
    ...base,
    passed: false,
    found: true,
    actual: outcome.status,
    message: `expected status == ok, got ${outcome.status}${detail} (assert on status or error to expect a failure)`,
  };
}

/** Evaluates one assertion. */
export function evaluateAssertion(outcome: CallOutcome, a: RpcAssertion): CheckResult {
  const found = lookupPath(outcome, a.path);
  const op = a.operator.text;
  const text = assertionText(a);
  // The result written out, not spread from a base object: V8 spreads these at ~15 µs a check, and a
  // load run checks every response.
  const range = a.range;
  const result = (passed: boolean, why?: string): CheckResult => {
    let message = text;
    if (!passed) {
      const got = found.found ? show(found.value) : `nothing (${found.reason})`;
      const unsetNotNull = !found.found && a.value?.kind === "json" && a.value.json === null;
      const note =
        why ?? (unsetNotNull ? `an unset field is left out, not null: write ${a.path.text} !exists` : "");
      message = `expected ${text}, got ${got}${note ? `: ${note}` : ""}`;
    }
    return found.found
      ? { kind: "assert", text, range, passed, found: true, actual: found.value, message }
      : { kind: "assert", text, range, passed, found: false, message };
  };
  if (op === "exists") return result(found.found);
  if (op === "!exists") return result(!found.found);
  if (!found.found) return result(false);
  const actual = found.value;
  const v = a.value as AssertValue;
  if (v.kind === "type") return result(jsonType(actual) === v.type, `it is ${article(jsonType(actual))}`);
  if (v.kind === "regex") {
    const subject =
      typeof actual === "string" ? actual : typeof actual === "number" ? String(actual) : undefined;
    if (subject === undefined) return result(false, `${op} applies to a string`);
    const hit = new RegExp(v.source, v.flags).test(subject);
    return result(op === "matches" ? hit : !hit);
  }
  if (v.json === undefined) {
    return result(false, `the value ${v.text} holds references that were not resolved`);
  }
  const want = v.json;
  switch (op) {
    case "==":
      return result(jsonEquals(actual, want, v.numberText));
    case "!=":
      return result(!jsonEquals(actual, want, v.numberText));
    case "<":
    case "<=":
    case ">":
    case ">=": {
      const order = compareOrder(actual, want, v.numberText);
      if (order === undefined) {
        return result(
          false,
          `${op} compares two numbers or two strings, and this is ${article(jsonType(actual))} against ${article(jsonType(want))}`,
        );
      }
      const holds = op === "<" ? order < 0 : op === "<=" ? order <= 0 : op === ">" ? order > 0 : order >= 0;
      return result(holds);
    }
    case "contains":
    case "!contains": {
      const hit = contains(actual, want);
      if (hit === undefined) {
        return result(
          false,
          `contains applies to a string (with a string), an array, or an object (with an object), and this is ${article(jsonType(actual))} against ${article(jsonType(want))}`,
        );
      }
      return result(op === "contains" ? hit : !hit);
    }
    default:
      return result(false, `unknown operator ${op}`);
  }
}

/** The value a path leads to in an outcome, or why it leads to nothing. */
export function lookupPath(outcome: CallOutcome, path: ResponsePath): Lookup {
  if (outcome.failure !== undefined && outcome.status === undefined && path.root !== "duration") {
    return { found: false, reason: `the call failed: ${outcome.failure}` };
  }
  const root = rootValue(outcome, path);
  if (!root.found) return root;
  const caseless = path.root === "headers" || path.root === "trailers";
  return walk(root.value, path.segments, 0, path.root, caseless);
}

function rootValue(outcome: CallOutcome, path: ResponsePath): Lookup {
  switch (path.root) {
    case "status":
      return outcome.status === undefined
        ? { found: false, reason: "there is no RPC status" }
        : { found: true, value: outcome.status };
    case "duration":
      return { found: true, value: outcome.durationMs };
    case "messages":
      return { found: true, value: [...outcome.messages] };
    case "message":
      return outcome.messages.length === 0
        ? { found: false, reason: "there is no response message" }
        : { found: true, value: outcome.messages[outcome.messages.length - 1] };
    case "headers":
      return { found: true, value: headerObject(outcome.headers) };
    case "trailers":
      return { found: true, value: headerObject(outcome.trailers) };
    case "error":
      if (!outcome.error) return { found: false, reason: "the status is ok: there is no error" };
      return {
        found: true,
        value: {
          code: outcome.error.code,
          message: outcome.error.message,
          details: outcome.error.details.map(detailJson),
        },
      };
  }
}

/** Headers as an object by lowercase name; repeated values joined with ", ", as HTTP combines them. */
function headerObject(pairs: readonly HeaderPair[]): { [k: string]: JsonValue } {
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    out[key] = Object.hasOwn(out, key) ? `${out[key]}, ${value}` : value;
  }
  return out;
}

const typeUrlPrefix = "type.googleapis.com/";

/** A detail as the JSON of a google.protobuf.Any: `@type`, then its fields (or its bytes as `value`). */
function detailJson(d: OutcomeDetail): JsonValue {
  const head: { [k: string]: JsonValue } = { "@type": `${typeUrlPrefix}${d.type}` };
  if (d.json !== undefined && d.json !== null && typeof d.json === "object" && !Array.isArray(d.json)) {
    return { ...head, ...d.json };
  }
  if (d.json !== undefined) return { ...head, value: d.json };
  return d.value !== undefined ? { ...head, value: d.value } : head;
}

function segmentText(s: PathSegment): string {
  switch (s.kind) {
    case "key":
      return s.quoted ? `[${JSON.stringify(s.key)}]` : `.${s.key}`;
    case "index":
      return `[${s.index}]`;
    case "each":
      return "[*]";
    case "type":
      return `[${s.typeName}]`;
  }
}

function walk(
  value: JsonValue,
  segments: readonly PathSegment[],
  i: number,
  where: string,
  caseless: boolean,
): Lookup {
  if (i >= segments.length) return { found: true, value };
  const s = segments[i];
  const next = `${where}${segmentText(s)}`;
  const go = (v: JsonValue) => walk(v, segments, i + 1, next, false);
  switch (s.kind) {
    case "key": {
      if (isObject(value)) {
        const key = caseless ? s.key.toLowerCase() : s.key;
        if (Object.hasOwn(value, key)) return go(value[key]);
        return { found: false, reason: `${where} has no member ${JSON.stringify(s.key)}${members(value)}` };
      }
      if (s.key === "length" && !s.quoted) {
        if (Array.isArray(value)) return go(value.length);
        if (typeof value === "string") return go(Array.from(value).length);
      }
      return {
        found: false,
        reason: `${where} is ${describe(value)}, which has no member ${JSON.stringify(s.key)}`,
      };
    }
    case "index": {
      if (Array.isArray(value)) {
        const at = s.index < 0 ? value.length + s.index : s.index;
        if (at < 0 || at >= value.length) {
          return {
            found: false,
            reason: `${where} has ${value.length} element${value.length === 1 ? "" : "s"}`,
          };
        }
        return go(value[at]);
      }
      if (isObject(value) && s.index >= 0 && Object.hasOwn(value, String(s.index))) {
        // A map with integer keys: proto JSON writes its keys as strings.
        return go(value[String(s.index)]);
      }
      return { found: false, reason: `${where} is ${describe(value)}, not an array` };
    }
    case "each": {
      if (!Array.isArray(value))
        return { found: false, reason: `${where} is ${describe(value)}, not an array` };
      const out: JsonValue[] = [];
      for (const item of value) {
        const r = walk(item, segments, i + 1, `${next}`, false);
        if (r.found) out.push(r.value);
      }
      return { found: true, value: out };
    }
    case "type": {
      if (!Array.isArray(value))
        return { found: false, reason: `${where} is ${describe(value)}, not an array` };
      const url = `${typeUrlPrefix}${s.typeName}`;
      const hit = value.find((d) => isObject(d) && (d["@type"] === url || d["@type"] === s.typeName));
      if (hit === undefined) {
        const types = value
          .map((d) =>
            isObject(d) && typeof d["@type"] === "string" ? d["@type"].replace(typeUrlPrefix, "") : "?",
          )
          .join(", ");
        return {
          found: false,
          reason: `no detail of type ${s.typeName}${types ? ` (the details: ${types})` : " (there are no details)"}`,
        };
      }
      return go(hit);
    }
  }
}

function members(o: { [k: string]: JsonValue }): string {
  const keys = Object.keys(o);
  if (keys.length === 0) return "; it is empty";
  const shown = keys.slice(0, 8).join(", ");
  return `; its members: ${shown}${keys.length > 8 ? `, … (${keys.length})` : ""}`;
}

function isObject(v: JsonValue | undefined): v is { [k: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function jsonType(v: JsonValue): "string" | "number" | "boolean" | "object" | "array" | "null" {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v as "string" | "number" | "boolean" | "object";
}

function article(type: string): string {
  return type === "array" || type === "object" ? `an ${type}` : type === "null" ? "null" : `a ${type}`;
}

function describe(v: JsonValue): string {
  return `${article(jsonType(v))}${typeof v === "object" && v !== null ? "" : ` (${show(v)})`}`;
}

/** A value for a message: JSON, cut after 200 characters. */
export function show(v: JsonValue): string {
  const text = JSON.stringify(v) ?? "null";
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** A number, or a string holding one (64-bit integers are strings in proto JSON), exactly when integral. */
function numeric(v: JsonValue, text?: string): bigint | number | undefined {
  const source = text ?? (typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : undefined);
  if (source === undefined || source === "") return undefined;
  if (typeof v !== "number" && typeof v !== "string") return undefined;
  if (/^-?[0-9]+$/.test(source)) return BigInt(source);
  if (typeof v === "number" && text === undefined) return v;
  if (!/^-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(source)) return undefined;
  return Number(source);
}

function compareNumbers(a: bigint | number, b: bigint | number): number {
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0;
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Equality of JSON values: objects by their members (in any order), arrays element by element, and
 * a number equal to a string holding the same number (proto JSON writes 64-bit integers as strings,
 * and accepts either form).
 */
export function jsonEquals(actual: JsonValue, expected: JsonValue, expectedText?: string): boolean {
  if (typeof actual === "number" || typeof expected === "number") {
    if (typeof actual === "number" && typeof expected === "number" && expectedText === undefined) {
      return actual === expected;
    }
    const a = numeric(actual);
    const b = numeric(expected, typeof expected === "number" ? expectedText : undefined);
    return a !== undefined && b !== undefined && compareNumbers(a, b) === 0;
  }
  if (actual === null || expected === null) return actual === expected;
  if (Array.isArray(actual) || Array.isArray(expected)) {
    if (!Array.isArray(actual) || !Array.isArray(expected) || actual.length !== expected.length) return false;
    return actual.every((x, i) => jsonEquals(x, expected[i]));
  }
  if (typeof actual === "object" || typeof expected === "object") {
    if (!isObject(actual) || !isObject(expected)) return false;
    const keys = Object.keys(expected);
    if (Object.keys(actual).length !== keys.length) return false;
    return keys.every((k) => Object.hasOwn(actual, k) && jsonEquals(actual[k], expected[k]));
  }
  return actual === expected;
}

/** Order of two numbers (or numeric strings against a number) or two strings; undefined otherwise. */
function compareOrder(actual: JsonValue, expected: JsonValue, expectedText?: string): number | undefined {
  if (typeof actual === "string" && typeof expected === "string") {
    return actual < expected ? -1 : actual > expected ? 1 : 0;
  }
  if (typeof actual !== "number" && typeof expected !== "number") return undefined;
  const a = numeric(actual);
  const b = numeric(expected, typeof expected === "number" ? expectedText : undefined);
  if (a === undefined || b === undefined) return undefined;
  return compareNumbers(a, b);
}

/** Whether `actual` contains `expected`; undefined when the types do not go together. */
function contains(actual: JsonValue, expected: JsonValue): boolean | undefined {
  if (typeof actual === "string") return typeof expected === "string" ? actual.includes(expected) : undefined;
  if (Array.isArray(actual)) return actual.some((x) => jsonEquals(x, expected));
  if (isObject(actual)) {
    if (!isObject(expected)) return undefined;
    return Object.keys(expected).every((k) => Object.hasOwn(actual, k) && jsonEquals(actual[k], expected[k]));
  }
  return undefined;
}
