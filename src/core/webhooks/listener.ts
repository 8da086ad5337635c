// The local webhook listener: serves /<prefix>.alpha.webhook.v1alpha1.EventService/Event with a Connect
// handler (Connect binary and JSON, gRPC, gRPC-Web), over http (HTTP/1.1 and cleartext HTTP/2 on one
// port) or https (HTTP/2 with HTTP/1.1 fallback). Each delivery is stored durably before the empty
// EventResponse is sent; bad deliveries get a 4xx with a Connect error JSON and are stored as rejected.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createConnectRouter,
  createContextKey,
  createContextValues,
} from "@connectrpc/connect";
import type { UniversalServerRequest } from "@connectrpc/connect/protocol";
import { universalResponseToNodeResponse } from "@connectrpc/connect-node";
import {
  type EventRequest,
  EventRequestSchema,
  EventService,
} from "../../gen/buf/alpha/webhook/v1alpha1/event_pb";
import { errorMessage } from "../errors";
import { post } from "./http-post";
import { defaultPrefix, eventPath } from "./paths";
import type { EventStore, ForwardResult, StoredDelivery } from "./store";

export interface ListenerOptions {
  readonly store: EventStore;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0 (any free port). */
  readonly port?: number;
  /** Serve https with this certificate and key (PEM). */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Package prefix of the Event path (default `buf`). */
  readonly prefix?: string;
  /** Largest request body accepted, in bytes (default 4 MiB). */
  readonly maxBodyBytes?: number;
  /** Relay each accepted event to this URL (Connect unary, binary), recording the result. */
  readonly forwardTo?: string;
  /** Extra CA (PEM) trusted when forwarding. */
  readonly forwardCa?: string;
  /** Called once per stored delivery (accepted or rejected), after it is durable. */
  readonly onDelivery?: (delivery: StoredDelivery) => void;
  /** Called after each forwarding attempt, once its result is stored. */
  readonly onForward?: (id: number, result: ForwardResult) => void;
}

export interface Listener {
  /** Base URL, e.g. `https://127.0.0.1:8443`. */
  readonly url: string;
  /** The URL to register as the webhook's callback URL. */
  readonly callbackUrl: string;
  readonly port: number;
  close(): Promise<void>;
}

interface RequestInfo {
  storeFailed?: boolean;
  accepted?: { id: number; event: unknown; binary: Uint8Array };
  record: Omit<StoredDelivery, "kind" | "status" | "httpStatus" | "id">;
}

const requestInfo = createContextKey<RequestInfo | undefined>(undefined);

const contentTypeRe = /^application\/(proto|json|grpc(-web)?(\+(proto|json))?)(\s*;.*)?$/i;

type NodeReq = http.IncomingMessage | http2.Http2ServerRequest;
type NodeRes = http.ServerResponse | http2.Http2ServerResponse;

/** Sends a complete response (status, content type, body). */
type Reply = (status: number, contentType: string, body: string) => void;

function replyOf(req: NodeReq, res: NodeRes): Reply {
  return (status, contentType, body) => {
    if (!res.headersSent) {
      res.writeHead(status, {
        "content-type": contentType,
        "content-length": Buffer.byteLength(body),
        // An HTTP/1.1 body left unread (too large) would otherwise be drained before the next request.
        ...(req.httpVersionMajor === 1 && status === 413 ? { connection: "close" } : {}),
      });
    }
    res.end(body);
  };
}

function replyOfStream(stream: http2.ServerHttp2Stream): Reply {
  return (status, contentType, body) => {
    if (stream.destroyed || stream.closed) return;
    if (!stream.headersSent) {
      stream.respond({
        ":status": status,
        "content-type": contentType,
        "content-length": Buffer.byteLength(body),
      });
    }
    stream.end(body);
  };
}

