// The local webhook listener: serves /<prefix>.alpha.webhook.v1alpha1.EventService/Event with a Connect
// handler (Connect binary and JSON, gRPC, gRPC-Web), over http (HTTP/1.1 and cleartext HTTP/2 on one
// port) or https (HTTP/2 with HTTP/1.1 fallback). Each delivery is stored durably before the empty
// EventResponse is sent; bad deliveries get a 4xx with a Connect error JSON and are recorded as
// rejected (apart from accepted ones, see store.ts). Compressed requests (Connect `Content-Encoding`
// gzip or br, gRPC `grpc-encoding`) are decompressed up to the body limit. Every connection is held to
// header, body and idle timeouts and a cap on open connections (connection-guard.ts); forwarding to a
// backend is bounded too (forwarder.ts), and closing stops within a couple of seconds.
import type http from "node:http";
import type http2 from "node:http2";
import type net from "node:net";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createConnectRouter,
  createContextKey,
  createContextValues,
} from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import {
  type EventRequest,
  EventRequestSchema,
  EventService,
} from "../../gen/buf/alpha/webhook/v1alpha1/event_pb";
import { errorMessage } from "../errors";
import type { ProxyChoice } from "../invoke/proxy-choice";
import { ConnectionGuard, type ConnectionLimits, type TrackedConnection } from "../serve/connection-guard";
import { createFrontServer } from "../serve/front-server";
import { baseUrlOf, listenOn } from "../serve/listen";
import { continueBody, endRefusedStream, lingerOnClose } from "../serve/refusal";
import { defaultForwarding, Forwarder } from "./forwarder";
import { defaultPrefix, eventPath } from "./paths";
import {
  type DeliveryHead,
  type EventStore,
  type ForwardResult,
  type StoredDelivery,
  storedForm,
} from "./store";
import { isWellFormed } from "./wire-check";

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
  /** Largest request body accepted, in bytes, after decompression (default 4 MiB). */
  readonly maxBodyBytes?: number;
  /** Header, body and idle timeouts, and the cap on open connections. */
  readonly limits?: ConnectionLimits;
  /** Relay each accepted event to this URL (Connect unary, binary), recording the result. */
  readonly forwardTo?: string;
  /** Extra CA (PEM) trusted when forwarding. */
  readonly forwardCa?: string;
  /** The proxy forwards tunnel through (chooseProxy of the forward URL); undefined = direct. */
  readonly forwardProxy?: ProxyChoice;
  /** Longest wait for the backend's answer to a forwarded event (default 10 s). */
  readonly forwardTimeoutMs?: number;
  /** Most events waiting to be forwarded (default 1000); past it they are recorded as not forwarded. */
  readonly forwardQueue?: number;
  /** Called once per stored delivery (accepted or rejected), after it is stored. */
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
  /** The limits in force (the connection cap may be lower than asked, to fit the descriptor limit). */
  readonly limits: Required<ConnectionLimits>;
  /** Connections open now. */
  connections(): number;
  /**
   * Stops accepting, lets requests being stored get their answer, closes every connection, and gives
   * forwards in flight a short grace period (recording the rest as not forwarded).
   */
  close(): Promise<void>;
}

/** A request as far as it is known before its outcome. */
type RequestHead = Omit<DeliveryHead, "id" | "status" | "httpStatus" | "reason" | "event">;

interface RequestInfo {
  storeFailed?: boolean;
  accepted?: { id: number; event: unknown; binary: Uint8Array };
  readonly head: RequestHead;
  readonly body: Uint8Array;
}

const requestInfo = createContextKey<RequestInfo | undefined>(undefined);

const contentTypeRe = /^application\/(proto|json|grpc(-web)?(\+(proto|json))?)(\s*;.*)?$/i;
const isProto = /^application\/proto\s*(;|$)/i;

type NodeReq = http.IncomingMessage | http2.Http2ServerRequest;
type NodeRes = http.ServerResponse | http2.Http2ServerResponse;

/** Sends a complete response (status, content type, body). */
type Reply = (status: number, contentType: string, body: string) => void;

