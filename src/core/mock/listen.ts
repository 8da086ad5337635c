// Where the mock listens: HTTP/1.1 and HTTP/2 on one port, over TLS (ALPN h2 and http/1.1) or in the
// clear (the first bytes of a connection tell the HTTP/2 preface from HTTP/1.1, so gRPC h2c and
// Connect over HTTP/1.1 share the port). Connections are bounded by the listener's ConnectionGuard
// (headers and idle timeouts, a cap on open connections), so slow or silent clients cannot hold the
// mock. Request bodies are not given the guard's body timeout: a client stream is a body that may
// rightly stay open for as long as the call lasts; the call's own deadline bounds it.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { ProtocallError } from "../errors";
import { ConnectionGuard, type ConnectionLimits } from "../serve/connection-guard";
import { baseUrlOf, listenOn } from "../serve/listen";

export type NodeHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

export interface MockListenerOptions {
  readonly handler: NodeHandler;
  readonly host?: string;
  readonly port?: number;
  readonly tls?: { readonly cert: string; readonly key: string };
  readonly limits?: ConnectionLimits;
}

export interface MockListener {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** A listen error in the words of the mock's flags (a port in use, an address not on this machine). */
function listenFailure(err: NodeJS.ErrnoException, where: string): Error {
  if (err.code === "EADDRINUSE") {
    return new ProtocallError(
      `cannot listen on ${where}: the port is in use; choose another with --port (0: any free port)`,
    );
  }
  if (err.code === "EADDRNOTAVAIL" || err.code === "EACCES") {
    const why = err.code === "EACCES" ? "permission denied" : "no such address on this machine";
    return new ProtocallError(`cannot listen on ${where}: ${why}; check --host and --port`);
  }
  return err;
}

function finiteOrZero(ms: number): number {
  return Number.isFinite(ms) ? ms : 0;
}

export async function startMockListener(options: MockListenerOptions): Promise<MockListener> {
  const guard = new ConnectionGuard({ bodyTimeoutMs: Number.POSITIVE_INFINITY, ...options.limits });
  const onRequest: NodeHandler = (req, res) => {
    if (req.httpVersionMajor !== 2) {
      const conn = guard.of(req.socket);
      guard.requestStarted(conn);
      res.once("close", () => guard.requestFinished(conn));
    }
    options.handler(req, res);
  };
  const h2Settings = { maxConcurrentStreams: 1000 };
  let server: net.Server;
  if (options.tls) {
    const secure = http2.createSecureServer(
      {
        cert: options.tls.cert,
        key: options.tls.key,
        allowHTTP1: true,
        handshakeTimeout: finiteOrZero(guard.headersTimeoutMs),
        settings: h2Settings,
      },
      onRequest as never,
    );
    secure.on("session", (session) => guard.attachSession(session));
    secure.on("connection", (socket: net.Socket) => guard.accept(socket));
    server = secure;
  } else {
    const h1 = http.createServer({ keepAliveTimeout: finiteOrZero(guard.idleTimeoutMs) }, onRequest as never);
    const h2 = http2.createServer({ settings: h2Settings }, onRequest as never);
    h2.on("session", (session) => guard.attachSession(session));
    server = net.createServer({ noDelay: true }, (socket) => {
      guard.accept(socket);
      if (socket.destroyed) return;
      socket.once("data", (chunk: Buffer) => {
        socket.pause();
        socket.unshift(chunk);
        if (chunk.subarray(0, 4).toString("latin1") === "PRI ") {
          h2.emit("connection", socket);
        } else {
          h1.emit("connection", socket);
          socket.resume();
        }
      });
      socket.on("error", () => {});
    });
  }
  let address: net.AddressInfo;
  try {
    address = await listenOn(server, options.port, options.host);
  } catch (err) {
    guard.close();
    throw listenFailure(err as NodeJS.ErrnoException, `${options.host ?? "127.0.0.1"}:${options.port ?? 0}`);
  }
  let closing: Promise<void> | undefined;
  return {
    url: baseUrlOf(address, Boolean(options.tls)),
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        guard.close();
      });
      return closing;
    },
  };
}
