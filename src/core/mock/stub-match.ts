// Which stub answers a call, and when none does, why: each stub's checks run in order (its headers,
// its request bodies as JSON subsets, its `@match` predicates) and the first that fails is its
// reason, written as the predicate it stands for with what the request had:
//   greet.rpc:12: request.name == "world", got "wrld"
// The predicates are evaluated by the assertion evaluator (../assertions/evaluate.ts) on the request
// seen as a call outcome: `message` is the request, `messages` every request message, `headers` the
// request headers. So a stub's predicates mean exactly what the same text means in an `@assert`.
import type { JsonValue } from "@bufbuild/protobuf";
import { evaluateAssertion, jsonEquals, show } from "../assertions/evaluate";
import type { CallOutcome, HeaderPair } from "../assertions/outcome";
import type { StubPredicate } from "../rpcfile/stub-syntax";
import type { LoadedAnswer, Stub } from "./stub-load";

/** A call's request as stubs see it. */
export interface RequestView {
  readonly headers: readonly HeaderPair[];
  /** Request messages as proto JSON with default values included (one for unary calls). */
  readonly messages: readonly JsonValue[];
}

export interface StubVerdict {
  readonly stub: Stub;
  readonly matched: boolean;
  /** How many checks held before the first that failed (how close the stub came). */
  readonly passed: number;
  /** The first failed check: `file:line: predicate, got value`. */
  readonly failure?: string;
}

/** The request as a call outcome, so that `message`, `messages` and `headers` paths apply. */
export function outcomeOf(request: RequestView): CallOutcome {
  return { status: "ok", headers: request.headers, trailers: [], messages: request.messages, durationMs: 0 };
}

function headerValue(headers: readonly HeaderPair[], name: string): string | undefined {
  const values = headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
  return values.length > 0 ? values.join(", ") : undefined;
}

/** The first place where `actual` does not hold the subset `expected`, or undefined when it does. */
export function subsetMismatch(
  expected: JsonValue,
  actual: JsonValue | undefined,
  path: string,
): { path: string; expected: JsonValue; actual: JsonValue | undefined } | undefined {
  if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual) || actual === undefined) {
      return { path, expected, actual };
    }
    for (const [key, value] of Object.entries(expected)) {
      const member = /^[A-Za-z_]\w*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
      const miss = subsetMismatch(value, (actual as Record<string, JsonValue>)[key], member);
      if (miss) return miss;
    }
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return { path, expected, actual };
    for (let i = 0; i < expected.length; i++) {
      const miss = subsetMismatch(expected[i], actual[i], `${path}[${i}]`);
      if (miss) return miss;
    }
    return undefined;
  }
  return actual !== undefined && jsonEquals(actual, expected) ? undefined : { path, expected, actual };
}

/** Checks a predicate; the failure as `predicate, got value`, or undefined when it holds. */
export function predicateFailure(p: StubPredicate, outcome: CallOutcome): string | undefined {
  const result = evaluateAssertion(outcome, p.assertion);
  if (result.passed) return undefined;
  return `${p.text}, got ${result.found ? show(result.actual as JsonValue) : "nothing"}`;
}

/** Runs one stub's checks against a request. */
export function judgeStub(stub: Stub, request: RequestView, outcome = outcomeOf(request)): StubVerdict {
  let passed = 0;
  const fail = (line: number, text: string): StubVerdict => ({
    stub,
    matched: false,
    passed,
    failure: `${stub.file}:${line}: ${text}`,
  });
  for (const h of stub.headers) {
    const got = headerValue(request.headers, h.name);
    if (got !== h.value) {
      return fail(
        h.line,
        `headers[${JSON.stringify(h.name)}] == ${JSON.stringify(h.value)}, got ${got === undefined ? "nothing" : JSON.stringify(got)}`,
      );
    }
    passed++;
  }
  const single = request.messages.length <= 1 && stub.body.length <= 1;
  for (let i = 0; i < stub.body.length; i++) {
    const root = single ? "request" : `requests[${i}]`;
    const miss = subsetMismatch(stub.body[i].subset, request.messages[i], root);
    if (miss) {
      const got = miss.actual === undefined ? "nothing" : show(miss.actual);
      return fail(stub.body[i].line, `${miss.path} == ${show(miss.expected)}, got ${got}`);
    }
    passed++;
  }
  for (const p of stub.predicates) {
    const failure = predicateFailure(p, outcome);
    if (failure) return fail(p.line + 1, failure);
    passed++;
  }
  return { stub, matched: true, passed };
}

/** Stubs in the order they are tried: higher priority first, then file order. */
export function byPriority(stubs: readonly Stub[]): Stub[] {
  return [...stubs].sort((a, b) => b.priority - a.priority || a.order - b.order);
}

export interface Selection {
  /** The stub that answers, if any. */
  stub?: Stub;
  /** When none matched: the closest stubs (most checks held first), at most three. */
  closest: StubVerdict[];
}

/** The first stub (in priority order) whose checks all hold. */
export function selectStub(stubs: readonly Stub[], request: RequestView): Selection {
  const outcome = outcomeOf(request);
  const misses: StubVerdict[] = [];
  for (const stub of stubs) {
    const verdict = judgeStub(stub, request, outcome);
    if (verdict.matched) return { stub, closest: [] };
    misses.push(verdict);
  }
  const closest = misses
    .map((v, i) => ({ v, i }))
    .sort((a, b) => b.v.passed - a.v.passed || a.i - b.i)
    .slice(0, 3)
    .map(({ v }) => v);
  return { closest };
}

/** The "nothing matched" message: the method, then the closest stubs and the check each failed. */
export function noMatchMessage(method: string, closest: readonly StubVerdict[], total: number): string {
  const reasons = closest.map((v) => v.failure).join("; ");
  const more = total > closest.length ? ` (closest ${closest.length} of ${total} stubs)` : "";
  return `no stub of ${method} matches this request${more}: ${reasons}`;
}

/**
 * The answer of a per-message stub to one incoming message (index `n` of the stream): the first
 * answer whose `@when` conditions hold; when no answer has conditions, the Nth (the last repeats).
 */
export function answerForMessage(
  stub: Stub,
  message: JsonValue,
  n: number,
  headers: readonly HeaderPair[],
): LoadedAnswer | undefined {
  const conditional = stub.answers.some((a) => a.when.length > 0 || a.whenSubset !== undefined);
  if (!conditional) return stub.answers[Math.min(n, stub.answers.length - 1)];
  const outcome = outcomeOf({ headers, messages: [message] });
  for (const a of stub.answers) {
    if (a.whenSubset !== undefined && subsetMismatch(a.whenSubset, message, "request")) continue;
    if (a.when.some((p) => predicateFailure(p, outcome) !== undefined)) continue;
    return a;
  }
  return undefined;
}
