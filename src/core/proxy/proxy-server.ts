// `protocall proxy`'s server: a reverse proxy for Connect, gRPC and gRPC-Web that passes each call
// through byte for byte (headers, body as it flows with back-pressure, trailers; cancellation by
// either side resets the other), on HTTP/1.1 and h2c (or TLS) on one port. HTTP/2 calls go upstream
// over HTTP/2, HTTP/1.1 calls over HTTP/1.1. An HTTP/2 connection is relayed to one of its own
// upstream (h2-relay.ts); only when the upstream cannot be reached that way do its calls go through
// Node's HTTP/2 server and client here. Messages are read on the side (envelopes.ts), and each
// completed call is stored durably before its line is printed. Connections come through the front every
// server of ours has (serve/front-server.ts: the ConnectionGuard's cap, header and idle timeouts);
// request bodies, which may be long streams, are not timed.
import * as http from "node:http";
import * as http2 from "node:http2";
import * as https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { ConnectionGuard, defaultLimits } from "../serve/connection-guard";
import { createFrontServer } from "../serve/front-server";
import { baseUrlOf, listenOn } from "../serve/listen";
import { encodingOf, flat, forwardable, recordCall } from "./call-record";
import { type ProxyProtocol, requestTimeoutMs } from "./call-status";
import type { ProxiedCall } from "./call-store";
import { connectRelayUpstream, relayHttp2 } from "./h2-relay";

export interface ProxyOptions {
  readonly upstream: string;
  readonly port?: number;
  readonly host?: string;
  /** Serve TLS with this certificate (ALPN h2 and http/1.1). */
  readonly tls?: { cert: string; key: string };
  /** Trust for an https upstream: extra authorities (PEM), or no verification. */
  readonly ca?: string;
  readonly insecure?: boolean;
  /** Called with each completed call; the proxy waits for it (the store writes durably here). */
  readonly onCall: (call: Omit<ProxiedCall, "id">) => Promise<void> | void;
  /** Called with a message-decoding error or another problem that did not break a call. */
  readonly onWarning?: (text: string) => void;
}

export interface RunningProxy {
  readonly url: string;
  readonly port: number;
  /** HTTP/2 connections relayed so far (h2-relay.ts); the others took Node's HTTP/2 server. */
  readonly relayed: () => number;
  close(): Promise<void>;
}

function withoutStatus(headers: Record<string, string | number>): Record<string, string | number> {
  const { ":status": _, ...rest } = headers;
  return rest;
}

/**
 * The answer to a call the upstream could not take (refused, reset before answering): `unavailable`
 * in the caller's own protocol, so its client reports it as any server error, naming the upstream.
 */
export function unavailable(
  protocol: ProxyProtocol,
  contentType: string,
  origin: string,
  why: string,
): { headers: Record<string, string | number>; body?: Buffer; trailersOnly: boolean } {
  const message = `protocall proxy: the upstream ${origin} did not answer: ${why}`;
  if (protocol === "grpc") {
    return {
      headers: {
        ":status": 200,
        "content-type": contentType,
        "grpc-status": "14",
        "grpc-message": encodeURIComponent(message),
      },
      trailersOnly: true,
    };
  }
  if (protocol === "grpcweb") {
    const trailer = Buffer.from(`grpc-status: 14\r\ngrpc-message: ${encodeURIComponent(message)}\r\n`);
    const head = Buffer.from([0x80, 0, 0, 0, 0]);
    head.writeUInt32BE(trailer.length, 1);
    return {
      headers: { ":status": 200, "content-type": contentType },
      body: Buffer.concat([head, trailer]),
      trailersOnly: false,
    };
  }
  return {
    headers: { ":status": 503, "content-type": "application/json" },
    body: Buffer.from(JSON.stringify({ code: "unavailable", message })),
    trailersOnly: false,
  };
}

/** The upstream: its URL, trust, the HTTP/1.1 agent and the shared HTTP/2 session. */
interface Upstream {
  readonly url: URL;
  readonly secure: boolean;
  readonly basePath: string;
  readonly agent: http.Agent;
  /** The open HTTP/2 session to the upstream, connecting a new one when there is none. */
  session(): http2.ClientHttp2Session;
  close(): void;
}

