// The HTTP side of `protocall curl`: Connect, gRPC and gRPC-Web transports from connect-node's
// protocol implementations, over our own connections so that we control what `buf curl` controls:
//  - http: HTTP/1.1, or h2c with prior knowledge (implied for gRPC and for reflection);
//  - https: ALPN offers h2, then http/1.1 (only h2 with --http2-prior-knowledge);
//  - TLS: --cacert replaces the system roots, -k, --servername (SNI and the verified name; default
//    the Host header, else the URL host), --cert/--key; --unix-socket for every connection;
//  - TCP keepalive, --connect-timeout for connection setup only; connection setup also ends with the
//    call's deadline or cancel (a server that accepts and goes silent holds no call past --timeout);
//  - verbose lines for connections, requests, responses and body bytes;
//  - request headers as buf sends them (request-headers.ts), single-message bodies (unary and
//    server-streaming calls) with a Content-Length, and the call's deadline, cancellation and error
//    texts in buf's words (call-context.ts).
// Connections (dialing, TLS, proxies, ALPN) are the dialer's (dialer.ts), HTTP/2 sessions
// h2-sessions.ts's. Connection failures become errors worded like buf's (node-errors.ts). Responses are bounded as buf
// bounds them (response-limits.ts) and long streams read through a fast path with back-pressure
// (response-envelopes.ts). A connection the server resets is `canceled`, one it closes before
// answering `unavailable` ("unexpected EOF"), a stream that ends inside a message `internal`, one
// whose connection closes cleanly under it by where it stopped (body-cut-short.ts), as in buf.
import * as http from "node:http";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import type {
  CommonTransportOptions,
  UniversalClientFn,
  UniversalClientRequest,
  UniversalClientResponse,
} from "@connectrpc/connect/protocol";
import { coalesce } from "./batch";
import { withCallContext } from "./call-context";
import { Dialer } from "./dialer";
import { H2Sessions } from "./h2-sessions";
import { endedMidBody, type StreamSlot, throwIfResetByServer } from "./h2-stream-end";
import { createHttp1Client } from "./http1-client";
import { goAwayError, hasCode, messageOf, notHttp2, tlsAlert } from "./node-errors";
import type { CurlOptions, Protocol } from "./options";
import type { ProxyChoice } from "./proxy-choice";
import type { HeaderSplitter } from "./repeated-headers";
import { alignRequestHeaders } from "./request-headers";
import { EnvelopeScanner, type ResponseTap, tapMessages } from "./response-envelopes";
import { boundMessages, gzip, MAX_MESSAGE_BYTES } from "./response-limits";
import { untilAborted } from "./until-aborted";
import { logHeaders, type VerboseLog } from "./verbose";

export type HttpMode = "h1" | "h2" | "alpn";

export interface TransportSettings {
  /** Base URL (scheme, host, port, path prefix), without a trailing slash. */
  baseUrl: string;
  protocol: Protocol;
  /** h1: HTTP/1.1; h2: HTTP/2 (h2c over http, ALPN h2 only over https); alpn: h2 or http/1.1. */
  mode: HttpMode;
  /** From a Host header: the HTTP authority and the default TLS server name. */
  authority?: string;
  unixSocket?: string;
  /** The HTTP proxy every connection tunnels through (proxy-choice.ts); undefined = direct. */
  proxy?: ProxyChoice;
  /** Milliseconds to establish a connection (TCP and TLS); undefined = no limit. */
  connectTimeoutMs?: number;
  /** TCP keepalive interval in milliseconds; undefined = keepalive off. */
  keepaliveMs?: number;
  cacert?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
  servername?: string;
  /** Resolves relative TLS file paths. */
  cwd?: string;
  log: VerboseLog;
  /** Sends the values of a repeated header name as separate fields (see repeated-headers.ts). */
  splitHeader?: HeaderSplitter;
}

export type { ResponseTap } from "./response-envelopes";

export interface CurlTransport {
  readonly transport: Transport;
  /**
   * Routes the response messages of calls whose path ends with `pathSuffix` (`/pkg.Service/Method`)
   * to `tap`; undefined removes it. Only for methods whose responses are streamed.
   */
  tapResponses(pathSuffix: string, tap: ResponseTap | undefined): void;
  /**
   * Sends `body` (request messages already in envelopes, uncompressed) as the request body of calls
   * whose path ends with `pathSuffix`, instead of what the transport serializes: the fast path for
   * long request streams. The transport is then given no messages of its own.
   */
  tapRequests(pathSuffix: string, body: AsyncIterable<Uint8Array> | undefined): void;
  /** The HTTP version in use once the first connection is made: "1.1" or "2". */
  httpVersion(): "1.1" | "2" | undefined;
  /** Closes all connections. */
  close(): void;
}

