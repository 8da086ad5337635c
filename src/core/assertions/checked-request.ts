// The checked-request runner: one request, prepared (../rpcfile/prepare-send.ts), called through the
// call session (../invoke/call-session.ts, the one call pipeline) and judged by its `# @assert` and
// `# @capture` options (evaluate.ts) and its `# @snapshot` (snapshot.ts) on one message representation (call-outcome.ts). It answers
// "did this request pass, and why not" for every front end: `protocall run` (run-requests.ts), the
// editor's Send and its Test Explorer; a load run or a mock server asks it too. Front ends only
// render what it returns (the verdict, each check, the failure lines, the exit code).
import type { JsonValue } from "@bufbuild/protobuf";
import type { CallIo, CallObserver, CallResult, CallSession } from "../invoke/call-session";
import type { LiveRequests } from "../invoke/live-requests";
import type { CurlOptions } from "../invoke/options";
import { redactSecrets } from "../invoke/redact";
import type { RpcAssertion, RpcCapture } from "../rpcfile/assertion-syntax";
import type { PreparedSend } from "../rpcfile/prepare-send";
import type { Range } from "../rpcfile/types";
import { callOutcome } from "./call-outcome";
import { type CheckResult, type Evaluation, evaluateChecks } from "./evaluate";
import type { CallOutcome } from "./outcome";
import { type RequestVerdict, verdictOf } from "./results";
import { checkSnapshot, type SnapshotSpec, snapshotSpecOf } from "./snapshot";

/** A request ready to be called and checked. */
export interface CheckedRequest {
  options: CurlOptions;
  /** Its `# @assert` options, their values resolved. */
  assertions: readonly RpcAssertion[];
  captures: readonly RpcCapture[];
  /** Where the implicit `status == ok` check (and a call's failure) is reported: the request line. */
  range: Range;
  /** Its `# @snapshot`: where the stored response is kept (snapshot.ts). */
  snapshot?: SnapshotSpec;
}

/** A prepared request (prepareSend) as the runner takes it, with its options (`p.options`, checked by the caller). */
export function checkedRequestOf(p: PreparedSend, options: CurlOptions): CheckedRequest {
  return {
    options,
    assertions: p.assertions ?? [],
    captures: p.request.captures,
    range: p.request.requestLine ?? p.request.range,
    snapshot: snapshotSpecOf(p.request, p.filePath),
  };
}

export interface CheckedCall {
  call: CallResult;
  outcome: CallOutcome;
  evaluation: Evaluation;
  /** passed, failed (a check did not hold), errored (the call failed outside the RPC). */
  verdict: Exclude<RequestVerdict, "skipped">;
  /**
   * 0 when it passed; the call's `protocall curl` exit code (the gRPC code × 8, or 1) when it failed
   * outside the RPC or where no assertion expected a failure; 1 when an assertion or capture did not
   * hold.
   */
  exitCode: number;
  /** What to tell the user when it did not pass, one line each, where it applies (failureLines). */
  failures: CheckFailure[];
}

export interface CheckFailure {
  range: Range;
  message: string;
  /** The check that did not hold (none for a call that failed outside the RPC). */
  check?: CheckResult;
}

export interface CheckedCallOptions {
  /** Sees the call as it runs (the editor's panel, `protocall run`'s stdout); optional. */
  observer?: CallObserver;
  signal?: AbortSignal;
  /** A live stream's queued messages (the editor's live feature). */
  live?: LiveRequests;
  /** Store the response as the request's snapshot instead of comparing (`--update-snapshots`). */
  updateSnapshots?: boolean;
}

/** Whether any check reads response messages (only then are their values computed and kept). */
export function readsMessages(r: Pick<CheckedRequest, "assertions" | "captures" | "snapshot">): boolean {
  const reads = (root: string) => root === "message" || root === "messages";
  return (
    r.snapshot !== undefined ||
    r.assertions.some((a) => reads(a.path.root)) ||
    r.captures.some((c) => reads(c.path.root))
  );
}

/** Calls the request and checks it. Never throws for a failing call: every failure is in the result. */
export async function runCheckedRequest(
  session: CallSession,
  request: CheckedRequest,
  io: CallIo,
  o: CheckedCallOptions = {},
): Promise<CheckedCall> {
  const values: JsonValue[] | undefined = readsMessages(request) ? [] : undefined;
  const watcher = o.observer ?? {};
  const observer: CallObserver = values
    ? {
        ...watcher,
        value: (v, i) => {
          values.push(v);
          watcher.value?.(v, i);
        },
      }
    : watcher;
  const call = await session.call(request.options, io, observer, o.signal, o.live);
  return checkCall(call, request, values, o.updateSnapshots);
}

/** Checks a call made elsewhere (`values`: its messages as CallObserver.value gave them). */
export function checkCall(
  call: CallResult,
  request: Omit<CheckedRequest, "options">,
  values?: readonly JsonValue[],
  updateSnapshots = false,
): CheckedCall {
  const outcome = callOutcome(call, values);
  const evaluation = evaluateChecks(outcome, request);
  if (request.snapshot) {
    const snapshot = snapshotCheck(outcome, request.snapshot, updateSnapshots);
    evaluation.checks.push(snapshot);
    evaluation.passed &&= snapshot.passed;
  }
  const verdict = verdictOf(outcome, evaluation) as CheckedCall["verdict"];
  // A failure nothing expected (an RPC error under the implicit check, or any failure outside the
  // RPC) exits as `protocall curl` would; a check that did not hold exits 1.
  const unexpected = verdict === "errored" || evaluation.checks.some((c) => c.kind === "status" && !c.passed);
  const exitCode = verdict === "passed" ? 0 : unexpected ? call.exitCode || 1 : 1;
  return {
    call,
    outcome,
    evaluation,
    verdict,
    exitCode,
    failures: failureLines(outcome, evaluation, request.range),
  };
}

/** The snapshot check; not run when the call failed outside the RPC (nothing to store). */
function snapshotCheck(outcome: CallOutcome, spec: SnapshotSpec, update: boolean): CheckResult {
  if (outcome.status === undefined && outcome.failure !== undefined) {
    return {
      kind: "snapshot",
      text: "snapshot",
      range: spec.range,
      passed: false,
      found: false,
      notRun: true,
      message: `not checked: the call failed: ${outcome.failure}`,
    };
  }
  return checkSnapshot(outcome, spec, update);
}

/**
 * What a request that did not pass tells the user: a call that failed outside the RPC once, at the
 * request line (none of its checks could be checked); else each check that did not hold, at its line.
 * Secrets in them (a password in a URL an error message repeats, …) are redacted (redact.ts).
 */
export function failureLines(outcome: CallOutcome, evaluation: Evaluation, range: Range): CheckFailure[] {
  if (outcome.status === undefined && outcome.failure !== undefined) {
    return [{ range, message: redactSecrets(`the call failed: ${outcome.failure}`) }];
  }
  return evaluation.checks
    .filter((c) => !c.passed)
    .map((c) => ({ range: c.range, message: redactSecrets(c.message), check: c }));
}