/** Statuses after which the rest of the request is not read: the connection (HTTP/1.1) or stream closes. */
const closesRequest = (status: number) => status === 413 || status === 408;

function replyOf(req: NodeReq, res: NodeRes): Reply {
  return (status, contentType, body) => {
    // A request whose body is still arriving when it is answered (refused from its head, too large,
    // too slow): its HTTP/1.1 connection closes, lingering so that the client reads the answer, and its
    // HTTP/2 stream is reset once the answer is out, so that a client still uploading stops at once.
    const unread = closesRequest(status) || !req.complete;
    const h1 = req.httpVersionMajor === 1;
    if (!res.headersSent) {
      if (h1 && unread) lingerOnClose(req.socket);
      res.writeHead(status, {
        "content-type": contentType,
        "content-length": Buffer.byteLength(body),
        ...(h1 && unread ? { connection: "close" } : {}),
      });
    }
    res.end(body);
    if (!h1 && unread) endRefusedStream((req as http2.Http2ServerRequest).stream);
  };
}

function replyOfStream(stream: http2.ServerHttp2Stream): Reply {
  return (status, contentType, body) => {
    if (stream.destroyed || stream.closed) return;
    if (!stream.headersSent) {
      if (body === "") {
        // An empty answer (the EventResponse) in one HEADERS frame that also ends the stream.
        stream.respond(
          { ":status": status, "content-type": contentType, "content-length": 0 },
          { endStream: true },
        );
        return;
      }
      stream.respond({
        ":status": status,
        "content-type": contentType,
        "content-length": Buffer.byteLength(body),
      });
    }
    stream.end(body);
  };
}

const bodyTimedOut = new Error("request body timeout");
const tooLarge = new Error("request body too large");

const gunzip = promisify(zlib.gunzip);
const brotliDecompress = promisify(zlib.brotliDecompress);

let lastMs = 0;
let lastIso = "";
/** The time as an ISO string; made once per millisecond (thousands of requests may share one). */
function receivedNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

export async function startListener(options: ListenerOptions): Promise<Listener> {
  const l = listenerCore(options);
  const { path, guard, forwarder } = l;
  const server = createServer(l);
  const address = await listenOn(server, options.port, options.host);
  l.baseUrl = baseUrlOf(address, Boolean(options.tls));
  let closing: Promise<void> | undefined;
  return {
    url: l.baseUrl,
    callbackUrl: l.baseUrl + path,
    port: address.port,
    limits: {
      headersTimeoutMs: guard.headersTimeoutMs,
      bodyTimeoutMs: guard.bodyTimeoutMs,
      idleTimeoutMs: guard.idleTimeoutMs,
      maxConnections: guard.maxConnections,
    },
    connections: () => guard.size,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        // Requests being stored get their answer (briefly); then every connection is closed.
        if (l.processing > 0) {
          await Promise.race([
            new Promise<void>((resolve) => {
              l.drained = resolve;
            }),
            new Promise((resolve) => setTimeout(resolve, 2000).unref()),
          ]);
        }
        guard.close();
        await stopped;
        await forwarder?.stop();
      })();
      return closing;
    },
  };
}

/** What every request of one listener shares: its options, limits, store, forwarder and counters. */
interface ListenerCore {
  readonly options: ListenerOptions;
  readonly store: EventStore;
  /** Read once: the generated module's export is a getter that loads it on first use. */
  readonly eventSchema: typeof EventRequestSchema;
  readonly path: string;
  readonly maxBody: number;
  readonly forwarder: Forwarder | undefined;
  readonly guard: ConnectionGuard;
  /** The Connect handler of the Event method (every form but the registry's own). */
  readonly handler: UniversalHandler;
  /** Requests whose body is complete and whose answer is not sent yet (close waits for them). */
  processing: number;
  drained: (() => void) | undefined;
  /** Set once the server listens. */
  baseUrl: string;
}