/** The connection settings that a curl command's options give (without the log and header splitter). */
export function curlTransportSettings(
  o: CurlOptions,
  target: { baseUrl: string; mode: HttpMode; authority?: string; cwd?: string; proxy?: ProxyChoice },
): Omit<TransportSettings, "log" | "splitHeader"> {
  return {
    baseUrl: target.baseUrl,
    protocol: o.protocol,
    mode: target.mode,
    authority: target.authority,
    unixSocket: o.unixSocket,
    proxy: target.proxy,
    connectTimeoutMs: o.connectTimeout !== undefined ? o.connectTimeout * 1000 : undefined,
    keepaliveMs: o.noKeepalive ? undefined : (o.keepaliveTime ?? 60) * 1000,
    cacert: o.cacert,
    cert: o.cert,
    key: o.key,
    insecure: o.insecure,
    servername: o.servername,
    cwd: target.cwd,
  };
}

/**
 * Chooses HTTP/1.1, HTTP/2 or negotiation. Returns a note for verbose output when HTTP/2 prior
 * knowledge is implied (gRPC or reflection over plain http need HTTP/2).
 */
export function chooseHttpMode(
  o: CurlOptions,
  secure: boolean,
  reflection: boolean,
): { mode: HttpMode; note?: string } {
  if (o.http2PriorKnowledge) return { mode: "h2" };
  if (secure) return { mode: "alpn" };
  if (o.protocol === "grpc" || reflection) {
    const why = o.protocol === "grpc" ? "the gRPC protocol needs HTTP/2" : "server reflection needs HTTP/2";
    return { mode: "h2", note: `Using HTTP/2 prior knowledge over plain-text (h2c): ${why}` };
  }
  return { mode: "h1" };
}

