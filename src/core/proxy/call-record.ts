// One proxied call as it passes, whichever path carries it (Node's HTTP/1.1 or HTTP/2 server in
// proxy-server.ts, or the HTTP/2 relay in h2-relay.ts): what was seen of it so far (request headers,
// messages each way, the answer's head and trailers, a reset) and `finish`, which builds the stored
// call once. Also the header rules every path follows: which headers are passed on (hop-by-hop ones
// are not; `te: trailers` is), and how they are flattened for the store.
import type * as http from "node:http";
import type * as http2 from "node:http2";
import { type CallReset, callEnd, detectProtocol, type ProxyProtocol } from "./call-status";
import type { ProxiedCall } from "./call-store";
import { envelopeReader } from "./envelopes";
import type { ProxyOptions } from "./proxy-server";

export const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "http2-settings",
  "te",
  "host",
]);

/** Whether a (non-pseudo) header is passed on: hop-by-hop ones are not, except `te: trailers` when `keepTe`. */
export function passesOn(name: string, value: unknown, keepTe: boolean): boolean {
  return !HOP_BY_HOP.has(name) || (keepTe && name === "te" && value === "trailers");
}

export function forwardable(headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders, keepTe = false) {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || k.startsWith(":") || !passesOn(k, v, keepTe)) continue;
    out[k] = v as string | string[];
  }
  return out;
}

export function flat(
  headers: Record<string, string | string[] | number | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || k.startsWith(":")) continue;
    out[k] = Array.isArray(v) ? v.join(", ") : String(v);
  }
  return out;
}

/** The compression of a body, from the headers that came with it. */
export function encodingOf(
  protocol: ProxyProtocol,
  enveloped: boolean,
  headers: Record<string, string | string[] | number | undefined>,
): string | undefined {
  const name =
    protocol !== "connect" ? "grpc-encoding" : enveloped ? "connect-content-encoding" : "content-encoding";
  const value = headers[name];
  return value === undefined ? undefined : String(value);
}

/** One call as it passes: what was seen of it so far, and `finish` to store it once. */
export interface CallRecord {
  readonly protocol: ProxyProtocol;
  readonly contentType: string;
  readonly path: string;
  /** Whether the bodies are enveloped (every protocol but Connect unary). */
  readonly enveloped: boolean;
  readonly sent: ReturnType<typeof envelopeReader>;
  readonly received: ReturnType<typeof envelopeReader>;
  httpStatus: number;
  responseHeaders: Record<string, string>;
  trailers: Record<string, string>;
  error?: string;
  /** Milliseconds since the call arrived. */
  elapsedMs(): number;
  /** The stream was reset before the answer ended: by the caller, or by the upstream (with its code). */
  reset?: CallReset;
  finish(): void;
}

export function recordCall(
  headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders,
  url: string,
  httpVersion: "1.1" | "2",
  basePath: string,
  options: ProxyOptions,
): CallRecord {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const contentType = String(headers["content-type"] ?? "");
  const protocol = detectProtocol(contentType);
  const enveloped = protocol !== "connect" || contentType.startsWith("application/connect+");
  let finished = false;
  const rec: CallRecord = {
    protocol,
    contentType,
    path: basePath + url,
    enveloped,
    sent: envelopeReader(enveloped),
    received: envelopeReader(enveloped),
    httpStatus: 0,
    responseHeaders: {},
    trailers: {},
    elapsedMs: () => performance.now() - started,
    finish: () => {
      if (finished) return;
      finished = true;
      const { sent, received, httpStatus, responseHeaders, trailers, error, reset } = rec;
      sent.end();
      received.end();
      const end = callEnd({
        protocol,
        httpStatus,
        responseHeaders,
        trailers,
        controls: received.controls,
        messages: received.messages,
        error,
        reset,
      });
      const call: Omit<ProxiedCall, "id"> = {
        startedAt,
        upstream: options.upstream,
        method: url.split("?")[0].replace(/^\//, ""),
        protocol,
        httpVersion,
        httpStatus,
        status: end.status,
        ...(end.message !== undefined ? { statusMessage: end.message } : {}),
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        requestBytes: sent.bytes,
        responseBytes: received.bytes,
        requestHeaders: flat(headers),
        responseHeaders,
        trailers: end.trailers,
        ...(end.details.length > 0 ? { details: end.details } : {}),
        requestMessages: sent.messages.map((m) => m.toString("base64")),
        responseMessages: received.messages.map((m) => m.toString("base64")),
        requestTimes: sent.times,
        responseTimes: received.times,
        truncated: sent.truncated || received.truncated,
        ...(error ? { error } : {}),
      };
      Promise.resolve(options.onCall(call)).catch((e) => options.onWarning?.(`storing a call: ${e}`));
    },
  };
  rec.sent.encoding = encodingOf(protocol, enveloped, headers);
  return rec;
}
