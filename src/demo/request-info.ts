// What the demo server knows about the HTTP request behind an RPC, for DemoService.Inspect.
import type * as http from "node:http";
import type * as http2 from "node:http2";
import type { TLSSocket } from "node:tls";
import { createContextKey, createContextValues, type Interceptor } from "@connectrpc/connect";

export interface RequestInfo {
  /** Header names (lower case) and values, in the order received. */
  headers: [string, string][];
  httpVersion: string;
  path: string;
  /** Subject CN of the verified client certificate, or "". */
  clientCertificate: string;
}

export const requestInfoKey = createContextKey<RequestInfo>({
  headers: [],
  httpVersion: "",
  path: "",
  clientCertificate: "",
});

/** What one demo server remembers across requests. */
export interface ServerState {
  /** The headers of the latest server reflection request. */
  lastReflectionHeaders: [string, string][];
}

export const serverStateKey = createContextKey<ServerState>({ lastReflectionHeaders: [] });

export function requestInfoValues(req: http.IncomingMessage | http2.Http2ServerRequest, state?: ServerState) {
  const headers: [string, string][] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    // HTTP/2 carries the host in the :authority pseudo-header; report it as HTTP/1.1 does.
    if (name === ":authority") headers.push(["host", raw[i + 1]]);
    else if (!name.startsWith(":")) headers.push([name, raw[i + 1]]);
  }
  let clientCertificate = "";
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate === "function") {
    const subject = socket.getPeerCertificate().subject as { CN?: string | string[] } | undefined;
    const cn = subject?.CN;
    clientCertificate = Array.isArray(cn) ? cn.join(",") : (cn ?? "");
  }
  const values = createContextValues();
  if (state) values.set(serverStateKey, state);
  return values.set(requestInfoKey, {
    headers,
    httpVersion: req.httpVersion,
    path: req.url ?? "",
    clientCertificate,
  });
}

/** Remembers the headers of each server reflection request in the server's state. */
export const recordReflectionHeaders: Interceptor = (next) => async (req) => {
  if (req.service.typeName.startsWith("grpc.reflection.")) {
    req.contextValues.get(serverStateKey).lastReflectionHeaders =
      req.contextValues.get(requestInfoKey).headers;
  }
  return next(req);
};
