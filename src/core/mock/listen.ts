// Where the mock listens: the front every server of ours has (serve/front-server.ts: HTTP/1.1 and
// HTTP/2 on one port, TLS or cleartext, every connection under the ConnectionGuard's cap and
// timeouts), so slow or silent clients cannot hold the mock. Request bodies are not given the guard's body timeout: a client stream is a body that may
// rightly stay open for as long as the call lasts; the call's own deadline bounds it.
import type http from "node:http";
import type http2 from "node:http2";
import type net from "node:net";
import { ProtocallError } from "../errors";
import { ConnectionGuard, type ConnectionLimits } from "../serve/connection-guard";
import { createFrontServer } from "../serve/front-server";
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

export async function startMockListener(options: MockListenerOptions): Promise<MockListener> {
  const guard = new ConnectionGuard({ bodyTimeoutMs: Number.POSITIVE_INFINITY, ...options.limits });
  const server = createFrontServer({
    guard,
    tls: options.tls,
    onRequest: options.handler,
    h2Settings: { maxConcurrentStreams: 1000 },
  });
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
