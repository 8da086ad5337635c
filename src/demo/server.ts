// The demo server: demo.v1.GreetService and demo.v1.DemoService over Connect, gRPC and gRPC-Web, on
// HTTP/1.1 and h2c (one port), or TLS with ALPN h2 and http/1.1, or a Unix socket, with server
// reflection (v1 and v1alpha) attached. Used by `npm start`, by the tests and by the benchmarks.
import { rmSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { DemoService, file_demo_v1_demo } from "../gen/demo/v1/demo_pb";
import { file_demo_v1_greet, GreetService } from "../gen/demo/v1/greet_pb";
import { file_google_rpc_error_details } from "../gen/google/rpc/error_details_pb";
import { demoService } from "./demo-service";
import { greetService } from "./greet-service";
import { recordReflectionHeaders, requestInfoValues, type ServerState } from "./request-info";

export interface DemoServerOptions {
  /** Plain-text HTTP versions served (ignored with `tls`): default "both" (HTTP/1.1 and h2c, one port). */
  http?: "1.1" | "h2c" | "both";
  /**
   * Serve HTTPS. ALPN offers h2 and http/1.1 unless `http` is "1.1" (http/1.1 only) or "h2c" (h2 only).
   * With `requestClientCert`, a client certificate signed by `ca` is required (mutual TLS).
   */
  tls?: { cert: string; key: string; ca?: string; requestClientCert?: boolean };
  /** Listen on this Unix socket instead of TCP. */
  unixSocket?: string;
  /** Reflection versions to serve; default both, `false` for none. */
  reflection?: ("v1" | "v1alpha")[] | false;
  /** Serve every RPC under this path prefix (for example "/api"). */
  pathPrefix?: string;
  /** TCP port; default 0 (any free port). */
  port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
}

export interface DemoServer {
  /** The base URL, with the path prefix: `http://127.0.0.1:41234`, `https://127.0.0.1:41234/api`. */
  readonly url: string;
  /** The TCP port (0 for a Unix socket). */
  readonly port: number;
  /** The Unix socket path, when listening on one. */
  readonly unixSocket?: string;
  /** Stops listening and closes every open connection. */
  close(): Promise<void>;
}

/** The demo services' files, for anyone who needs their descriptors. */
export const demoFiles = [file_demo_v1_demo, file_demo_v1_greet];

/** What reflection serves: the demo files and the google.rpc error details they send. */
const reflectedFiles = [...demoFiles, file_google_rpc_error_details];

async function routes(reflection: ("v1" | "v1alpha")[]) {
  // Loaded only when asked for, so the demo services work on their own.
  const reflect = reflection.length > 0 ? await import("../core/schema/reflection-server") : undefined;
  return (router: ConnectRouter) => {
    router.service(GreetService, greetService);
    router.service(DemoService, demoService);
    reflect?.registerReflection(router, reflectedFiles, { versions: reflection });
  };
}

/** The first bytes of an HTTP/2 connection preface; no HTTP/1.1 method starts with them. */
const h2Preface = Buffer.from("PRI * HTTP/2.0");

/** Serves HTTP/1.1 and h2c on one port by looking at the first bytes of each connection. */
function sniffingServer(handler: http.RequestListener & ((...args: never[]) => void)): net.Server {
  const h1 = http.createServer(handler as http.RequestListener);
  const h2 = http2.createServer(
    handler as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  );
  return net.createServer((socket) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const n = Math.min(head.length, h2Preface.length);
      const isH2 = head.subarray(0, n).equals(h2Preface.subarray(0, n));
      if (isH2 && head.length < h2Preface.length) return; // need more bytes to decide
      socket.off("data", onData);
      if (isH2) {
        // The HTTP/2 session reads `socket.readableLength` (on the next tick) before it consumes the
        // socket, so the bytes are put back into the stream buffer.
        socket.pause();
        socket.unshift(head);
        h2.emit("connection", socket);
      } else {
        // The HTTP/1.1 parser consumes the socket's handle directly; the bytes already read are fed to
        // its data listener before any more can arrive (same tick).
        h1.emit("connection", socket);
        socket.emit("data", head);
      }
    };
    socket.on("data", onData);
    socket.on("error", () => socket.destroy());
  });
}

export async function startDemoServer(options: DemoServerOptions = {}): Promise<DemoServer> {
  const reflection = options.reflection === false ? [] : (options.reflection ?? ["v1", "v1alpha"]);
  const prefix = (options.pathPrefix ?? "").replace(/\/+$/, "");
  const state: ServerState = { lastReflectionHeaders: [] };
  const handler = connectNodeAdapter({
    routes: await routes(reflection),
    requestPathPrefix: prefix || undefined,
    contextValues: (req) => requestInfoValues(req, state),
    interceptors: [recordReflectionHeaders],
  });
  const mode = options.http ?? "both";

  let server: net.Server;
  if (options.tls) {
    const tls = {
      cert: options.tls.cert,
      key: options.tls.key,
      ca: options.tls.ca,
      requestCert: options.tls.requestClientCert === true,
      rejectUnauthorized: options.tls.requestClientCert === true,
    };
    server =
      mode === "1.1"
        ? https.createServer(tls, handler as http.RequestListener)
        : http2.createSecureServer({ ...tls, allowHTTP1: mode === "both" }, handler as never);
  } else if (mode === "1.1") {
    server = http.createServer(handler as http.RequestListener);
  } else if (mode === "h2c") {
    server = http2.createServer(handler as never);
  } else {
    server = sniffingServer(handler as never);
  }

  const sockets = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  if (options.unixSocket) rmSync(options.unixSocket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const onListening = () => {
      server.off("error", reject);
      resolve();
    };
    if (options.unixSocket) server.listen(options.unixSocket, onListening);
    else server.listen(options.port ?? 0, options.host ?? "127.0.0.1", onListening);
  });

  const address = server.address();
  const port = address && typeof address === "object" ? (address as AddressInfo).port : 0;
  const host = options.unixSocket ? "localhost" : (options.host ?? "127.0.0.1");
  const hostPart = host.includes(":") ? `[${host}]` : host;
  const scheme = options.tls ? "https" : "http";
  const url = `${scheme}://${hostPart}${port ? `:${port}` : ""}${prefix}`;

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    unixSocket: options.unixSocket,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }).then(() => {
        if (options.unixSocket) rmSync(options.unixSocket, { force: true });
      });
      return closed;
    },
  };
}
