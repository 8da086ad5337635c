// What one request of a load run does: it is called and judged by the checked-request runner
// (../assertions/checked-request.ts, the one that `protocall run` and the editor's Send use, so a
// load run's assertions mean what they mean everywhere), over warm connections: one call session per
// `--connections` connection, requests spread over them in turn. Unary Connect calls over h2c take
// the light path once the first call resolved the method (fast-unary.ts), judged by the same runner. The request's `{{…}}` variables and
// generators are evaluated for each request (and `--data` rows given as its variables) when the file
// has any to evaluate; otherwise it is prepared once.
import { Readable } from "node:stream";
import type { DescMethod } from "@bufbuild/protobuf";
import {
  type CheckedCall,
  type CheckedRequest,
  checkedRequestOf,
  runCheckedRequest,
} from "../assertions/checked-request";
import { errorMessage } from "../errors";
import type { CallIo, CallSession } from "../invoke/call-session";
import type { Protocol } from "../invoke/options";
import type { RpcContext } from "../rpcfile/context";
import { prepareSend } from "../rpcfile/prepare-send";
import type { RpcFile, RpcRequest } from "../rpcfile/types";
import type { Row } from "./data-rows";
import { type FastUnary, openFastUnary } from "./fast-unary";
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
      /** The editor's default protocol and timeout (its settings), as its Send uses them. */
      defaults?: { protocol?: Protocol; timeoutSeconds?: number };
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
    defaultProtocol: s.defaults?.protocol,
    defaultTimeoutSeconds: s.defaults?.timeoutSeconds,
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

/** The generator's `send`, and what it holds open. */
export interface CheckedSend {
  send: Send;
  /** Whether the light path (fast-unary.ts) is used, and why not; undefined until the first call ended. */
  lightPath(): { light: boolean; why?: string } | undefined;
  /** Closes the light path's connections (the sessions are the caller's). */
  close(): void;
}

/**
 * The generator's `send` over these sessions. Once the first call has resolved the method, calls
 * that can take the light path (fast-unary.ts: unary Connect over h2c) take it, over `sessions.length`
 * connections of its own; the others go through the sessions.
 */
export function checkedSend(
  s: RequestSource,
  sessions: readonly CallSession[],
  io: Omit<CallIo, "cwd">,
  product: string,
): CheckedSend {
  const varies = s.kind === "file" && (s.rows !== undefined || s.text.includes("{{$"));
  const fixed =
    s.kind === "fixed" ? { checked: s.request, cwd: s.cwd } : varies ? undefined : prepared(s, undefined);
  let light: FastUnary | undefined;
  let lightState: { light: boolean; why?: string } | undefined;
  let opening: Promise<void> | undefined;
  const open = (checked: CheckedRequest, cwd: string, method: DescMethod) => {
    if (opening) return;
    const inputIo = { ...io, cwd, stdin: Readable.from([]), stdinIsTTY: false };
    opening = openFastUnary(checked, method, inputIo, product, sessions.length).then(
      (r) => {
        if (typeof r === "string") lightState = { light: false, why: r };
        else {
          light = r;
          lightState = { light: true };
        }
      },
      (err) => {
        lightState = { light: false, why: errorMessage(err) };
      },
    );
  };
  // The first call resolves the method; the calls due meanwhile wait for it (and for the light path
  // to open), so they do not all resolve it again over connections the light path then leaves idle.
  let first = true;
  let gate: Promise<void> | undefined;
  const send: Send = async (k, signal) => {
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
    if (first) {
      first = false;
      let release = () => {};
      gate = new Promise<void>((r) => (release = r));
      try {
        return await slow(p, k, signal);
      } finally {
        await opening;
        if (!lightState) lightState = { light: false, why: "the first call did not resolve the method" };
        gate = undefined;
        release();
      }
    }
    if (gate) await gate;
    const quick = light?.call(p.checked, k % sessions.length, signal);

    if (quick) return outcomeOf(await quick, p.checked, undefined);
    return slow(p, k, signal);
  };
  /** A call through the call pipeline (and the first that resolves the method opens the light path). */
  const slow = async (
    p: { checked: CheckedRequest; cwd: string },
    k: number,
    signal: AbortSignal,
  ): Promise<Outcome> => {
    const started = performance.now();
    let firstMessageUs: number | undefined;
    try {
      const run = await runCheckedRequest(
        sessions[k % sessions.length],
        p.checked,
        { ...io, cwd: p.cwd },
        {
          signal,
          observer: {
            method: (m) => open(p.checked, p.cwd, m.descriptor),
            message: () => {
              firstMessageUs ??= (performance.now() - started) * 1000;
            },
          },
        },
      );
      return outcomeOf(run, p.checked, firstMessageUs);
    } catch (err) {
      return {
        status: "error",
        passed: false,
        error: errorMessage(err),
        bytesSent: 0,
        bytesReceived: 0,
        messages: 0,
      };
    }
  };
  return {
    send,
    lightPath: () => lightState,
    close: () => light?.close(),
  };
}

/** What the recorder keeps of one checked call. */
function outcomeOf(run: CheckedCall, checked: CheckedRequest, firstMessageUs: number | undefined): Outcome {
  const { call, evaluation, verdict } = run;
  let bytesReceived = 0;
  for (const m of call.messages) bytesReceived += Buffer.byteLength(m);
  const o: Outcome = {
    status: call.code ?? "error",
    passed: verdict === "passed",
    bytesSent: sentBytes(checked.options.data),
    bytesReceived,
    messages: call.messages.length,
  };
  if (call.methodKind && call.methodKind !== "unary" && firstMessageUs !== undefined)
    o.firstMessageUs = firstMessageUs;
  if (!evaluation.passed) {
    const failed = evaluation.checks.filter((c) => !c.passed && !c.notRun).map((c) => c.text);
    if (failed.length > 0) o.failedChecks = failed;
  }
  if (verdict === "errored") o.error = run.outcome.failure ?? call.error?.message ?? "the call failed";
  else if (call.error && call.code !== "ok") o.error = call.error.message;
  return o;
}

/** The bytes of an inline body (JSON text); a body read from a file or stdin (`@…`) is not counted. */
function sentBytes(data: string | undefined): number {
  return data === undefined || data.startsWith("@") ? 0 : Buffer.byteLength(data);
}
