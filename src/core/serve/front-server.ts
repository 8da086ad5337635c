// The front of every server we run (the listener, the registry emulator, the mock, the proxy): one
// port for HTTP/1.1 and HTTP/2, over TLS (ALPN h2 and http/1.1; no ALPN is HTTP/1.1) or in the clear
// (the first bytes of a connection tell the HTTP/2 preface "PRI * HTTP/2.0" from HTTP/1.1, so gRPC
// over h2c and Connect over HTTP/1.1 share the port). Every connection is under the ConnectionGuard:
// a cap on open connections (a cleartext one over the cap is answered from its first bytes, a 503 or
// a GOAWAY, rather than reset), header and idle timeouts, and each request counted on its connection.
// HTTP/2 requests arrive as Node's request/response objects, or, for a server that passes streams on
// as they are (the proxy), as the streams themselves; a server may also take HTTP/2 connections whole
// (`takeHttp2`: the proxy's relay).
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import * as tls from "node:tls";
import type { ConnectionGuard } from "./connection-guard";
import { expectContinue, type NodeReq, type NodeRes } from "./refusal";

export interface FrontServerOptions {
  readonly guard: ConnectionGuard;
  /** Serve TLS with this certificate and key (PEM). */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /** Each request (HTTP/1.1, and HTTP/2 unless `onStream` takes those). */
  readonly onRequest: (req: NodeReq, res: NodeRes) => void;
  /** Each HTTP/2 stream, as it is (no request/response objects are made for it). */
  readonly onStream?: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;
  /** The HTTP/2 settings the server sends (e.g. its maxConcurrentStreams). */
  readonly h2Settings?: http2.Settings;
  /** Requests that ask `Expect: 100-continue` reach `onRequest` before anything is read (refusal.ts). */
  readonly expectContinue?: boolean;
  /** Called with the HTTP/2 server once it is made, before any connection (e.g. to take some streams first). */
  readonly withHttp2Server?: (server: http2.Http2Server) => void;
  /**
   * Offered each HTTP/2 connection (h2c preface, or TLS with ALPN h2) before the HTTP/2 server gets it,
   * its first bytes unread (the proxy relays such connections itself). True takes it: the connection
   * stays under the guard, and `fallback()` hands it to the HTTP/2 server after all.
   */
  readonly takeHttp2?: (socket: net.Socket, fallback: () => void) => boolean;
}

/** Node's timeout options take 0 for none. */
function finiteOrZero(ms: number): number {
  return Number.isFinite(ms) ? ms : 0;
}

export function createFrontServer(o: FrontServerOptions): net.Server {
  const { guard } = o;
  // HTTP/1.1 requests are counted here; HTTP/2 streams on their session (guard.attachSession).
  const onHttp1 = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const conn = guard.of(req.socket);
    guard.requestStarted(conn);
    res.once("close", () => guard.requestFinished(conn));
    o.onRequest(req, res);
  };
  const h1 = http.createServer({ keepAliveTimeout: finiteOrZero(guard.idleTimeoutMs) }, onHttp1);
  const h2 = o.onStream
    ? http2.createServer({ settings: o.h2Settings })
    : http2.createServer({ settings: o.h2Settings }, o.onRequest as never);
  if (o.onStream) h2.on("stream", o.onStream);
  h2.on("session", (session) => guard.attachSession(session));
  if (o.expectContinue) {
    expectContinue(h1, onHttp1 as never);
    if (!o.onStream) expectContinue(h2, o.onRequest);
  }
  o.withHttp2Server?.(h2);
  const toHttp2 = (socket: net.Socket) => {
    const fallback = () => h2.emit("connection", socket);
    if (!o.takeHttp2?.(socket, fallback)) fallback();
  };

  if (o.tls) {
    const secure = tls.createServer({
      cert: o.tls.cert,
      key: o.tls.key,
      ALPNProtocols: ["h2", "http/1.1"],
      handshakeTimeout: finiteOrZero(guard.headersTimeoutMs),
    });
    secure.on("connection", (socket: net.Socket) => guard.accept(socket));
    secure.on("secureConnection", (socket: tls.TLSSocket) => {
      socket.on("error", () => {});
      if (socket.alpnProtocol === "h2") toHttp2(socket);
      else h1.emit("connection", socket);
    });
    // A handshake that fails (a client that does not trust the certificate) ends that connection only.
    secure.on("tlsClientError", () => {});
    return secure;
  }
  return net.createServer({ noDelay: true }, (socket) => {
    socket.on("error", () => {});
    // Answerable: at the connection cap, the guard decides from the first bytes (see admit).
    if (!guard.accept(socket, true)) return;
    socket.once("data", (chunk: Buffer) => {
      socket.pause();
      if (!guard.admit(socket, chunk)) return;
      // Put the bytes back: both servers take over a socket that already holds buffered data (the
      // HTTP/2 session reads it out of the socket's buffer when it starts).
      socket.unshift(chunk);
      if (chunk.subarray(0, 4).toString("latin1") === "PRI ") toHttp2(socket);
      else {
        h1.emit("connection", socket);
        socket.resume();
      }
    });
  });
}
