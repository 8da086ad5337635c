// Runs requests of a `.rpc` file as tests: each is converted as the editor's Send converts it
// (prepareSend, with the values captured so far), then called and judged by the checked-request
// runner (checked-request.ts, which Send and the Test Explorer use too) through one call session
// (connections and schemas stay warm from one request to the next, so a file of a thousand requests
// costs a thousand calls, not a thousand dials and schema loads);
// its `@capture` values become variables of the requests after it. `protocall run` renders what this
// reports; the reporters (junit-report.ts, json-report.ts) take its results.
//
// Two passes: `checkRequests` converts every request before anything is sent, keeping references to
// values that an earlier request captures as written, so a typo in the last request sends nothing;
// `runRequests` then converts each request again with the captured values just before it is sent. A
// request that needs a value whose capture did not run (it was not selected) is not sent, and says
// which request to run first; one whose capturing request ran without taking the value says why.
import type { CallIo, CallResult, CallSession } from "../invoke/call-session";
import type { StreamProgress } from "../invoke/stream-progress";
import type { RpcContext, RunVariables } from "../rpcfile/context";
import { type PreparedSend, prepareSend, type SendProblem } from "../rpcfile/prepare-send";
import { requestLabel } from "../rpcfile/to-curl";
import type { RpcFile, RpcRequest } from "../rpcfile/types";
import { type CheckFailure, checkedRequestOf, runCheckedRequest } from "./checked-request";
import type { Evaluation } from "./evaluate";
import type { RequestResult } from "./results";

export interface RunRequestsOptions {
  /** The file's text and its parse. */
  text: string;
  parsed: RpcFile;
  /** Absolute path of the file. */
  filePath: string;
  /** The file as results name it (usually relative to the working directory). */
  shownFile: string;
  /** The requests to run, in order (a subset of the file's, or all). */
  requests: readonly RpcRequest[];
  /** The file's environment, opened once (openRpcContext, with the `--var` overrides). */
  context: RpcContext;
  session: CallSession;
  /** The environment, home directory and standard input of the calls (their cwd is the file's directory). */
  io: Omit<CallIo, "cwd">;
  /** Stop at the first request that does not pass; the rest are skipped. */
  bail?: boolean;
  /** Ends the running call (as canceled) and skips the rest. */
  signal?: AbortSignal;
  /** Values captured before this file (a run of several files shares them); updated in place. */
  captures?: Record<string, string>;
  observer?: RunObserver;
  /** Store each `# @snapshot` request's response as its snapshot instead of comparing. */
  updateSnapshots?: boolean;
}

/** What a run reports as it goes. Every member is optional. */
export interface RunObserver {
  /** A request is about to be sent. */
  start?(request: RpcRequest, label: string): void;
  /** Each response message, formatted as `protocall curl` prints it. */
  message?(json: string): void;
  /** A line of the verbose transcript (requests with `# @verbose`). */
  log?(line: string): void;
  /** The bytes of a request's `# @stream-file` sent so far (stream-progress.ts). */
  streamProgress?(progress: StreamProgress): void;
  /** A request is done (or skipped). */
  done?(run: RequestRun): void;
}

export interface RequestRun {
  request: RpcRequest;
  result: RequestResult;
  /** The checks, when the request was sent. */
  evaluation?: Evaluation;
  call?: CallResult;
  /** What to tell the user when it was sent and did not pass (checked-request.ts failureLines). */
  failures?: CheckFailure[];
  /** Problems that kept the request from being sent (a capture that has not run). */
  problems: SendProblem[];
  /**
   * What the request contributes to the exit code: 0 when it passed or was skipped; the call's exit
   * code (the gRPC code × 8, or 1) when it failed where no assertion expected a failure; 1 when an
   * assertion or capture did not hold, or the request could not be sent.
   */
  exitCode: number;
}

export interface RunOutcome {
  runs: RequestRun[];
  /** The first failing request's exit code; 0 when every request passed. */
  exitCode: number;
}

/**
 * Converts every request before anything is sent (values captured by earlier requests of the file
 * are kept as written); returns every problem. Throws ProtocallError for a request that does not exist.
 */
export function checkRequests(
  o: Pick<RunRequestsOptions, "text" | "parsed" | "filePath" | "requests" | "context">,
): SendProblem[] {
  const problems: SendProblem[] = [];
  for (const r of o.requests) {
    problems.push(...prepare(o, r, { pendingCaptures: "defer" }).problems);
  }
  return problems;
}