/** Creates the transport. TLS files are read now, so a missing file fails before anything is sent. */
export async function createCurlTransport(s: TransportSettings): Promise<CurlTransport> {
  const log = s.log;
  const dialer = new Dialer(s);
  const sessions = new H2Sessions(dialer, s);
  const ended = connectionEndings(dialer, sessions);
  let firstRequest = true;
  let tap: { suffix: string; tap: ResponseTap } | undefined;
  let requestTap: { suffix: string; body: AsyncIterable<Uint8Array> } | undefined;

  const pool = dialer.http1Pool();
  const h1Client = createHttp1Client({ pool, host: s.authority, splitHeader: s.splitHeader });
  // connect-node's HTTP/2 client, loaded only when HTTP/2 is used; one per call (a closure).
  let h2ClientFor: ((slot: StreamSlot) => UniversalClientFn) | undefined;
  const loadH2Client = async (): Promise<(slot: StreamSlot) => UniversalClientFn> => {
    if (!h2ClientFor) {
      const { createNodeHttpClient } = await import("@connectrpc/connect-node");
      h2ClientFor = (slot) =>
        createNodeHttpClient({ httpVersion: "2", sessionProvider: () => sessions.managerFor(slot) });
    }
    return h2ClientFor;
  };

  // Requests whose body is one message known in advance (unary and server-streaming calls) go out with
  // a Content-Length, as buf sends them, instead of an open-ended (chunked) body. The interceptor sees
  // the method and marks the call's Headers object, which the HTTP client receives.
  const sized = new WeakSet<Headers>();
  const markSized: Interceptor = (next) => (req) => {
    const kind = req.method.methodKind;
    if (kind === "unary" || kind === "server_streaming") sized.add(req.header);
    return next(req);
  };

  const httpClient: UniversalClientFn = async (req) => {
    // Dialing, the TLS handshake and the HTTP/2 preface end with the call's deadline or cancel: a
    // server that accepts and goes silent must not hold a call past its --timeout.
    try {
      await untilAborted(dialer.negotiate(), req.signal);
    } catch (err) {
      throw ended.setupFailure(err, req.signal);
    }
    // gRPC over HTTP/1.1 (a server that negotiated http/1.1) works with servers that send trailers
    // in a chunked body, as buf's client does; others fail with their own error.
    const h2 = dialer.mode === "h2";
    const slot: StreamSlot = {};
    const inner = h2 ? (await loadH2Client())(slot) : h1Client;
    // Connect before the request is logged, so verbose output reads in order (as buf's does).
    try {
      if (h2) await untilAborted(sessions.open(), req.signal);
      else if (firstRequest && !dialer.spare)
        dialer.spare = await untilAborted(dialer.ready(dialer.alpn("http/1.1")), req.signal);
    } catch (err) {
      throw ended.setupFailure(err, req.signal);
    }
    firstRequest = false;
    alignRequestHeaders(s.protocol, req.header);
    const path = new URL(req.url).pathname;
    const encoded = requestTap && path.endsWith(requestTap.suffix) ? requestTap.body : undefined;
    let body = encoded ?? (req.body ? coalesce(req.body) : undefined);
    let send = inner;
    if (!encoded && req.body && sized.has(req.header)) {
      const bytes = await readAll(req.body);
      body = once(bytes);
      // Not in verbose output: buf's transcript leaves Content-Length out too.
      // An empty message goes without one, as buf sends it.
      if (bytes.byteLength > 0) {
        send = (r) => {
          const header = new Headers(r.header);
          header.set("content-length", String(bytes.byteLength));
          return inner({ ...r, header });
        };
      }
    }
    let res: UniversalClientResponse;
    try {
      res = await observe(
        send,
        { ...req, body },
        log,
        h2 ? "2.0" : "1.1",
        () => dialer.failure,
        s.splitHeader,
      );
    } catch (err) {
      const goaway = h2 ? sessions.goaway() : undefined;
      if (goaway && !req.signal?.aborted) throw goAwayError(goaway);
      throwIfResetByServer(slot, req.signal);
      throw ended.peerEnded(h2 ? notHttp2(err) : err, req.signal, true);
    }
    if (slot.session) res = { ...res, body: endedMidBody(res, slot, req.signal, sessions.goaways) };
    res = { ...res, body: ended.mapBodyErrors(boundMessages(res), req.signal) };
    if (tap && path.endsWith(tap.suffix)) return tapMessages(res, tap.tap);
    return res;
  };

  const options: CommonTransportOptions = {
    httpClient,
    baseUrl: s.baseUrl,
    useBinaryFormat: true,
    interceptors: [markSized],
    acceptCompression: [gzip],
    sendCompression: null,
    compressMinBytes: 1024,
    readMaxBytes: MAX_MESSAGE_BYTES,
    writeMaxBytes: 0xffffffff,
  };
  let transport: Transport;
  switch (s.protocol) {
    case "grpc":
      transport = (await import("@connectrpc/connect/protocol-grpc")).createTransport(options);
      break;
    case "grpcweb":
      transport = (await import("@connectrpc/connect/protocol-grpc-web")).createTransport(options);
      break;
    default:
      transport = (await import("@connectrpc/connect/protocol-connect")).createTransport(options);
  }

  return {
    transport: withCallContext(transport, s.protocol),
    httpVersion: () => (dialer.mode === "h2" ? "2" : dialer.mode === "h1" ? "1.1" : undefined),
    tapResponses(pathSuffix, fn) {
      tap = fn ? { suffix: pathSuffix, tap: fn } : undefined;
    },
    tapRequests(pathSuffix, body) {
      requestTap = body ? { suffix: pathSuffix, body } : undefined;
    },
    close() {
      pool.destroy();
      sessions.close();
      dialer.close();
    },
  };
}

/**
 * How a connection the server ended reaches the call, as buf reports it: a reset (RST) is
 * `canceled` (Go's `read tcp a->b: read: connection reset by peer`), a connection closed before the
 * response `unavailable` (`unexpected EOF`), a TLS alert `unavailable`; our own abort stays what it
 * is. (Stream resets and clean closes under a body are worded before: h2-stream-end.ts.)
 */
