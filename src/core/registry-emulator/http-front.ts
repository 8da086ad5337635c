// The emulator's HTTP server: HTTP/1.1 (what buf uses for registry calls) and HTTP/2 on one port, over
// https (ALPN) or http (the first bytes tell an HTTP/2 preface from HTTP/1.1). Before a request body is
// read, it checks, in this order:
//   1. the path is an RPC the emulator serves, else `unimplemented` (501, Connect error JSON);
//   2. the bearer token belongs to a configured user, else `unauthenticated` (401);
//   3. the declared body size is within the RPC's limit, else `resource_exhausted` (413);
// and while reading, that the body stays within the limit (413 as soon as it does not). A refused
// request's body is never buffered: the connection is closed (HTTP/1.1) or the stream reset (HTTP/2).
// The bytes then go to the Connect handler of the RPC (Connect unary binary and JSON, gRPC, gRPC-Web),
// with the signed-in user in the call's context values.
import type http from "node:http";
import type http2 from "node:http2";
import type net from "node:net";
import { Code, type ContextValues, createContextKey, createContextValues } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { universalResponseToNodeResponse } from "@connectrpc/connect-node";
import { errorMessage } from "../errors";
import { ConnectionGuard, defaultLimits } from "../serve/connection-guard";
import { createFrontServer } from "../serve/front-server";
import { baseUrlOf, listenOn } from "../serve/listen";
import { continueBody, endRefusedStream, lingerOnClose } from "../serve/refusal";
import type { RegistryUser } from "./config";
import { asClientFault } from "./decode-errors";

export interface FrontRoute {
  readonly handler: UniversalHandler;
  /** Largest request body accepted for this RPC, in bytes. */
  readonly maxBodyBytes: number;
}

export interface FrontOptions {
  /** RPCs by URL path (`/package.Service/Method`). */
  readonly routes: ReadonlyMap<string, FrontRoute>;
  /** The user of a token, or undefined. */
  userByToken(token: string): RegistryUser | undefined;
  /** The `unimplemented` message for a path that is not served. */
  unimplemented(path: string): string;
  readonly host?: string;
  readonly port?: number;
  readonly tls?: { readonly cert: string; readonly key: string };
}

export interface Front {
  /** Base URL, e.g. `https://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** The signed-in user of a call (set before the handler runs). */
export const callerKey = createContextKey<RegistryUser | undefined>(undefined);

type NodeReq = http.IncomingMessage | http2.Http2ServerRequest;
type NodeRes = http.ServerResponse | http2.Http2ServerResponse;

const statusOf: Partial<Record<Code, number>> = {
  [Code.Unimplemented]: 501,
  [Code.Unauthenticated]: 401,
  [Code.ResourceExhausted]: 413,
  [Code.InvalidArgument]: 400,
  [Code.Internal]: 500,
};

const codeName: Partial<Record<Code, string>> = {
  [Code.Unimplemented]: "unimplemented",
  [Code.Unauthenticated]: "unauthenticated",
  [Code.ResourceExhausted]: "resource_exhausted",
  [Code.InvalidArgument]: "invalid_argument",
  [Code.Internal]: "internal",
};

/**
 * Answers a request the handler never sees, in its protocol's error form (Connect JSON with the HTTP
 * status, or gRPC trailers-only), and stops reading its body.
 */
function refuse(req: NodeReq, res: NodeRes, code: Code, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const contentType = String(req.headers["content-type"] ?? "");
  const h1 = req.httpVersionMajor === 1;
  const close = h1 && !req.complete ? { connection: "close" } : {};
  if (h1 && !req.complete) lingerOnClose(req.socket);

  if (/^application\/grpc/i.test(contentType)) {
    res.writeHead(200, {
      "content-type": contentType.split(";")[0],
      "grpc-status": String(code),
      "grpc-message": encodeURIComponent(message),
      ...close,
    });
    res.end();
  } else {
    const body = JSON.stringify({ code: codeName[code] ?? "unknown", message });
    res.writeHead(statusOf[code] ?? 500, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      ...close,
    });
    res.end(body);
  }
  if (h1 || req.complete) {
    req.pause();
    return;
  }
  // HTTP/2: once the answer is out, reset the stream, which tells the client to stop sending the rest
  // of the body; what arrives until then is dropped.
  endRefusedStream((req as http2.Http2ServerRequest).stream);
}

const tooLarge = new Error("request body too large");

function readBody(req: NodeReq, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off("data", onData);
        chunks.length = 0;
        reject(tooLarge);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.once("error", reject);
    req.once("aborted", () => reject(new Error("the client aborted the request")));
  });
}

function bearer(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const m = /^Bearer\s+(.+)$/i.exec((value ?? "").trim());
  return m ? m[1].trim() : undefined;
}

export async function startFront(options: FrontOptions): Promise<Front> {
  async function handle(req: NodeReq, res: NodeRes): Promise<void> {
    const url = req.url ?? "/";
    const path = url.split("?", 1)[0];
    const route = options.routes.get(path);
    if (!route) return refuse(req, res, Code.Unimplemented, options.unimplemented(path));
    const token = bearer(req.headers.authorization);
    if (token === undefined) {
      return refuse(req, res, Code.Unauthenticated, 'missing "Authorization: Bearer <token>" header');
    }
    const user = options.userByToken(token);
    if (!user) return refuse(req, res, Code.Unauthenticated, "invalid token");
    const max = route.maxBodyBytes;
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > max) {
      return refuse(
        req,
        res,
        Code.ResourceExhausted,
        `request body of ${declared} bytes exceeds the limit of ${max} bytes for ${path}`,
      );
    }
    let body: Buffer;
    try {
      continueBody(res);
      body = await readBody(req, max);
    } catch (err) {
      if (err === tooLarge) {
        return refuse(
          req,
          res,
          Code.ResourceExhausted,
          `request body exceeds the limit of ${max} bytes for ${path}`,
        );
      }
      return refuse(req, res, Code.InvalidArgument, `cannot read the request body: ${errorMessage(err)}`);
    }
    const header = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || k.startsWith(":")) continue;
      if (Array.isArray(v)) for (const x of v) header.append(k, x);
      else header.set(k, v);
    }
    const controller = new AbortController();
    res.once("close", () => controller.abort());
    const contextValues: ContextValues = createContextValues().set(callerKey, user);
    const uReq: UniversalServerRequest = {
      httpVersion: req.httpVersion,
      url: `http://localhost${url}`,
      method: req.method ?? "POST",
      header,
      body: (async function* () {
        if (body.length > 0) yield body;
      })(),
      signal: controller.signal,
      contextValues,
    };
    const uRes = await asClientFault(await route.handler(uReq));
    await universalResponseToNodeResponse(uRes, res as never);
  }

  const onRequest = (req: NodeReq, res: NodeRes) => {
    handle(req, res).catch((err) => {
      try {
        refuse(req, res, Code.Internal, errorMessage(err));
      } catch {
        // The connection is gone.
      }
    });
  };

  const sockets = new Set<net.Socket>();
  // The front every server of ours has: the connection cap, header and idle timeouts (a push's body
  // is read without the guard's body timeout: readBody bounds its size).
  const guard = new ConnectionGuard(defaultLimits);
  const server = createFrontServer({ guard, tls: options.tls, onRequest, expectContinue: true });
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  };
  server.on("connection", track);
  server.on("secureConnection", track);
  const address = await listenOn(server, options.port, options.host);
  return {
    url: baseUrlOf(address, Boolean(options.tls)),
    port: address.port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        guard.close();
        for (const s of sockets) s.destroy();
      });
    },
  };
}