function listenerCore(options: ListenerOptions): ListenerCore {
  const store = options.store;
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const forwarder = options.forwardTo
    ? new Forwarder(
        {
          url: options.forwardTo,
          ca: options.forwardCa,
          proxy: options.forwardProxy,
          timeoutMs: options.forwardTimeoutMs,
          maxQueue: options.forwardQueue,
        },
        async (id, result) => {
          try {
            await store.appendForward(id, result);
          } catch {
            // Nothing more to do: the event itself is stored.
          }
          options.onForward?.(id, result);
        },
      )
    : undefined;
  return {
    options,
    store,
    eventSchema: EventRequestSchema,
    path: eventPath(options.prefix ?? defaultPrefix),
    maxBody,
    forwarder,
    guard: new ConnectionGuard(options.limits, 16 + defaultForwarding.concurrency),
    handler: eventHandler(store, maxBody),
    processing: 0,
    drained: undefined,
    baseUrl: "",
  };
}

function finishProcessing(l: ListenerCore): void {
  l.processing--;
  if (l.processing === 0) l.drained?.();
}

/** The Connect handler that decodes and stores an event in any form but the registry's own. */
function eventHandler(store: EventStore, maxBody: number): UniversalHandler {
  const router = createConnectRouter({
    readMaxBytes: maxBody,
    acceptCompression: [compressionGzip, compressionBrotli],
  });
  router.service(EventService, {
    async event(req, ctx) {
      const info = ctx.values.get(requestInfo);
      if (!info) return {};
      const id = store.allocateId();
      const event = toJson(EventRequestSchema, req);
      try {
        await store.appendRaw({ ...info.head, id, status: "accepted", httpStatus: 200, event }, info.body);
      } catch (err) {
        info.storeFailed = true;
        throw new ConnectError(`cannot store the event: ${errorMessage(err)}`, Code.Unavailable);
      }
      info.accepted = { id, event, binary: toBinary(EventRequestSchema, req) };
      return {};
    },
  });
  return router.handlers[0];
}

/**
 * The server: the front every server of ours has (serve/front-server.ts: TLS or HTTP/1.1 and cleartext
 * HTTP/2 on one port, under the guard), with `Expect: 100-continue` answered by the handler and the
 * fast path taking the streams it can (takeFastStreams).
 */
function createServer(l: ListenerCore): net.Server {
  return createFrontServer({
    guard: l.guard,
    tls: l.options.tls,
    onRequest: (req, res) => handleRequest(l, req, res),
    h2Settings: { maxConcurrentStreams: 128 },
    expectContinue: true,
    withHttp2Server: (h2) => takeFastStreams(l, h2),
  });
}

async function reject(
  l: ListenerCore,
  reply: Reply,
  head: RequestHead,
  body: Uint8Array,
  status: number,
  code: string,
  message: string,
): Promise<void> {
  const { options, store } = l;
  const id = store.allocateId();
  const stored = { ...head, id, status: "rejected" as const, reason: message, httpStatus: status };
  let recorded = true;
  try {
    await store.appendRaw(stored, body);
  } catch {
    recorded = false; // The rejection is still answered even if it cannot be recorded.
  }
  reply(status, "application/json", JSON.stringify({ code, message }));
  if (recorded && options.onDelivery) options.onDelivery(storedForm(stored, body));
}

/**
 * The registry's own form (Connect unary, `application/proto`) is handled here without the generic
 * protocol handler: it is the hot path of the durable-throughput target (thousands of events per
 * second on two cores), and the generic handler's per-call machinery (abort signals, async
 * iterables, context objects) costs more than the decoding itself. The event is validated by
 * decoding it, and stored as its bytes (the store decodes it again only when read). Every other form
 * goes through the Connect handler.
 */
