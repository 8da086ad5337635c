// What one request of a load run does: it is called and judged by the checked-request runner
// (../assertions/checked-request.ts, the one that `protocall run` and the editor's Send use, so a
// load run's assertions mean what they mean everywhere), over warm connections: one call session per
// `--connections` connection, requests spread over them in turn. The request's `{{…}}` variables and
// generators are evaluated for each request (and `--data` rows given as its variables) when the file
// has any to evaluate; otherwise it is prepared once.
import { type CheckedRequest, checkedRequestOf, runCheckedRequest } from "../assertions/checked-request";
import { errorMessage } from "../errors";
import type { CallIo, CallSession } from "../invoke/call-session";
import type { RpcContext } from "../rpcfile/context";
import { prepareSend } from "../rpcfile/prepare-send";
import type { RpcFile, RpcRequest } from "../rpcfile/types";
import type { Row } from "./data-rows";
import type { Send } from "./generator";
import type { Outcome } from "./recorder";

/** Where a load run's requests come from: one fixed request, or one request of a .rpc file. */
export type RequestSource =
  | { kind: "fixed"; request: CheckedRequest; cwd: string }
  | {
      kind: "file";
      text: string;
      parsed: RpcFile;
      filePath: string;
      request: RpcRequest;
      context: RpcContext;
      rows?: Row[];
    };

/** A request of the file prepared with these variables, or why it cannot be. */
function prepared(
  s: Extract<RequestSource, { kind: "file" }>,
  row: Row | undefined,
): { checked: CheckedRequest; cwd: string } | string {
  const p = prepareSend({
    text: s.text,
    parsed: s.parsed,
    filePath: s.filePath,
    requestIndex: s.request.index,
    processEnv: {},
    context: s.context,
    run: { captures: row ?? {} },
  });
  if (!p.options || p.problems.length > 0)
    return p.problems.map((x) => x.text).join("; ") || "the request could not be prepared";
  return { checked: checkedRequestOf(p, p.options), cwd: p.baseDir };
}

/**
 * Checks that the request can be prepared (with the first row); returns the problem, or undefined.
 * Called before the run so a typo stops it before anything is sent.
 */
export function checkSource(s: RequestSource): string | undefined {
  if (s.kind === "fixed") return undefined;
  const p = prepared(s, s.rows?.[0]);
  return typeof p === "string" ? p : undefined;
}

/** The generator's `send` over these sessions. */
export function checkedSend(
  s: RequestSource,
  sessions: readonly CallSession[],
  io: Omit<CallIo, "cwd">,
): Send {
  const varies = s.kind === "file" && (s.rows !== undefined || s.text.includes("{{$"));
  const fixed =
    s.kind === "fixed" ? { checked: s.request, cwd: s.cwd } : varies ? undefined : prepared(s, undefined);
  return async (k, signal) => {
    const p = fixed ?? (s.kind === "file" ? prepared(s, s.rows?.[k % s.rows.length]) : undefined);
    if (p === undefined || typeof p === "string") {
      return {
        status: "error",
        passed: false,
        error: `not sent: ${p ?? "no request"}`,
        bytesSent: 0,
        bytesReceived: 0,
        messages: 0,
      };
    }
    const started = performance.now();
    let firstMessageUs: number | undefined;
    let bytesReceived = 0;
    try {
      const run = await runCheckedRequest(
        sessions[k % sessions.length],
        p.checked,
        { ...io, cwd: p.cwd },
        {
          signal,
          observer: {
            message: (json) => {
              firstMessageUs ??= (performance.now() - started) * 1000;
              bytesReceived += Buffer.byteLength(json);
            },
          },
        },
      );
      const { call, evaluation, verdict } = run;
      const o: Outcome = {
        status: call.code ?? "error",
        passed: verdict === "passed",
        bytesSent: sentBytes(p.checked.options.data),
        bytesReceived,
        messages: call.messages.length,
      };
      if (call.methodKind && call.methodKind !== "unary" && firstMessageUs !== undefined)
        o.firstMessageUs = firstMessageUs;
      const failed = evaluation.checks.filter((c) => !c.passed && !c.notRun).map((c) => c.text);
      if (failed.length > 0) o.failedChecks = failed;
      if (verdict === "errored") o.error = run.outcome.failure ?? call.error?.message ?? "the call failed";
      else if (call.error && call.code !== "ok") o.error = call.error.message;
      return o;
    } catch (err) {
      return {
        status: "error",
        passed: false,
        error: errorMessage(err),
        bytesSent: 0,
        bytesReceived,
        messages: 0,
      };
    }
  };
}

/** The bytes of an inline body (JSON text); a body read from a file or stdin (`@…`) is not counted. */
function sentBytes(data: string | undefined): number {
  return data === undefined || data.startsWith("@") ? 0 : Buffer.byteLength(data);
}