function connectUpstream(options: ProxyOptions): Upstream {
  const url = new URL(options.upstream);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`--upstream must be an http:// or https:// URL, got ${options.upstream}`);
  }
  const secure = url.protocol === "https:";
  const trust = { ca: options.ca, rejectUnauthorized: !options.insecure };
  const agent = secure ? new https.Agent({ keepAlive: true, ...trust }) : new http.Agent({ keepAlive: true });
  let current: http2.ClientHttp2Session | undefined;
  const sessions = new Set<http2.ClientHttp2Session>();
  const session = (): http2.ClientHttp2Session => {
    if (current && !current.closed && !current.destroyed) return current;
    const s = http2.connect(url.origin, secure ? { ...trust, ALPNProtocols: ["h2"] } : {});
    s.on("error", (e) => options.onWarning?.(`upstream connection: ${e.message}`));
    s.on("close", () => {
      sessions.delete(s);
      if (current === s) current = undefined;
    });
    s.on("goaway", () => {
      if (current === s) current = undefined;
    });
    sessions.add(s);
    current = s;
    return s;
  };
  return {
    url,
    secure,
    basePath: url.pathname.replace(/\/$/, ""),
    agent,
    session,
    close: () => {
      for (const s of sessions) s.destroy();
      agent.destroy();
    },
  };
}

/**
 * Passes an HTTP/2 call to the upstream over HTTP/2: frames, trailers and resets as they come. Works on
 * the server's own streams (not the request/response compatibility objects, which cost a call about
 * a fifth of the proxy's CPU), and sends trailers exactly when the upstream sent them: none ends the
 * body with its last DATA frame, as the upstream did.
 */
function proxyHttp2(
  down: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  upstream: Upstream,
  options: ProxyOptions,
) {
  const rec = recordCall(headers, String(headers[":path"] ?? "/"), "2", upstream.basePath, options);
  // A reset from the caller also arrives as an error: it is handled on "close" (the upstream stream
  // is reset in turn), and must not end the process.
  down.on("error", () => {});
  down.on("data", (c: Buffer) => rec.sent.push(c));
  /** Set once the proxy answered for an upstream that did not. */
  let answered = false;
  let up: http2.ClientHttp2Stream;
  try {
    up = upstream.session().request({
      ...forwardable(headers, true),
      ":method": headers[":method"] ?? "POST",
      ":path": rec.path,
      ":scheme": upstream.url.protocol.slice(0, -1),
      ":authority": upstream.url.host,
    });
  } catch (e) {
    rec.error = (e as Error).message;
    down.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    rec.finish();
    return;
  }
  let upTrailers: http2.IncomingHttpHeaders = {};
  down.pipe(up);
  up.on("response", (h, flags) => {
    rec.httpStatus = Number(h[":status"]);
    rec.responseHeaders = flat(h);
    rec.received.encoding = encodingOf(rec.protocol, rec.enveloped, h);
    if (down.destroyed) return;
    if (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) {
      // A trailers-only answer (gRPC errors): one HEADERS frame that ends the stream, as sent.
      down.respond({ ...forwardable(h), ":status": rec.httpStatus }, { endStream: true });
      return;
    }
    down.respond({ ...forwardable(h), ":status": rec.httpStatus }, { waitForTrailers: true });
    up.on("data", (c: Buffer) => rec.received.push(c));
    up.pipe(down);
  });
  up.on("trailers", (t) => {
    upTrailers = t;
    rec.trailers = flat(t);
  });
  // No trailers from the upstream: an empty trailer block goes out as an empty DATA frame that ends
  // the stream, which is what the upstream sent.
  down.on("wantTrailers", () => down.sendTrailers(forwardable(upTrailers)));
  up.on("error", (e) => {
    rec.error = e.message;
    if (down.destroyed) return;
    if (!down.headersSent && rec.httpStatus === 0) {
      answered = true;
      const answer = unavailable(rec.protocol, rec.contentType, upstream.url.origin, e.message);
      if (answer.trailersOnly) down.respond(answer.headers, { endStream: true });
      else {
        down.respond(answer.headers);
        down.end(answer.body ?? "");
      }
    } else {
      rec.reset ??= { by: "upstream", code: up.rstCode || http2.constants.NGHTTP2_INTERNAL_ERROR };
      down.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    }
  });
  up.on("close", () => {
    const code = up.rstCode;
    if (code && code !== http2.constants.NGHTTP2_NO_ERROR && !answered) {
      rec.reset ??= { by: "upstream", code };
      if (!down.destroyed) down.close(code);
    }
    rec.finish();
  });
  down.on("close", () => {
    const code = down.rstCode;
    if (code && code !== http2.constants.NGHTTP2_NO_ERROR) {
      rec.reset ??= { by: "client", code, timeoutMs: requestTimeoutMs(headers), elapsedMs: rec.elapsedMs() };
    }
    if (!up.closed) up.close(code || http2.constants.NGHTTP2_CANCEL);
    rec.finish();
  });
}