function handleBinaryUnary(
  l: ListenerCore,
  reply: Reply,
  head: RequestHead,
  bytes: Uint8Array,
  finished: () => void,
): void {
  const { options, store, eventSchema, forwarder } = l;
  // Checked without decoding when possible (see wire-check.ts); decoded when the check cannot tell,
  // or when someone wants the event (onDelivery).
  let message: EventRequest | undefined;
  try {
    if (options.onDelivery || !isWellFormed(eventSchema, bytes)) {
      message = fromBinary(eventSchema, bytes);
    }
  } catch (err) {
    reject(
      l,
      reply,
      head,
      bytes,
      400,
      "invalid_argument",
      `cannot decode the EventRequest: ${errorMessage(err)}`,
    )
      .catch(() => {})
      .finally(finished);
    return;
  }
  // Written out rather than spread from `head`: on this path an object spread costs microseconds.
  const stored: DeliveryHead = {
    receivedAt: head.receivedAt,
    remoteAddress: head.remoteAddress,
    method: head.method,
    path: head.path,
    listenerUrl: head.listenerUrl,
    headers: head.headers,
    id: store.allocateId(),
    status: "accepted",
    httpStatus: 200,
  };
  const id = stored.id;
  // A callback, not a promise: this runs thousands of times a second.
  store.appendRawThen(stored, bytes, (err) => {
    try {
      if (err !== undefined) {
        const message = `cannot store the event: ${errorMessage(err)}`;
        reply(503, "application/json", JSON.stringify({ code: "unavailable", message }));
        return;
      }
      reply(200, "application/proto", "");
      if (options.onDelivery && message) {
        options.onDelivery({ ...storedForm(stored, bytes), event: toJson(eventSchema, message) });
      }
      forwarder?.enqueue(id, bytes);
    } catch {
      // The stream is gone; the event is stored regardless.
    } finally {
      finished();
    }
  });
}

/** Decompresses a Connect unary body (`Content-Encoding`), refusing output past the body limit. */
async function decompress(
  l: ListenerCore,
  reply: Reply,
  head: RequestHead,
  encoding: string,
  bytes: Buffer,
): Promise<Buffer | undefined> {
  const { maxBody } = l;
  const name = encoding.trim().toLowerCase();
  if (name === "" || name === "identity") return bytes;
  const inflate = name === "gzip" ? gunzip : name === "br" ? brotliDecompress : undefined;
  if (!inflate) {
    await reject(
      l,
      reply,
      head,
      bytes,
      415,
      "unimplemented",
      `unsupported content encoding "${encoding.slice(0, 40)}": send gzip, br or an uncompressed body`,
    );
    return undefined;
  }
  try {
    return await inflate(bytes, { maxOutputLength: maxBody });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      await reject(
        l,
        reply,
        head,
        bytes,
        413,
        "resource_exhausted",
        `the ${name} request body decompresses to more than the limit of ${maxBody} bytes`,
      );
    } else {
      await reject(
        l,
        reply,
        head,
        bytes,
        400,
        "invalid_argument",
        `cannot decompress the ${name} request body: ${errorMessage(err)}`,
      );
    }
    return undefined;
  }
}

async function handle(
  l: ListenerCore,
  req: NodeReq,
  res: NodeRes,
  conn: TrackedConnection | undefined,
): Promise<void> {
  const { path, maxBody, guard } = l;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined && !k.startsWith(":")) headers[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  const url = req.url ?? "/";
  const reqPath = url.split("?", 1)[0];
  const head: RequestHead = {
    receivedAt: receivedNow(),
    remoteAddress: req.socket?.remoteAddress ?? "",
    method: req.method ?? "",
    path: url,
    listenerUrl: l.baseUrl + path,
    headers,
  };
  const none = new Uint8Array(0);
  const reply = replyOf(req, res);
  if (reqPath !== path) {
    req.resume();
    return reject(
      l,
      reply,
      head,
      none,
      404,
      "unimplemented",
      `no such method ${reqPath}: the listener serves ${path}`,
    );
  }
  if (req.method !== "POST") {
    req.resume();
    return reject(l, reply, head, none, 405, "unimplemented", `method ${req.method} not allowed: use POST`);
  }
  const contentType = headers["content-type"] ?? "";
  const declared = Number(headers["content-length"] ?? "0");
  if (declared > maxBody) {
    return reject(
      l,
      reply,
      head,
      none,
      413,
      "resource_exhausted",
      `request body of ${declared} bytes exceeds the limit of ${maxBody} bytes`,
    );
  }
  let chunks: Buffer[];
  try {
    continueBody(res);
    chunks = await readBody(req, maxBody, guard, conn);
  } catch (err) {
    if (err === tooLarge) {
      return reject(
        l,
        reply,
        head,
        none,
        413,
        "resource_exhausted",
        `request body exceeds the limit of ${maxBody} bytes`,
      );
    }
    if (err === bodyTimedOut) {
      return reject(
        l,
        reply,
        head,
        none,
        408,
        "deadline_exceeded",
        `the request body did not arrive within ${guard.bodyTimeoutMs} ms`,
      );
    }
    return reject(
      l,
      reply,
      head,
      none,
      400,
      "invalid_argument",
      `cannot read the request body: ${errorMessage(err)}`,
    );
  }
  l.processing++;
  try {
    await handleBody(l, req, res, reply, head, contentType, chunks);
  } finally {
    finishProcessing(l);
  }
}

