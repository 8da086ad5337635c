// A call's deadline and cancellation, and the failure texts that connect-es words itself, as buf (Go)
// words them. Wraps the transport that transport.ts builds, so every caller (curl, `run`, the editor)
// gets the same words:
//  - past its deadline a call fails with `deadline_exceeded` "context deadline exceeded" (connect-es:
//    "the operation timed out"). So the deadline is kept here rather than in connect-es, which gets no
//    timeout; the timeout header is set here too, in connect-go's format (request-headers.ts);
//  - canceled by its caller (Ctrl-C) without a reason of its own: `canceled` "context canceled"
//    (connect-es: "This operation was aborted");
//  - an HTTP error status without an error body (connect-es: "HTTP 404"): "HTTP status 404 Not Found",
//    and for Connect unary calls "404 Not Found" (connect-go's words for each).
import { STATUS_CODES } from "node:http";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import type { Protocol } from "./options";
import { timeoutHeader } from "./request-headers";

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