export async function startListener(options: ListenerOptions): Promise<Listener> {
  const store = options.store;
  const prefix = options.prefix ?? defaultPrefix;
  const path = eventPath(prefix);
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;

  const router = createConnectRouter({ readMaxBytes: maxBody });
  router.service(EventService, {
    async event(req, ctx) {
      const info = ctx.values.get(requestInfo);
      if (!info) return {};
      const id = store.allocateId();
      const event = toJson(EventRequestSchema, req);
      try {
        await store.append({ ...info.record, id, status: "accepted", httpStatus: 200, event });
      } catch (err) {
        info.storeFailed = true;
        throw new ConnectError(`cannot store the event: ${errorMessage(err)}`, Code.Unavailable);
      }
      info.accepted = { id, event, binary: toBinary(EventRequestSchema, req) };
      return {};
    },
  });
  const handler = router.handlers[0];

  let baseUrl = "";

  async function reject(
    reply: Reply,
    record: RequestInfo["record"],
    status: number,
    code: string,
    message: string,
  ): Promise<void> {
    const id = store.allocateId();
    const stored = { ...record, id, status: "rejected" as const, reason: message, httpStatus: status };
    let recorded = true;
    try {
      await store.append(stored);
    } catch {
      recorded = false; // The rejection is still answered even if it cannot be recorded.
    }
    reply(status, "application/json", JSON.stringify({ code, message }));
    if (recorded) options.onDelivery?.({ kind: "delivery", ...stored });
  }

  async function forward(id: number, binary: Uint8Array): Promise<void> {
    const url = options.forwardTo!;
    const time = new Date().toISOString();
    let result: ForwardResult;
    try {
      const res = await post(
        url,
        binary,
        { "content-type": "application/proto", "connect-protocol-version": "1" },
        { ca: options.forwardCa, maxResponseBytes: 1024, timeoutMs: 10_000 },
      );
      result = {
        url,
        status: res.status,
        latencyMs: res.latencyMs,
        body: res.body.toString("utf8"),
        time,
        ...(res.status === 200 ? {} : { error: `HTTP ${res.status}` }),
      };
    } catch (err) {
      result = { url, status: 0, latencyMs: 0, body: "", error: errorMessage(err), time };
    }
    try {
      await store.appendForward(id, result);
    } catch {
      // Nothing more to do: the event itself is stored.
    }
    options.onForward?.(id, result);
  }

  /**
   * The registry's own form (Connect unary, `application/proto`, uncompressed) is handled here without
   * the generic protocol handler: it is the hot path of the durable-throughput target (thousands of
   * events per second on two cores), and the generic handler's per-call machinery (abort signals,
   * async iterables, context objects) costs more than the decoding itself. Every other form goes
   * through the Connect handler.
   */
  async function handleBinaryUnary(
    reply: Reply,
    record: RequestInfo["record"],
    bytes: Uint8Array,
  ): Promise<void> {
    let message: EventRequest;
    try {
      message = fromBinary(EventRequestSchema, bytes);
    } catch (err) {
      return reject(
        reply,
        record,
        400,
        "invalid_argument",
        `cannot decode the EventRequest: ${errorMessage(err)}`,
      );
    }
    const id = store.allocateId();
    const event = toJson(EventRequestSchema, message);
    try {
      await store.append({ ...record, id, status: "accepted", httpStatus: 200, event });
    } catch (err) {
      const message = `cannot store the event: ${errorMessage(err)}`;
      reply(503, "application/json", JSON.stringify({ code: "unavailable", message }));
      return;
    }
    reply(200, "application/proto", "");
    options.onDelivery?.({ ...record, kind: "delivery", id, status: "accepted", httpStatus: 200, event });
    if (options.forwardTo) void forward(id, bytes);
  }

  async function handle(req: NodeReq, res: NodeRes): Promise<void> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined && !k.startsWith(":")) headers[k] = Array.isArray(v) ? v.join(", ") : v;
    }
    const url = req.url ?? "/";
    const reqPath = url.split("?", 1)[0];
    const record: RequestInfo["record"] = {
      receivedAt: new Date().toISOString(),
      remoteAddress: req.socket?.remoteAddress ?? "",
      method: req.method ?? "",
      path: url,
      listenerUrl: baseUrl + path,
      headers,
      body: "",
    };
    if (reqPath !== path) {
      req.resume();
      return reject(
        replyOf(req, res),
        record,
        404,
        "unimplemented",
        `no such method ${reqPath}: the listener serves ${path}`,
      );
    }
    if (req.method !== "POST") {
      req.resume();
      return reject(
        replyOf(req, res),
        record,
        405,
        "unimplemented",
        `method ${req.method} not allowed: use POST`,
      );
    }
    const contentType = headers["content-type"] ?? "";
    const declared = Number(headers["content-length"] ?? "0");
    if (declared > maxBody) {
      return reject(
        replyOf(req, res),
        record,
        413,
        "resource_exhausted",
        `request body of ${declared} bytes exceeds the limit of ${maxBody} bytes`,
      );
    }
    let chunks: Buffer[];
    try {
      chunks = await readBody(req, maxBody);
    } catch (err) {
      if (err === tooLarge) {
        return reject(
          replyOf(req, res),
          record,
          413,
          "resource_exhausted",
          `request body exceeds the limit of ${maxBody} bytes`,
        );
      }
      return reject(
        replyOf(req, res),
        record,
        400,
        "invalid_argument",
        `cannot read the request body: ${errorMessage(err)}`,
      );
    }
    const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const withBody = { ...record, body: bytes.toString("base64") };
    if (!contentTypeRe.test(contentType)) {
      return reject(
        replyOf(req, res),
        withBody,
        415,
        "invalid_argument",
        `unsupported content type "${contentType}": send application/proto (binary EventRequest) or application/json`,
      );
    }
    if (
      /^application\/proto\s*(;|$)/i.test(contentType) &&
      !headers["content-encoding"] &&
      !headers["connect-content-encoding"]
    ) {
      return handleBinaryUnary(replyOf(req, res), withBody, bytes);
    }
    const info: RequestInfo = { record: withBody };
    const controller = new AbortController();
    const uReq: UniversalServerRequest = {
      httpVersion: req.httpVersion,
      url: `http://localhost${url}`,
      method: "POST",
      header: new Headers(headers),
      body: (async function* () {
        yield bytes;
      })(),
      signal: controller.signal,
      contextValues: createContextValues().set(requestInfo, info),
    };
    let uRes = await handler(uReq);
    if (!info.accepted) {
      // Refused by the protocol handler: garbage or truncated bytes, bad JSON, an unsupported codec.
      const raw: Uint8Array[] = [];
      if (uRes.body && Symbol.asyncIterator in uRes.body) {
        for await (const c of uRes.body as AsyncIterable<Uint8Array>) raw.push(c);
      }
      let body: Uint8Array = Buffer.concat(raw);
      let reason = Buffer.from(body).toString("utf8");
      let status = uRes.status;
      let header = uRes.header;
      let trailer = uRes.trailer;
      const grpcStatus = trailer?.get("grpc-status") ?? header?.get("grpc-status");
      if (grpcStatus !== undefined && grpcStatus !== null) {
        reason = decodeURIComponent(trailer?.get("grpc-message") ?? header?.get("grpc-message") ?? "");
        if (grpcStatus === "13" && !info.storeFailed) {
          // A message that cannot be parsed is the sender's fault: INVALID_ARGUMENT, not INTERNAL.
          trailer = new Headers(trailer);
          trailer.set("grpc-status", "3");
          if (header?.has("grpc-status")) {
            header = new Headers(header);
            header.set("grpc-status", "3");
          }
        }
        reason = `grpc-status ${grpcStatus}: ${reason}`;
      } else {
        try {
          const parsed = JSON.parse(reason) as { message?: string; code?: string };
          if (status === 500 && !info.storeFailed) {
            status = 400;
            parsed.code = "invalid_argument";
            parsed.message = `cannot decode the EventRequest: ${parsed.message ?? ""}`;
            body = Buffer.from(JSON.stringify(parsed));
            header = new Headers(header);
            header.set("content-length", String(body.byteLength));
          }
          reason = `${parsed.code ?? "error"}: ${parsed.message ?? ""}`;
        } catch {
          // Keep the raw text as the reason.
        }
      }
      const id = store.allocateId();
      const stored = { ...withBody, id, status: "rejected" as const, reason, httpStatus: status };
      let recorded = true;
      try {
        await store.append(stored);
      } catch {
        recorded = false; // Answer regardless.
      }
      const finalBody = body;
      uRes = {
        status,
        header,
        trailer,
        body: (async function* () {
          yield finalBody;
        })(),
      };
      if (recorded) options.onDelivery?.({ kind: "delivery", ...stored });
      await universalResponseToNodeResponse(uRes, res as never);
      return;
    }
    const accepted = info.accepted;
    options.onDelivery?.({
      ...withBody,
      kind: "delivery",
      id: accepted.id,
      status: "accepted",
      httpStatus: 200,
      event: accepted.event as never,
    });
    if (options.forwardTo) void forward(accepted.id, accepted.binary);
    await universalResponseToNodeResponse(uRes, res as never);
  }

  const onRequest = (req: NodeReq, res: NodeRes) => {
    handle(req, res).catch((err) => {
      try {
        if (!res.headersSent) {
          const body = JSON.stringify({ code: "internal", message: errorMessage(err) });
          res.writeHead(500, { "content-type": "application/json" });
          res.end(body);
        } else {
          res.end();
        }
      } catch {
        // The connection is gone.
      }
    });
  };

  const isProto = /^application\/proto\s*(;|$)/i;

  /** Whether an HTTP/2 stream is in the registry's form and can skip the compatibility layer. */
  function isFast(headers: http2.IncomingHttpHeaders): boolean {
    const length = headers["content-length"];
    return (
      headers[":method"] === "POST" &&
      (headers[":path"] ?? "").split("?", 1)[0] === path &&
      isProto.test(headers["content-type"] ?? "") &&
      headers["content-encoding"] === undefined &&
      headers["connect-content-encoding"] === undefined &&
      (length === undefined || Number(length) <= maxBody)
    );
  }

  /** The hot path over HTTP/2, on the stream itself (see handleBinaryUnary for why it exists). */
  function handleFastStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    const recordHeaders: Record<string, string> = {};
    for (const k in headers) {
      const v = headers[k];
      if (k[0] !== ":" && v !== undefined) recordHeaders[k] = Array.isArray(v) ? v.join(", ") : String(v);
    }
    const record: RequestInfo["record"] = {
      receivedAt: new Date().toISOString(),
      remoteAddress: stream.session?.socket?.remoteAddress ?? "",
      method: "POST",
      path: headers[":path"] ?? path,
      listenerUrl: baseUrl + path,
      headers: recordHeaders,
      body: "",
    };
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBody) {
        chunks.push(chunk);
        return;
      }
      if (refused) return;
      // Answer as soon as the limit is passed (as over HTTP/1.1), not when the sender finally stops;
      // then end the stream with NO_ERROR, which tells the sender to stop sending the rest.
      refused = true;
      chunks.length = 0;
      const reply = replyOfStream(stream);
      reject(reply, record, 413, "resource_exhausted", `request body exceeds the limit of ${maxBody} bytes`)
        .catch(() => {})
        .finally(() => {
          if (!stream.destroyed && !stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
        });
    });
    stream.on("error", () => {});
    stream.on("end", () => {
      if (refused) return;
      const reply = replyOfStream(stream);
      const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      handleBinaryUnary(reply, { ...record, body: bytes.toString("base64") }, bytes).catch((err) =>
        reply(500, "application/json", JSON.stringify({ code: "internal", message: errorMessage(err) })),
      );
    });
  }

  /**
   * Lets `handleFastStream` take HTTP/2 streams in the registry's form before the compatibility layer
   * (which builds request/response objects) sees them; every other stream goes on to that layer.
   * If the server's listeners are not laid out as expected, everything stays with the compatibility layer.
   */
  function takeFastStreams(h2server: http2.Http2Server | http2.Http2SecureServer): void {
    const compat = h2server.listeners("stream");
    if (compat.length !== 1) return;
    const toCompat = compat[0] as (...args: unknown[]) => void;
    h2server.removeListener("stream", toCompat);
    const onStream = (
      stream: http2.ServerHttp2Stream,
      headers: http2.IncomingHttpHeaders,
      flags: number,
      rawHeaders: string[],
    ) => {
      if (isFast(headers)) handleFastStream(stream, headers);
      else toCompat(stream, headers, flags, rawHeaders);
    };
    (h2server as http2.Http2Server).on("stream", onStream);
  }

  const sockets = new Set<net.Socket>();
  let server: net.Server;
  if (options.tls) {
    server = http2.createSecureServer(
      { cert: options.tls.cert, key: options.tls.key, allowHTTP1: true },
      onRequest as never,
    );
    takeFastStreams(server as http2.Http2SecureServer);
  } else {
    // One cleartext port for both HTTP/1.1 and HTTP/2 with prior knowledge: the first bytes of a
    // connection tell which ("PRI * HTTP/2.0" is the HTTP/2 preface).
    const h1 = http.createServer(onRequest as never);
    const h2 = http2.createServer(onRequest as never);
    takeFastStreams(h2);
    server = net.createServer((socket) => {
      socket.once("data", (chunk: Buffer) => {
        socket.pause();
        // Put the bytes back: both servers take over a socket that already holds buffered data
        // (the HTTP/2 session reads it out of the socket's buffer when it starts).
        socket.unshift(chunk);
        if (chunk.subarray(0, 4).toString("latin1") === "PRI ") {
          h2.emit("connection", socket);
        } else {
          h1.emit("connection", socket);
          socket.resume();
        }
      });
    });
  }
  server.on("connection", (s: net.Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("secureConnection", (s: net.Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as net.AddressInfo;
  const hostText = address.family === "IPv6" ? `[${address.address}]` : address.address;
  baseUrl = `${options.tls ? "https" : "http"}://${hostText}:${address.port}`;
  return {
    url: baseUrl,
    callbackUrl: baseUrl + path,
    port: address.port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

const tooLarge = new Error("request body too large");

/** Reads a request body (events rather than an async iterator: cheaper on the hot path). */
function readBody(req: NodeReq, max: number): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off("data", onData);
        req.resume();
        reject(tooLarge);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve(chunks));
    req.once("error", reject);
    req.once("aborted", () => reject(new Error("the client aborted the request")));
  });
}