/** Runs the requests in order. Never throws for a failing call: every failure is in the result. */
export async function runRequests(o: RunRequestsOptions): Promise<RunOutcome> {
  const captures = o.captures ?? {};
  const missedCaptures: Record<string, string> = {};
  const runs: RequestRun[] = [];
  let exitCode = 0;
  let stopped: string | undefined;
  for (const request of o.requests) {
    if (!stopped && o.signal?.aborted) stopped = "not run: the run was interrupted";
    const run = stopped ? skipped(o, request, stopped) : await runOne(o, request, captures, missedCaptures);
    runs.push(run);
    o.observer?.done?.(run);
    if (run.exitCode !== 0 && exitCode === 0) exitCode = run.exitCode;
    if (!stopped && o.bail && run.result.verdict !== "passed" && run.result.verdict !== "skipped") {
      stopped = `not run: --bail stopped the run at the failure of ${JSON.stringify(run.result.name)}`;
    }
  }
  return { runs, exitCode };
}

function prepare(
  o: Pick<RunRequestsOptions, "text" | "parsed" | "filePath" | "context">,
  request: RpcRequest,
  run: RunVariables,
): PreparedSend {
  return prepareSend({
    text: o.text,
    parsed: o.parsed,
    filePath: o.filePath,
    requestIndex: request.index,
    processEnv: {},
    context: o.context,
    run,
  });
}

async function runOne(
  o: RunRequestsOptions,
  request: RpcRequest,
  captures: Record<string, string>,
  missedCaptures: Record<string, string>,
): Promise<RequestRun> {
  const p = prepare(o, request, { captures, missedCaptures });
  const base = {
    file: o.shownFile,
    name: p.label,
    line: (request.separator ?? request.range).start.line + 1,
  };
  if (!p.options || p.problems.length > 0) {
    const message = p.problems.map((x) => x.message).join("; ") || "the request could not be prepared";
    for (const c of request.captures) {
      missedCaptures[c.name.text] =
        `request "${p.label}" (line ${c.range.start.line + 1}) was not sent (${message})`;
    }
    return {
      request,
      problems: p.problems,
      exitCode: 1,
      result: { ...base, verdict: "errored", durationMs: 0, checks: [], message },
    };
  }
  const checked = checkedRequestOf(p, p.options);
  o.observer?.start?.(request, p.label);
  const observer = o.observer;
  const run = await runCheckedRequest(
    o.session,
    checked,
    { ...o.io, cwd: p.baseDir },
    {
      signal: o.signal,
      updateSnapshots: o.updateSnapshots,
      observer: {
        message: observer?.message ? (json) => observer.message?.(json) : undefined,
        log: checked.options.verbose && observer?.log ? (line) => observer.log?.(line) : undefined,
        streamProgress:
          checked.options.streamFile !== undefined && observer?.streamProgress
            ? (progress) => observer.streamProgress?.(progress)
            : undefined,
      },
    },
  );
  const { call, outcome, evaluation, verdict } = run;
  Object.assign(captures, evaluation.captured);
  // The captures' checks come last, in the order of the request's captures.
  const taken = evaluation.checks.filter((c) => c.kind === "capture");
  request.captures.forEach((c, i) => {
    const check = taken[i];
    if (!check || check.passed) return;
    const why = check.notRun ? `its call failed: ${outcome.failure}` : check.message;
    missedCaptures[c.name.text] = `request "${p.label}" (line ${c.range.start.line + 1}) ran, but ${why}`;
  });
  const result: RequestResult = {
    ...base,
    verdict,
    durationMs: call.durationMs,
    checks: evaluation.checks,
  };
  if (outcome.status !== undefined) result.status = outcome.status;
  if (verdict === "errored") result.message = outcome.failure;
  return { request, result, evaluation, call, failures: run.failures, problems: [], exitCode: run.exitCode };
}

function skipped(o: RunRequestsOptions, request: RpcRequest, message: string): RequestRun {
  return {
    request,
    problems: [],
    exitCode: 0,
    result: {
      file: o.shownFile,
      name: requestLabel(request),
      line: (request.separator ?? request.range).start.line + 1,
      verdict: "skipped",
      durationMs: 0,
      checks: [],
      message,
    },
  };
}
