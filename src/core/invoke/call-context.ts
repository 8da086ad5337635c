// A call's deadline and cancellation, from the first setup step to the last response, and the failure
// texts that connect-es words itself, as buf (Go) words them. The one owner of `--timeout`, which
// bounds the whole command as in `buf curl`:
//  - `CallContext` (one per call, made by the pipeline): every setup step (reading the options,
//    connecting, loading the schema, opening the request data and the output file) runs under it and
//    ends when the time is up or the caller cancels; the call then fails before anything is sent
//    (`timed out after 1ms (--timeout) before the call was sent: context deadline exceeded`, exit 1, as
//    buf's "timed out after …"). The RPC gets the time left as its deadline (`remainingForCall`);
//  - `withCallContext` wraps the transport that transport.ts builds and enforces that deadline, so
//    every caller (curl, `run`, the editor) gets the same words. Past its deadline a call fails with
//    `deadline_exceeded` "context deadline exceeded" (connect-es: "the operation timed out"), so the
//    deadline is kept here rather than in connect-es, which gets no timeout; the timeout header is
//    set here too, in connect-go's format (request-headers.ts);
//  - canceled by its caller (Ctrl-C, the editor's Cancel) without a reason of its own: `canceled`
//    "context canceled" (connect-es: "This operation was aborted"), or before the request went out
//    "the call was canceled before it was sent";
//  - an HTTP error status without an error body (connect-es: "HTTP 404"): "HTTP status 404 Not Found",
//    and for Connect unary calls "404 Not Found" (connect-go's words for each).
import { STATUS_CODES } from "node:http";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { ProtocallError } from "../errors";
import { formatDuration } from "./duration";
import type { Protocol } from "./options";
import { timeoutHeader } from "./request-headers";
import { untilAborted } from "./until-aborted";
import type { VerboseLog } from "./verbose";

/** What a setup step was doing, for the verbose line when --timeout expires during it. */
export type SetupPhase =
  | "reading the options"
  | "connecting"
  | "loading the schema"
  | "opening the request data"
  | "opening the output file";

/** The failure of a call whose --timeout expired before the request went out (exit 1, as buf). */
export class SetupTimeout extends ProtocallError {}

/** The reason the context's signal aborts with when --timeout expires. */
const TIMED_OUT = new Error("context deadline exceeded");

/**
 * A call's bounds: the caller's cancel signal and `--timeout`, which covers the whole call. A setup
 * step still running when either ends is abandoned (what the call opened is closed at its end, which
 * stops it), and the call fails: canceled, or timed out as `buf curl` words it. The RPC is given the
 * time left, which `withCallContext` enforces.
 */
export class CallContext {
  private readonly controller = new AbortController();
  private readonly deadline: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.controller.abort(canceledBeforeSent());

  constructor(
    private readonly cancel: AbortSignal | undefined,
    private readonly timeoutMs: number | undefined,
    private readonly log: VerboseLog,
  ) {
    if (timeoutMs && timeoutMs > 0) {
      this.deadline = performance.now() + timeoutMs;
      this.timer = setTimeout(() => this.controller.abort(TIMED_OUT), timeoutMs);
    }
    if (cancel?.aborted) this.onAbort();
    else cancel?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Aborts when a bound ends (for steps that can stop their own work: a compiler run, a stream). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The step's result, or the bound's failure as soon as a bound ends. */
  async race<T>(step: Promise<T>, phase: SetupPhase): Promise<T> {
    try {
      return await untilAborted(step, this.controller.signal);
    } catch (err) {
      // Whatever a step says once the time is up (a stopped compiler, a closed stream), it timed out.
      if (this.controller.signal.reason === TIMED_OUT) {
        this.log.info(`--timeout expired while ${phase}`);
        throw this.timedOut();
      }
      throw err;
    }
  }

  /** The deadline left for the RPC (undefined: none); fails as a setup timeout when none is left. */
  remainingForCall(): number | undefined {
    if (this.controller.signal.aborted) {
      const reason = this.controller.signal.reason;
      throw reason === TIMED_OUT ? this.timedOut() : reason;
    }
    if (this.deadline === undefined) return undefined;
    const left = Math.floor(this.deadline - performance.now());
    if (left <= 0) throw this.timedOut();
    return left;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.cancel?.removeEventListener("abort", this.onAbort);
  }

  private timedOut(): SetupTimeout {
    return new SetupTimeout(
      `timed out after ${formatDuration(this.timeoutMs ?? 0)} (--timeout) before the call was sent: context deadline exceeded`,
    );
  }
}

function canceledBeforeSent(): ConnectError {
  return new ConnectError("the call was canceled before it was sent", Code.Canceled);
}

/**
 * The transport with buf's deadline, cancellation and HTTP-status wording: the deadline given to a
 * call (what its CallContext has left) is enforced here, not by connect-es.
 */

export function withCallContext(t: Transport, protocol: Protocol): Transport {
  const setup = (
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: HeadersInit | undefined,
  ) => {
    const h = new Headers(header);
    const controller = new AbortController();
    const cancel = () =>
      controller.abort(
        signal?.reason instanceof ConnectError
          ? signal.reason
          : new ConnectError("context canceled", Code.Canceled),
      );
    if (signal?.aborted) cancel();
    else signal?.addEventListener("abort", cancel, { once: true });
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs !== undefined && timeoutMs > 0) {
      h.set(...timeoutHeader(protocol, timeoutMs));
      timer = setTimeout(
        () => controller.abort(new ConnectError("context deadline exceeded", Code.DeadlineExceeded)),
        timeoutMs,
      );
      timer.unref();
    }
    const done = () => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
    };
    return { signal: controller.signal, header: h, done };
  };
  return {
    async unary(method, signal, timeoutMs, header, message, contextValues) {
      const call = setup(signal, timeoutMs, header);
      try {
        return await t.unary(method, call.signal, undefined, call.header, message, contextValues);
      } catch (err) {
        throw reworded(err, protocol === "connect");
      } finally {
        call.done();
      }
    },
    async stream(method, signal, timeoutMs, header, input, contextValues) {
      const call = setup(signal, timeoutMs, header);
      try {
        const res = await t.stream(method, call.signal, undefined, call.header, input, contextValues);
        return { ...res, message: guarded(res.message, call.done) };
      } catch (err) {
        call.done();
        throw reworded(err, false);
      }
    },
  };
}

/**
 * Passes the messages on, rewording a failure, and ends the call's context when the stream ends (one
 * promise step per message, as connect-es's own wrapper; no generator in between).
 */
function guarded<T>(src: AsyncIterable<T>, done: () => void): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const it = src[Symbol.asyncIterator]();
      return {
        next: () =>
          it.next().then(
            (r) => {
              if (r.done) done();
              return r;
            },
            (err) => {
              done();
              throw reworded(err, false);
            },
          ),
        return: (value?: unknown) => {
          done();
          return it.return ? it.return(value) : Promise.resolve({ done: true as const, value: value as T });
        },
      };
    },
  };
}

/** An HTTP error status in connect-go's words (`statusLine`: Connect unary calls). */
function reworded(err: unknown, statusLine: boolean): unknown {
  if (!(err instanceof ConnectError)) return err;
  const status = /^HTTP (\d{3})$/.exec(err.rawMessage);
  if (!status) return err;
  const line = `${status[1]} ${STATUS_CODES[Number(status[1])] ?? ""}`.trimEnd();
  const shown = new ConnectError(
    statusLine ? line : `HTTP status ${line}`,
    err.code,
    err.metadata,
    undefined,
    err.cause,
  );
  shown.details = err.details;
  return shown;
}