async function handleBody(
  l: ListenerCore,
  req: NodeReq,
  res: NodeRes,
  reply: Reply,
  head: RequestHead,
  contentType: string,
  chunks: Buffer[],
): Promise<void> {
  const { options, store, forwarder, handler } = l;
  const headers = head.headers;
  const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  if (!contentTypeRe.test(contentType)) {
    return reject(
      l,
      reply,
      head,
      raw,
      415,
      "invalid_argument",
      `unsupported content type "${contentType.slice(0, 100)}": send application/proto (binary EventRequest) or application/json`,
    );
  }
  const isConnectUnary = /^application\/(proto|json)\s*(;|$)/i.test(contentType);
  let bytes: Buffer = raw;
  const encoding = headers["content-encoding"];
  if (isConnectUnary && encoding !== undefined) {
    const plain = await decompress(l, reply, head, encoding, raw);
    if (!plain) return;
    bytes = plain;
  }
  if (isProto.test(contentType) && !headers["connect-content-encoding"]) {
    return new Promise<void>((resolve) => handleBinaryUnary(l, reply, head, bytes, resolve));
  }
  const info: RequestInfo = { head, body: bytes };
  const handlerHeaders = new Headers(headers);
  if (bytes !== raw) {
    // Decompressed above.
    handlerHeaders.delete("content-encoding");
    handlerHeaders.set("content-length", String(bytes.byteLength));
  }
  const controller = new AbortController();
  const uReq: UniversalServerRequest = {
    httpVersion: req.httpVersion,
    url: `http://localhost${req.url ?? "/"}`,
    method: "POST",
    header: handlerHeaders,
    body: (async function* () {
      yield bytes;
    })(),
    signal: controller.signal,
    contextValues: createContextValues().set(requestInfo, info),
  };
  let uRes = await handler(uReq);
  if (!info.accepted) {
    // Refused by the protocol handler: garbage or truncated bytes, bad JSON, an unsupported codec.
    const out: Uint8Array[] = [];
    if (uRes.body && Symbol.asyncIterator in uRes.body) {
      for await (const c of uRes.body as AsyncIterable<Uint8Array>) out.push(c);
    }
    let body: Uint8Array = Buffer.concat(out);
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
    const stored = { ...head, id, status: "rejected" as const, reason, httpStatus: status };
    let recorded = true;
    try {
      await store.appendRaw(stored, bytes);
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
    if (recorded && options.onDelivery) options.onDelivery(storedForm(stored, bytes));
    await universalResponseToNodeResponse(uRes, res as never);
    return;
  }
  const accepted = info.accepted;
  if (options.onDelivery) {
    options.onDelivery({
      ...storedForm(
        { ...head, id: accepted.id, status: "accepted", httpStatus: 200, event: accepted.event as never },
        bytes,
      ),
    });
  }
  forwarder?.enqueue(accepted.id, accepted.binary);
  await universalResponseToNodeResponse(uRes, res as never);
}

function handleRequest(l: ListenerCore, req: NodeReq, res: NodeRes): void {
  const { guard } = l;
  // Requests are counted on their connection by the front (front-server.ts).
  const conn: TrackedConnection | undefined =
    req.httpVersionMajor === 2
      ? guard.of((req as http2.Http2ServerRequest).stream.session)
      : guard.of(req.socket);
  handle(l, req, res, conn).catch((err) => {
    try {
      if (!res.headersSent) {
        const body = JSON.stringify({ code: "internal", message: errorMessage(err) });
        replyOf(req, res)(500, "application/json", body);
      } else {
        res.end();
      }
    } catch {
      // The connection is gone.
    }
  });
}

/** Whether an HTTP/2 stream is in the registry's form and can skip the compatibility layer. */
function isFast(l: ListenerCore, headers: http2.IncomingHttpHeaders): boolean {
  const { path, maxBody } = l;
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
function handleFastStream(
  l: ListenerCore,
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
): void {
  const { path, maxBody, guard } = l;
  const recordHeaders: Record<string, string> = {};
  for (const k in headers) {
    const v = headers[k];
    if (k[0] !== ":" && v !== undefined) recordHeaders[k] = Array.isArray(v) ? v.join(", ") : String(v);
  }
  const conn = guard.of(stream.session);
  const head: RequestHead = {
    receivedAt: receivedNow(),
    remoteAddress: conn?.socket.remoteAddress ?? stream.session?.socket?.remoteAddress ?? "",
    method: "POST",
    path: headers[":path"] ?? path,
    listenerUrl: l.baseUrl + path,
    headers: recordHeaders,
  };
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  const refuse = (status: number, code: string, message: string) => {
    refused = true;
    chunks.length = 0;
    watch.done();
    // Answer at once (as over HTTP/1.1), not when the sender finally stops; then end the stream
    // with NO_ERROR, which tells the sender to stop sending the rest.
    reject(l, replyOfStream(stream), head, new Uint8Array(0), status, code, message)
      .catch(() => {})
      .finally(() => endRefusedStream(stream));
  };
  const watch = guard.watchBody(conn, () => {
    if (!refused) {
      refuse(408, "deadline_exceeded", `the request body did not arrive within ${guard.bodyTimeoutMs} ms`);
    }
  });
  stream.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= maxBody) {
      chunks.push(chunk);
      return;
    }
    if (!refused) refuse(413, "resource_exhausted", `request body exceeds the limit of ${maxBody} bytes`);
  });
  stream.on("error", () => {});
  stream.once("close", () => watch.done());
  stream.on("end", () => {
    if (refused) return;
    watch.done();
    const reply = replyOfStream(stream);
    const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    l.processing++;
    handleBinaryUnary(l, reply, head, bytes, () => finishProcessing(l));
  });
}

/**
 * Lets `handleFastStream` take HTTP/2 streams in the registry's form before the compatibility layer
 * (which builds request/response objects) sees them; every other stream goes on to that layer.
 * If the server's listeners are not laid out as expected, everything stays with the compatibility layer.
 */
function takeFastStreams(l: ListenerCore, h2server: http2.Http2Server | http2.Http2SecureServer): void {
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
    if (isFast(l, headers)) handleFastStream(l, stream, headers);
    else toCompat(stream, headers, flags, rawHeaders);
  };
  (h2server as http2.Http2Server).on("stream", onStream);
}

/**
 * Reads a request body (events rather than an async iterator: cheaper), within the body limit and
 * the body timeout.
 */
function readBody(
  req: NodeReq,
  max: number,
  guard: ConnectionGuard,
  conn: TrackedConnection | undefined,
): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (err: Error) => {
      watch.done();
      req.off("data", onData);
      req.resume();
      reject(err);
    };
    const watch = guard.watchBody(conn, () => fail(bodyTimedOut));
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        fail(tooLarge);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => {
      watch.done();
      resolve(chunks);
    });
    req.once("error", (err) => fail(err));
    req.once("aborted", () => fail(new Error("the client aborted the request")));
  });
}
