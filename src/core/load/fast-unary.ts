// The light path for a load run's unary Connect calls over h2c. A load run sends the same request
// thousands of times a second; the call pipeline (../invoke/pipeline.ts) works out, for every call,
// what never changes in a run (the options read and checked, the URL, the headers, the transport
// looked up by its settings, the schema, a deadline and its abort signals), which costs far more
// than the call itself. Here that is worked out once, from the first call of the run (made through
// the pipeline, which resolves the method), and each later call only encodes its body (once for as
// long as it does not change), writes it as one stream on a kept connection of the light path's own
// HTTP/2 client (h2c-client.ts, with the request's header block HPACK-encoded once per body length;
// Node's http2 client cost six times the CPU per request, taken from a server sharing the machine),
// and decodes the answer. The answer is judged by the checked-request runner's own check (checkCall), so a response
// passes or fails here exactly as it does through the pipeline.
//
// It applies only where it gives the same answers: the Connect protocol, unary, over plain-text
// HTTP/2 with prior knowledge, no proxy, socket, timeout or output file, an inline body, and types
// that reach no google.protobuf.Any and no extension. Anything else, and any request whose options
// differ from the first one's in more than the body, goes through the pipeline.
import { gunzipSync } from "node:zlib";
import {
  createRegistry,
  type DescFile,
  type DescMethod,
  fromBinary,
  type JsonValue,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeFromHttpStatus, errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import {
  type CheckedCall,
  type CheckedRequest,
  checkCall,
  readsMessages,
} from "../assertions/checked-request";
import { encodeHeaders } from "../http2/hpack";
import type { CallResult, HeaderPairs } from "../invoke/call-session";
import { decodeFailureDetails, describeFailure } from "../invoke/failure";
import { requestFromJson } from "../invoke/invoke";
import type { InputIo } from "../invoke/io";
import { createMessageFormatter, reachesAny } from "../invoke/output";
import { type RequestDocument, readRequestDocuments } from "../invoke/request-data";
import { type CallTarget, describeTarget } from "../invoke/target";
import { reachesExtendable } from "../invoke/unknown-fields";
import type { Resolver } from "../schema/resolver";
import { H2cConnection, type H2cFailure, PROTOCOL_ERROR, REFUSED_STREAM } from "./h2c-client";

type ResponseHead = Record<string, string | string[]>;

/** A prepared light path: `call` runs one request over connection `connection` (0-based). */
export interface FastUnary {
  call(request: CheckedRequest, connection: number, signal: AbortSignal): Promise<CheckedCall> | undefined;
  close(): void;
}

/**
 * Why the options of a request rule the light path out (undefined when they do not). Checked before
 * anything is sent, from the options alone.
 */
export function fastUnaryRefusal(r: CheckedRequest): string | undefined {
  const o = r.options;
  if (o.protocol !== "connect") return `the ${o.protocol} protocol`;
  if (!o.http2PriorKnowledge) return "not HTTP/2 with prior knowledge";
  if (o.url === undefined || !o.url.startsWith("http://")) return "not a plain-text http:// URL";
  if (o.unixSocket !== undefined) return "a Unix socket";
  if (o.proxy !== undefined) return "a proxy";
  if (o.timeoutMs !== undefined) return "a timeout";
  if (o.output !== undefined) return "an output file";
  if (o.data === undefined || o.data === "" || o.data.startsWith("@")) return "no inline body";
  if (o.streamFile !== undefined) return "a stream file";
  if (o.listServices || o.listMethods) return "a listing";
  if (r.snapshot !== undefined) return "a snapshot";
  return undefined;
}

/** Why the method rules the light path out, or undefined. */
function methodRefusal(m: DescMethod): string | undefined {
  if (m.methodKind !== "unary") return `a ${m.methodKind.replace("_", " ")} method`;
  if (reachesAny(m.input) || reachesAny(m.output)) return "a message that can hold google.protobuf.Any";
  if (reachesExtendable(m.output)) return "a response that can hold extensions";
  return undefined;
}

/**
 * Opens the light path for the request a run repeats (`first`), its method resolved by the
 * pipeline's first call; or says why it does not apply.
 */
export async function openFastUnary(
  first: CheckedRequest,
  method: DescMethod,
  io: InputIo,
  product: string,
  connections: number,
): Promise<FastUnary | string> {
  const refused = fastUnaryRefusal(first) ?? methodRefusal(method);
  if (refused) return refused;
  let target: CallTarget;
  try {
    target = await describeTarget(first.options, io, product);
  } catch (err) {
    return `the options: ${(err as Error).message}`;
  }
  const c = target.connection;
  if (c?.mode !== "h2" || c.proxy !== undefined || target.url.secure) return "not plain-text HTTP/2";
  const template = headerTemplate(c.baseUrl, c.authority, method, target.headers);
  const fixedKey = optionsKey(first);
  const format = createMessageFormatter({ emitDefaults: first.options.emitDefaults });
  const name = `${method.parent.typeName}/${method.name}`;
  const details = detailResolver(method.parent.file);
  const base = new URL(c.baseUrl);
  const host = base.hostname.replace(/^\[|\]$/g, "");
  const port = Number(base.port || 80);
  const connections_: (H2cConnection | undefined)[] = Array.from({ length: connections });
  const watched = new WeakSet<AbortSignal>();
  // The request header block by body length, HPACK-encoded once per length, not once per call.
  const sized = new Map<number, Buffer>();
  const headersFor = (length: number): Buffer => {
    let h = sized.get(length);
    if (!h) {
      h = encodeHeaders([...template, ["content-length", String(length)]]);
      if (sized.size > 64) sized.clear();
      sized.set(length, h);
    }
    return h;
  };
  // Every connection not yet over: one that took no more requests (after GOAWAY) may still carry
  // some, and a canceled run must end those too.
  const live = new Set<H2cConnection>();
  const connection = (i: number): H2cConnection => {
    const open = connections_[i];
    if (open?.usable) return open;
    for (const h of live) if (h.finished) live.delete(h);
    const h2c: H2cConnection = new H2cConnection(host, port, () => {
      if (connections_[i] === h2c) connections_[i] = undefined;
    });
    connections_[i] = h2c;
    live.add(h2c);
    return h2c;
  };

  const body = bodyEncoder(method);

  const call = (
    request: CheckedRequest,
    i: number,
    signal: AbortSignal,
  ): Promise<CheckedCall> | undefined => {
    if (request !== first && optionsKey(request) !== fixedKey) return undefined;
    if (signal.aborted) return undefined;
    if (!watched.has(signal)) {
      watched.add(signal);
      signal.addEventListener("abort", () => {
        for (const h of live) h.cancelAll();
      });
    }
    const data = request.options.data;
    if (data === undefined || data === "" || data.startsWith("@")) return undefined;
    const started = performance.now();
    const encoded = body(data);
    if (encoded instanceof Uint8Array) return send(request, i, signal, encoded, started);
    return encoded.then(
      (bytes) => send(request, i, signal, bytes, started),
      (err) => failed(request, err, "setup", started),
    );
  };

  const send = (
    request: CheckedRequest,
    i: number,
    signal: AbortSignal,
    bytes: Uint8Array,
    started: number,
  ): Promise<CheckedCall> =>
    new Promise<CheckedCall>((resolve) => {
      connection(i).request(headersFor(bytes.byteLength), bytes, (failure, response) => {
        if (response) {
          resolve(answer(request, response.head, response.body, started));
          return;
        }
        resolve(failed(request, failureError(failure, signal), "call", started));
      });
    });

  const ctx: AnswerContext = { method, name, format, details };
  const answer = (request: CheckedRequest, head: ResponseHead, raw: Buffer, started: number) =>
    answerOf(ctx, request, head, raw, started);
  const failed = (request: CheckedRequest, err: unknown, phase: "setup" | "call", started: number) =>
    failedCall(ctx, request, err, phase, started);

  return {
    call,
    close() {
      for (const h of live) h.close();
    },
  };
}

/** The error a call that got no response ends with, as the pipeline would name it. */
function failureError(failure: H2cFailure | undefined, signal: AbortSignal): ConnectError {
  if (signal.aborted) return new ConnectError("the operation was aborted", Code.Canceled);
  if (failure?.kind === "connection") return new ConnectError(failure.message, Code.Unavailable);
  const code = failure?.code ?? PROTOCOL_ERROR;
  return new ConnectError(
    `the stream ended before the response (HTTP/2 code ${code})`,
    code === REFUSED_STREAM ? Code.Unavailable : Code.Internal,
  );
}

/** What must match the first request for a request to take the light path: all but its body. */
function optionsKey(r: CheckedRequest): string {
  return JSON.stringify({ ...r.options, data: undefined });
}

/** Response headers and (Connect's `trailer-` prefixed) trailers, as the call session lists them. */
function split(head: ResponseHead): { headers: HeaderPairs; trailers: HeaderPairs } {
  const headers: HeaderPairs = [];
  const trailers: HeaderPairs = [];
  for (const name of Object.keys(head).sort()) {
    if (name.startsWith(":")) continue;
    const v = head[name];
    const values = Array.isArray(v) ? v : [String(v)];
    if (name.startsWith("trailer-")) trailers.push([name.slice(8), values.join(", ")]);
    else if (name === "set-cookie") for (const x of values) headers.push([name, x]);
    else headers.push([name, values.join(", ")]);
  }
  trailers.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { headers, trailers };
}

function pairsOf(headers: Headers): HeaderPairs {
  const out: HeaderPairs = [];
  headers.forEach((value, name) => {
    if (name === "set-cookie") for (const v of headers.getSetCookie()) out.push([name, v]);
    else out.push([name, value]);
  });
  return out;
}

/** Error details decode with the method's file (and what it imports) besides google.rpc's types. */
function detailResolver(file: DescFile): Resolver {
  const files: DescFile[] = [];
  const add = (f: DescFile) => {
    if (files.includes(f)) return;
    files.push(f);
    for (const d of f.dependencies) add(d);
  };
  add(file);
  return {
    registry: async (_names: string[], ...more: DescFile[]) => createRegistry(...files, ...more),
  } as unknown as Resolver;
}

/** The request headers every call of the light path sends (content-length added per body). */
function headerTemplate(
  baseUrl: string,
  authorityOverride: string | undefined,
  method: DescMethod,
  headers: Iterable<[string, string]>,
): [string, string][] {
  const base = new URL(baseUrl);
  const path = `${base.pathname.replace(/\/$/, "")}/${method.parent.typeName}/${method.name}`;
  const authority = authorityOverride ?? base.host;
  const template: [string, string][] = [
    [":method", "POST"],
    [":scheme", "http"],
    [":authority", authority],
    [":path", path],
    ["content-type", "application/proto"],
    ["connect-protocol-version", "1"],
    ["accept-encoding", "gzip"],
  ];
  // A header given again replaces a default of the same name; repeats of its own are all sent.
  const given = new Set<string>();
  for (const [name, value] of headers) {
    const n = name.toLowerCase();
    if (n === "host") continue;
    if (!given.has(n)) {
      given.add(n);
      for (let i = template.length - 1; i >= 0; i--) if (template[i][0] === n) template.splice(i, 1);
    }
    template.push([n, value]);
  }
  return template;
}

/** The body of a request, encoded once while the data stays the same; rejects for bad JSON. */
function bodyEncoder(method: DescMethod): (data: string) => Uint8Array | Promise<Uint8Array> {
  let lastData: string | undefined;
  let lastBody: Uint8Array | undefined;

  return (data: string): Uint8Array | Promise<Uint8Array> => {
    if (lastBody && data === lastData) return lastBody;
    return (async () => {
      const docs: RequestDocument[] = [];
      for await (const d of readRequestDocuments(data, "--data")) docs.push(d);
      if (docs.length !== 1)
        throw new ConnectError(
          `--data holds ${docs.length} request messages: a unary method takes one`,
          Code.InvalidArgument,
        );
      const bytes = toBinary(method.input, requestFromJson(method.input, docs[0], "--data", undefined));
      lastData = data;
      lastBody = bytes;
      return bytes;
    })();
  };
}

/** What answering a call needs: the method and how to show and explain its messages. */
interface AnswerContext {
  method: DescMethod;
  name: string;
  format: ReturnType<typeof createMessageFormatter>;
  details: ReturnType<typeof detailResolver>;
}

/** The call's result from the response head and body, judged by the runner's check. */
function answerOf(
  ctx: AnswerContext,
  request: CheckedRequest,
  head: ResponseHead,
  raw: Buffer,
  started: number,
): CheckedCall | Promise<CheckedCall> {
  const { method, format } = ctx;
  const failed = (r: CheckedRequest, err: unknown, phase: "setup" | "call", t: number) =>
    failedCall(ctx, r, err, phase, t);
  const { headers, trailers } = split(head);
  const status = Number(head[":status"]);
  let bytes: Uint8Array = raw;
  try {
    if (head["content-encoding"] === "gzip") bytes = gunzipSync(raw);
  } catch (err) {
    return failed(
      request,
      new ConnectError(`invalid gzip response: ${(err as Error).message}`, Code.Internal),
      "call",
      started,
    );
  }
  if (status !== 200) {
    const metadata = new Headers([...headers, ...trailers]);
    const fallback = new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), metadata);
    let err: ConnectError;
    try {
      err = errorFromJsonBytes(bytes, metadata, fallback);
    } catch {
      err = fallback;
    }
    return failed(request, err, "call", started);
  }
  const type = String(head["content-type"] ?? "");
  if (!type.startsWith("application/proto")) {
    return failed(
      request,
      new ConnectError(`unexpected response content type "${type}"`, Code.Internal),
      "call",
      started,
    );
  }
  let json: string;
  let values: JsonValue[] | undefined;
  try {
    const message = fromBinary(method.output, bytes);
    json = format(method.output, message);
    if (readsMessages(request)) values = [toJson(method.output, message, { alwaysEmitImplicit: true })];
  } catch (err) {
    return failed(
      request,
      new ConnectError(`cannot decode the response: ${(err as Error).message}`, Code.Internal),
      "call",
      started,
    );
  }
  const result: CallResult = {
    ok: true,
    code: "ok",
    exitCode: 0,
    durationMs: performance.now() - started,
    method: ctx.name,
    methodKind: "unary",
    headers,
    messages: [json],
    trailers,
    warnings: [],
  };
  return checkCall(result, request, values);
}

/** A failed call, described as the pipeline describes it, judged by the runner's check. */
function failedCall(
  ctx: AnswerContext,
  request: CheckedRequest,
  err: unknown,
  phase: "setup" | "call",
  started: number,
): CheckedCall | Promise<CheckedCall> {
  const { details } = ctx;
  const failure = describeFailure(err, phase);
  const result: CallResult = {
    ok: false,
    code: failure.code,
    exitCode: failure.exitCode,
    durationMs: performance.now() - started,
    method: ctx.name,
    methodKind: "unary",
    headers: failure.metadata ? pairsOf(failure.metadata) : [],
    messages: [],
    trailers: [],
    warnings: [],
    error: { message: failure.message, details: failure.details, text: failure.text },
  };
  if (failure.details.length === 0)
    return checkCall(result, request, readsMessages(request) ? [] : undefined);
  return decodeFailureDetails(failure, details).then(() => {
    if (result.error) result.error.details = failure.details;
    return checkCall(result, request, readsMessages(request) ? [] : undefined);
  });
}
