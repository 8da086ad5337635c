// `protocall proxy`'s server: a reverse proxy for Connect, gRPC and gRPC-Web that passes each call
// through byte for byte (headers, body as it flows with back-pressure, trailers; cancellation by
// either side resets the other), on HTTP/1.1 and h2c (or TLS) on one port. HTTP/2 calls go upstream
// over HTTP/2, HTTP/1.1 calls over HTTP/1.1. Messages are read on the side (envelopes.ts), and each
// completed call is stored durably before its line is printed.
import * as http from "node:http";
import * as http2 from "node:http2";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import { callStatus, detectProtocol, type ProxyProtocol } from "./call-status";
import type { ProxiedCall } from "./call-store";
import { envelopeReader } from "./envelopes";

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
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "http2-settings",
  "te",
  "host",
]);

function forwardable(headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders, keepTe = false) {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || k.startsWith(":")) continue;
    if (HOP_BY_HOP.has(k) && !(keepTe && k === "te" && v === "trailers")) continue;
    out[k] = v as string | string[];
  }
  return out;
}

function flat(headers: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || k.startsWith(":")) continue;
    out[k] = Array.isArray(v) ? v.join(", ") : String(v);
  }
  return out;
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

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const upstream = new URL(options.upstream);
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") {
    throw new Error(`--upstream must be an http:// or https:// URL, got ${options.upstream}`);
  }
  const secureUp = upstream.protocol === "https:";
  const trust = { ca: options.ca, rejectUnauthorized: !options.insecure };
  const agent = secureUp
    ? new https.Agent({ keepAlive: true, ...trust })
    : new http.Agent({ keepAlive: true });
  let session: http2.ClientHttp2Session | undefined;
  const sessions = new Set<http2.ClientHttp2Session>();
  function upstreamSession(): http2.ClientHttp2Session {
    if (session && !session.closed && !session.destroyed) return session;
    const s = http2.connect(upstream.origin, secureUp ? { ...trust, ALPNProtocols: ["h2"] } : {});
    s.on("error", (e) => options.onWarning?.(`upstream connection: ${e.message}`));
    s.on("close", () => {
      sessions.delete(s);
      if (session === s) session = undefined;
    });
    s.on("goaway", () => {
      if (session === s) session = undefined;
    });
    sessions.add(s);
    session = s;
    return s;
  }
  const basePath = upstream.pathname.replace(/\/$/, "");

  const handler = (
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ) => {
    const started = performance.now();
    const startedAt = new Date().toISOString();
    const h2 = req.httpVersionMajor === 2;
    const contentType = String(req.headers["content-type"] ?? "");
    const protocol = detectProtocol(contentType);
    const enveloped = protocol !== "connect" || contentType.startsWith("application/connect+");
    const sent = envelopeReader(enveloped);
    const received = envelopeReader(enveloped);
    const path = basePath + (req.url ?? "/");
    let httpStatus = 0;
    let responseHeaders: Record<string, string> = {};
    let trailers: Record<string, string> = {};
    let error: string | undefined;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      sent.end();
      received.end();
      const call: Omit<ProxiedCall, "id"> = {
        startedAt,
        upstream: options.upstream,
        method: (req.url ?? "/").split("?")[0].replace(/^\//, ""),
        protocol,
        httpVersion: h2 ? "2" : "1.1",
        httpStatus,
        status: callStatus({ protocol, httpStatus, responseHeaders, trailers, received, error }),
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        requestBytes: sent.bytes,
        responseBytes: received.bytes,
        requestHeaders: flat(req.headers),
        responseHeaders,
        trailers,
        requestMessages: sent.messages.map((m) => m.toString("base64")),
        responseMessages: received.messages.map((m) => m.toString("base64")),
        truncated: sent.truncated || received.truncated,
        ...(error ? { error } : {}),
      };
      Promise.resolve(options.onCall(call)).catch((e) => options.onWarning?.(`storing a call: ${e}`));
    };
    req.on("data", (c: Buffer) => sent.push(c));

    if (h2) {
      const r2 = res as http2.Http2ServerResponse;
      /** Set once the proxy answered for an upstream that did not. */
      let answered = false;
      let up: http2.ClientHttp2Stream;
      try {
        up = upstreamSession().request({
          ...forwardable(req.headers, true),
          ":method": req.method ?? "POST",
          ":path": path,
          ":scheme": upstream.protocol.slice(0, -1),
          ":authority": upstream.host,
        });
      } catch (e) {
        error = (e as Error).message;
        r2.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        finish();
        return;
      }
      req.pipe(up);
      up.on("response", (headers, flags) => {
        httpStatus = Number(headers[":status"]);
        responseHeaders = flat(headers);
        if (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) {
          // A trailers-only answer (gRPC errors): one HEADERS frame that ends the stream, as sent.
          if (!r2.stream.destroyed)
            r2.stream.respond({ ...forwardable(headers), ":status": httpStatus }, { endStream: true });
          return;
        }
        r2.writeHead(httpStatus, forwardable(headers));
        up.on("data", (c: Buffer) => received.push(c));
        up.pipe(r2);
      });
      up.on("trailers", (t) => {
        trailers = flat(t);
        r2.addTrailers(forwardable(t));
      });
      up.on("error", (e) => {
        error = e.message;
        if (!r2.stream.destroyed) {
          if (!r2.headersSent && httpStatus === 0) {
            answered = true;
            const answer = unavailable(protocol, contentType, upstream.origin, e.message);
            if (answer.trailersOnly) r2.stream.respond(answer.headers, { endStream: true });
            else {
              r2.writeHead(answer.headers[":status"] as number, withoutStatus(answer.headers));
              r2.end(answer.body ?? "");
            }
          } else r2.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
        }
      });
      up.on("close", () => {
        const code = up.rstCode;
        if (code && code !== http2.constants.NGHTTP2_NO_ERROR && !answered && !r2.stream.destroyed) {
          r2.stream.close(code);
        }
        finish();
      });
      r2.stream.on("close", () => {
        if (!up.closed) up.close(r2.stream.rstCode || http2.constants.NGHTTP2_CANCEL);
        finish();
      });
      return;
    }

    const r1 = res as http.ServerResponse;
    const upReq = (secureUp ? https : http).request({
      protocol: upstream.protocol,
      hostname: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path,
      headers: { ...forwardable(req.headers), host: upstream.host },
      agent,
    });
    req.pipe(upReq);
    upReq.on("response", (upRes) => {
      httpStatus = upRes.statusCode ?? 0;
      responseHeaders = flat(upRes.headers);
      r1.writeHead(httpStatus, forwardable(upRes.headers));
      upRes.on("data", (c: Buffer) => received.push(c));
      upRes.pipe(r1);
      upRes.on("end", () => {
        trailers = flat(upRes.trailers);
      });
      upRes.on("error", (e) => {
        error = e.message;
        r1.destroy();
      });
    });
    upReq.on("error", (e) => {
      error = e.message;
      if (!r1.headersSent) {
        const answer = unavailable(protocol, contentType, upstream.origin, e.message);
        r1.writeHead(answer.headers[":status"] as number, withoutStatus(answer.headers));
        r1.end(answer.body);
      } else r1.destroy();
    });
    r1.on("close", () => {
      if (!r1.writableFinished) upReq.destroy();
      finish();
    });
  };

  const sockets = new Set<net.Socket>();
  let server: net.Server;
  if (options.tls) {
    server = http2.createSecureServer({ ...options.tls, allowHTTP1: true }, handler);
  } else {
    // One cleartext port for both HTTP/1.1 and HTTP/2 with prior knowledge: the first bytes of a
    // connection tell which ("PRI * HTTP/2.0" is the HTTP/2 preface), as the listener does.
    const h1 = http.createServer(handler);
    const h2 = http2.createServer(handler);
    server = net.createServer((socket) => {
      socket.on("error", () => {});
      socket.once("data", (chunk: Buffer) => {
        socket.pause();
        socket.unshift(chunk);
        if (chunk.subarray(0, 4).toString("latin1") === "PRI ") h2.emit("connection", socket);
        else {
          h1.emit("connection", socket);
          socket.resume();
        }
      });
    });
  }
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `${options.tls ? "https" : "http"}://${shownHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        agent.destroy();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