function connectionEndings(dialer: Dialer, sessions: H2Sessions) {
  const peerEnded = (err: unknown, signal: AbortSignal | undefined, beforeResponse = false): unknown => {
    if (signal?.aborted) return err;
    const alert = tlsAlert(err);
    if (alert) return alert;
    if (beforeResponse && dialer.resetAtDial) return dialer.resetAtDial;
    if (hasCode(err, "ECONNRESET") && !/socket hang up/.test(messageOf(err))) {
      return new ConnectError(
        `read ${dialer.addresses ? `tcp ${dialer.addresses}` : dialer.target}: read: connection reset by peer`,
        Code.Canceled,
      );
    }
    const hangUp = /socket hang up/.test(messageOf(err));
    if (!hangUp && err instanceof ConnectError && err.code === Code.Unavailable) return err;
    const sessionGone = dialer.mode === "h2" && sessions.gone();
    if (beforeResponse && (hangUp || sessionGone)) {
      return new ConnectError("unexpected EOF", Code.Unavailable);
    }
    return err;
  };
  async function* mapBodyErrors(
    src: AsyncIterable<Uint8Array>,
    signal: AbortSignal | undefined,
  ): AsyncIterable<Uint8Array> {
    try {
      yield* src;
    } catch (err) {
      throw peerEnded(err, signal);
    }
  }
  /** A failure while connecting: the abort's own reason, else the dial failure, as `unavailable`. */
  const setupFailure = (err: unknown, signal: AbortSignal | undefined): unknown =>
    signal?.aborted
      ? (signal.reason ?? err)
      : (dialer.failure ?? tlsAlert(err) ?? ConnectError.from(err, Code.Unavailable));
  return { peerEnded, mapBodyErrors, setupFailure };
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of body) parts.push(chunk);
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

/** Wraps one request: verbose lines, batched request body, dial errors as `unavailable`. */
async function observe(
  inner: UniversalClientFn,
  req: UniversalClientRequest,
  log: VerboseLog,
  version: string,
  dialFailure: () => ConnectError | undefined,
  splitHeader?: HeaderSplitter,
): Promise<UniversalClientResponse> {
  const n = log.nextRequest();
  let body = req.body;
  if (log.enabled) {
    const u = new URL(req.url);
    log.line(`> (#${n}) ${req.method} ${u.pathname}${u.search}`);
    logHeaders(log, ">", n, req.header, false, splitHeader);
    log.line(`> (#${n})`);
    if (body)
      body = countBytes(
        body,
        (k) => log.line(`} (#${n}) [${k} bytes data]`),
        () => log.info(`(#${n}) Finished upload`),
      );
  }
  let res: UniversalClientResponse;
  try {
    res = await inner({ ...req, body });
  } catch (err) {
    throw dialFailure() ?? err;
  }
  if (!log.enabled) return res;
  log.line(`< (#${n}) HTTP/${version} ${res.status} ${http.STATUS_CODES[res.status] ?? ""}`.trimEnd());
  // Transfer-Encoding belongs to the HTTP/1.1 framing, which Go's client hides too.
  const shown = new Headers(res.header);
  shown.delete("transfer-encoding");
  logHeaders(log, "<", n, shown);
  log.line(`< (#${n})`);
  const trailer = res.trailer;
  const contentType = res.header.get("content-type") ?? "";
  const scanner = contentType.startsWith("application/grpc-web")
    ? new EnvelopeScanner(0x80)
    : contentType.startsWith("application/connect+")
      ? new EnvelopeScanner(0x02)
      : undefined;
  const responseBody = countBytes(
    res.body,
    (k, chunk) => {
      log.line(`{ (#${n}) [${k} bytes data]`);
      scanner?.push(chunk);
    },
    () => {
      let any = false;
      trailer.forEach(() => {
        any = true;
      });
      if (any) {
        log.line(`< (#${n})`);
        logHeaders(log, "<", n, trailer);
      }
      log.info(`(#${n}) Call complete`);
      const bodyTrailers = scanner?.trailers(contentType.startsWith("application/grpc-web"));
      if (bodyTrailers) {
        log.line(`< (#${n})`);
        logHeaders(log, "<", n, bodyTrailers, true);
      }
    },
  );
  return { ...res, body: responseBody };
}

/** Passes chunks through, reporting each non-empty chunk and the end. */
async function* countBytes(
  src: AsyncIterable<Uint8Array>,
  onChunk: (bytes: number, chunk: Uint8Array) => void,
  onEnd: () => void,
): AsyncIterable<Uint8Array> {
  for await (const chunk of src) {
    if (chunk.byteLength > 0) onChunk(chunk.byteLength, chunk);
    yield chunk;
  }
  onEnd();
}
