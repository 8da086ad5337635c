// An HTTP/1.1 client for the Connect transports (a UniversalClientFn), on Node's `http` module only.
// connect-node has one too, but loading it loads `node:http2` as well (about 20 ms), which a call over
// HTTP/1.1 never uses; `protocall curl` must start nearly as fast as the native `buf curl`.
// Connections come from the given pool (which dials with our TLS and socket settings).
import * as http from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import type {
  UniversalClientFn,
  UniversalClientRequest,
  UniversalClientResponse,
} from "@connectrpc/connect/protocol";
import { bodyCutShort } from "./body-cut-short";
import { type HeaderSplitter, splitNodeHeaders } from "./repeated-headers";
import { canonicalHeaderName } from "./verbose";

export interface Http1ClientOptions {
  /** The connection pool. */
  pool: http.Agent;
  /** Overrides the Host header (from a `Host:` request header). */
  host?: string;
  /** Sends the values of a repeated header name as separate fields. */
  splitHeader?: HeaderSplitter;
}

export function createHttp1Client(options: Http1ClientOptions): UniversalClientFn {
  return (req) => request(req, options);
}

function request(req: UniversalClientRequest, options: Http1ClientOptions): Promise<UniversalClientResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.url);
    const headers = goOrderedHeaders(req.header, options.host ?? url.host);
    splitNodeHeaders(headers, options.splitHeader);
    let settled = false;
    const nodeReq = http.request({
      protocol: url.protocol,
      hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port || (url.protocol === "https:" ? 443 : 80),
      path: url.pathname + url.search,
      method: req.method,
      headers,
      agent: options.pool,
    });
    const fail = (err: unknown) => {
      const ce = toConnectError(err);
      if (!settled) {
        settled = true;
        reject(ce);
      }
      nodeReq.destroy(ce);
    };
    const signal = req.signal;
    const onAbort = () => fail(signal?.reason ?? new ConnectError("the call was canceled", Code.Canceled));
    if (signal) {
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
    }
    nodeReq.on("error", fail);
    nodeReq.on("response", (res) => {
      settled = true;
      const header = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        if (Array.isArray(value)) for (const v of value) header.append(name, v);
        else header.append(name, value);
      }
      const trailer = new Headers();
      resolve({
        status: res.statusCode ?? 0,
        header,
        trailer,
        body: responseBody(res, trailer, () => signal?.removeEventListener("abort", onAbort)),
      });
    });
    void sendBody(req.body, nodeReq).catch(fail);
  });
}

/**
 * The request headers in the order and spelling of Go's HTTP/1.1 client, which buf uses: Host,
 * User-Agent, Content-Length (or Transfer-Encoding: chunked when the length is not known), then the
 * other headers sorted, all names in canonical case (`Content-Type`). Node then adds only
 * `Connection: keep-alive`, which Go leaves implicit.
 */
function goOrderedHeaders(header: Headers, host: string): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = { Host: host };
  const userAgent = header.get("user-agent");
  if (userAgent !== null) out["User-Agent"] = userAgent;
  const length = header.get("content-length");
  if (length !== null) out["Content-Length"] = length;
  else out["Transfer-Encoding"] = "chunked";
  const rest: [string, string][] = [];
  header.forEach((value, name) => {
    if (name !== "user-agent" && name !== "content-length" && name !== "host" && name !== "transfer-encoding")
      rest.push([canonicalHeaderName(name), value]);
  });
  rest.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (const [name, value] of rest) out[name] = value;
  return out;
}

async function sendBody(
  body: AsyncIterable<Uint8Array> | undefined,
  nodeReq: http.ClientRequest,
): Promise<void> {
  if (body) {
    for await (const chunk of body) {
      if (nodeReq.destroyed) return;
      if (!nodeReq.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            nodeReq.off("drain", done);
            nodeReq.off("close", done);
            resolve();
          };
          nodeReq.once("drain", done);
          nodeReq.once("close", done);
        });
      }
    }
  }
  if (!nodeReq.destroyed) nodeReq.end();
}

async function* responseBody(
  res: http.IncomingMessage,
  trailer: Headers,
  done: () => void,
): AsyncIterable<Uint8Array> {
  // Node reports a body cut short the same way (ECONNRESET, "aborted") whether the server reset the
  // connection or closed it cleanly; buf tells them apart (`canceled` for a reset, "unexpected EOF"
  // for a close), so whether the socket failed is noted here.
  const socket = res.socket;
  let socketFailed = false;
  const onSocketError = () => {
    socketFailed = true;
  };
  socket?.once("error", onSocketError);
  try {
    for await (const chunk of res) yield chunk as Uint8Array;
    if (!res.complete)
      throw new ConnectError("the server closed the connection before the response ended", Code.Unavailable);
    for (const [name, value] of Object.entries(res.trailers))
      if (value !== undefined) trailer.append(name, value);
  } catch (err) {
    const cut = (err as NodeJS.ErrnoException)?.code === "ECONNRESET" && !(err instanceof ConnectError);
    if (cut && !socketFailed && !res.complete) throw bodyCutShort("unexpected EOF");
    throw toConnectError(err);
  } finally {
    socket?.off("error", onSocketError);
    done();
  }
}

function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ABORT_ERR") return new ConnectError("the call was canceled", Code.Canceled);
  return ConnectError.from(err, Code.Unavailable);
}