/** Passes an HTTP/1.1 call to the upstream over HTTP/1.1 (keep-alive agent). */
function proxyHttp1(
  req: http.IncomingMessage,
  r1: http.ServerResponse,
  upstream: Upstream,
  options: ProxyOptions,
) {
  const rec = recordCall(req.headers, req.url ?? "/", "1.1", upstream.basePath, options);
  req.on("data", (c: Buffer) => rec.sent.push(c));
  const url = upstream.url;
  const upReq = (upstream.secure ? https : http).request({
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port,
    method: req.method,
    path: rec.path,
    headers: { ...forwardable(req.headers), host: url.host },
    agent: upstream.agent,
  });
  req.pipe(upReq);
  upReq.on("response", (upRes) => {
    rec.httpStatus = upRes.statusCode ?? 0;
    rec.responseHeaders = flat(upRes.headers);
    rec.received.encoding = encodingOf(rec.protocol, rec.enveloped, upRes.headers);
    r1.writeHead(rec.httpStatus, forwardable(upRes.headers));
    upRes.on("data", (c: Buffer) => rec.received.push(c));
    upRes.pipe(r1);
    upRes.on("end", () => {
      rec.trailers = flat(upRes.trailers);
    });
    upRes.on("error", (e) => {
      rec.error = e.message;
      r1.destroy();
    });
  });
  upReq.on("error", (e) => {
    rec.error = e.message;
    if (!r1.headersSent) {
      const answer = unavailable(rec.protocol, rec.contentType, url.origin, e.message);
      r1.writeHead(answer.headers[":status"] as number, withoutStatus(answer.headers));
      r1.end(answer.body);
    } else r1.destroy();
  });
  r1.on("close", () => {
    if (!r1.writableFinished) upReq.destroy();
    rec.finish();
  });
}

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const upstream = connectUpstream(options);
  const guard = new ConnectionGuard(defaultLimits);
  /** The upstream side of each relayed connection (closed with the proxy). */
  const relays = new Set<Socket>();
  let relayed = 0;
  const takeHttp2 = (client: Socket, fallback: () => void) => {
    connectRelayUpstream(upstream.url, options).then((up) => {
      if (!up || client.destroyed) {
        up?.destroy();
        if (!client.destroyed) fallback();
        return;
      }
      relayed++;
      relays.add(up);
      up.once("close", () => relays.delete(up));
      relayHttp2(client, up, { proxy: options, upstreamUrl: upstream.url, guard });
    });
    return true;
  };
  // HTTP/2 connections are relayed (h2-relay.ts), or when the upstream cannot be reached that way
  // pass on as streams; HTTP/1.1 calls as requests.
  const server = createFrontServer({
    guard,
    tls: options.tls,
    takeHttp2,
    onStream: (stream, headers) => proxyHttp2(stream, headers, upstream, options),
    onRequest: (req, res) =>
      proxyHttp1(req as http.IncomingMessage, res as http.ServerResponse, upstream, options),
  });
  let address: AddressInfo;
  try {
    address = await listenOn(server, options.port, options.host);
  } catch (e) {
    guard.close();
    upstream.close();
    throw e;
  }
  return {
    url: baseUrlOf(address, Boolean(options.tls)),
    port: address.port,
    relayed: () => relayed,
    close: () =>
      new Promise<void>((resolve) => {
        upstream.close();
        for (const up of relays) up.destroy();
        server.close(() => resolve());
        guard.close();
      }),
  };
}
