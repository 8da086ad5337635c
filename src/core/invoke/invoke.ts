// Calls one method in any of the four streaming shapes. Unary and server-streaming methods take
// exactly one request document (none sends an empty message); client- and bidi-streaming methods take
// zero or more, converted and sent as they are read, so responses of a bidi stream print while
// requests are still being typed. Each response message is handed to `onMessage` as it arrives.
import {
  create,
  type DescMessage,
  type DescMethod,
  type DescMethodStreaming,
  type DescMethodUnary,
  fromBinary,
  fromJson,
  type Message,
  type Registry,
  toBinary,
} from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { errorMessage, ProtocallError } from "../errors";
import { findUnknownKey, unknownFieldText } from "../schema/json-path";
import { coalesce } from "./batch";
import { expandFileValues, hasFileMarker } from "./file-values";
import { noRequestDataError, type RequestDocument } from "./request-data";

export interface InvokeOptions {
  transport: Transport;
  method: DescMethod;
  /** The request documents, or undefined for no data. */
  requests?: AsyncIterable<RequestDocument>;
  /** Names the request data in messages: `--data`, `stdin`, a file name. */
  requestLabel?: string;
  headers: [string, string][];
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Resolves google.protobuf.Any types in requests (asked for each request, so it may grow). */
  registry?: () => Registry | undefined;
  /** Receives each response message; may return a promise to apply backpressure. */
  onMessage(message: Message): void | Promise<void>;
  /**
   * When given, streamed responses are decoded here from their bytes (the transport's fast path);
   * see CurlTransport.tapResponses.
   */
  tapResponses?: (
    pathSuffix: string,
    tap: ((message: Uint8Array) => void | Promise<void>) | undefined,
  ) => void;
  /** When given, client and bidi streams send their requests as pre-encoded envelopes (fast path). */
  tapRequests?: (pathSuffix: string, body: AsyncIterable<Uint8Array> | undefined) => void;
  /** Response headers, when they arrive. */
  onHeaders?(headers: Headers): void;
}

/** Converts one JSON document to a request message; unknown fields are errors naming the position. */
export function requestFromJson(
  desc: DescMessage,
  doc: RequestDocument,
  label: string,
  registry: Registry | undefined,
): Message {
  try {
    const value = hasFileMarker(doc.value) ? expandFileValues(desc, doc.value) : doc.value;
    return fromJson(desc, value as never, { registry });
  } catch (err) {
    if (err instanceof ProtocallError) {
      throw new ProtocallError(
        `${label}:${doc.line}:${doc.column}: request message #${doc.index + 1}: ${err.message}`,
      );
    }
    let why = errorMessage(err).replace(/^cannot decode message [\w.]+ from JSON: /, "");
    // protobuf-es names the key alone; say where it is and which field was meant, as the editor does.
    const unknown = /^key ".*" is unknown$/.test(why) ? findUnknownKey(desc, doc.value) : undefined;
    if (unknown) why = unknownFieldText(unknown.message, unknown.key);
    throw new ProtocallError(
      `${label}:${doc.line}:${doc.column}: request message #${doc.index + 1} is not a valid ${desc.typeName}: ${why}`,
    );
  }
}

/** Runs the call; RPC failures throw ConnectError, bad input throws ProtocallError. */
export async function invokeMethod(o: InvokeOptions): Promise<{ trailers: Headers }> {
  const { method, transport } = o;
  const label = o.requestLabel ?? "--data";
  const header = new Headers();
  for (const [name, value] of o.headers) header.append(name, value);

  if (method.methodKind === "unary" || method.methodKind === "server_streaming") {
    const input = await singleRequest(o, label);
    if (method.methodKind === "unary") {
      const res = await transport.unary(
        method as DescMethodUnary,
        o.signal,
        o.timeoutMs,
        header,
        input as never,
      );
      o.onHeaders?.(res.header);
      await o.onMessage(res.message as Message);
      return { trailers: res.trailer };
    }
    const tapped = tapResponses(o);
    try {
      const res = await transport.stream(
        method as DescMethodStreaming,
        o.signal,
        o.timeoutMs,
        header,
        oneShot(input) as never,
      );
      o.onHeaders?.(res.header);
      for await (const m of res.message) {
        const wait = o.onMessage(m as Message);
        if (wait) await wait;
      }
      tapped.check();
      return { trailers: res.trailer };
    } catch (err) {
      tapped.check();
      throw err;
    } finally {
      tapped.remove();
    }
  }

  // Client and bidi streams: requests are converted while they are sent. A bad document stops the
  // upload; its ProtocallError wins over whatever error the aborted call reports.
  let inputError: unknown;
  const controller = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, controller.signal]) : controller.signal;
  async function* requests(): AsyncGenerator<Message> {
    if (!o.requests) return;
    try {
      for await (const doc of o.requests) yield requestFromJson(method.input, doc, label, o.registry?.());
    } catch (err) {
      inputError = err;
      controller.abort(err);
      throw err;
    }
  }
  const tapped = method.methodKind === "bidi_streaming" ? tapResponses(o) : undefined;
  const suffix = `/${method.parent.typeName}/${method.name}`;
  if (o.tapRequests) o.tapRequests(suffix, encodeEnvelopes(requests(), method.input));
  try {
    const res = await transport.stream(
      method as DescMethodStreaming,
      signal,
      o.timeoutMs,
      header,
      (o.tapRequests ? noRequests() : requests()) as never,
    );
    o.onHeaders?.(res.header);
    for await (const m of res.message) {
      const wait = o.onMessage(m as Message);
      if (wait) await wait;
    }
    if (inputError) throw inputError;
    tapped?.check();
    return { trailers: res.trailer };
  } catch (err) {
    if (inputError) throw inputError;
    tapped?.check();
    throw err;
  } finally {
    tapped?.remove();
    o.tapRequests?.(suffix, undefined);
  }
}

async function* noRequests(): AsyncGenerator<Message> {}

/**
 * Request messages as uncompressed envelopes, several to a chunk: each message is serialized as it
 * is read, and whatever is ready is sent together (up to 64 KiB); a message that is not ready yet
 * (stdin still being typed) never holds back those before it.
 */
async function* encodeEnvelopes(
  messages: AsyncIterable<Message>,
  desc: DescMessage,
): AsyncGenerator<Uint8Array> {
  for await (const batch of coalesce(envelopes(messages, desc))) yield batch;
}

async function* envelopes(messages: AsyncIterable<Message>, desc: DescMessage): AsyncGenerator<Uint8Array> {
  for await (const m of messages) {
    const data = toBinary(desc, m);
    const out = new Uint8Array(data.length + 5);
    out[1] = data.length >>> 24;
    out[2] = (data.length >>> 16) & 0xff;
    out[3] = (data.length >>> 8) & 0xff;
    out[4] = data.length & 0xff;
    out.set(data, 5);
    yield out;
  }
}

/**
 * Decodes streamed responses in the transport's fast path when it offers one. A failure there (a
 * message that does not decode, or cannot be printed) is kept and rethrown as it is, instead of the
 * error the transport makes of it.
 */
function tapResponses(o: InvokeOptions): { check(): void; remove(): void } {
  const suffix = `/${o.method.parent.typeName}/${o.method.name}`;
  let failure: { err: unknown } | undefined;
  if (o.tapResponses) {
    const output = o.method.output;
    o.tapResponses(suffix, (bytes) => {
      try {
        let message: Message;
        try {
          message = fromBinary(output, bytes);
        } catch (err) {
          throw new ProtocallError(`cannot decode the response message: ${errorMessage(err)}`);
        }
        return o.onMessage(message);
      } catch (err) {
        failure ??= { err };
        throw err;
      }
    });
  }
  return {
    check() {
      if (failure) throw failure.err;
    },
    remove() {
      o.tapResponses?.(suffix, undefined);
    },
  };
}

async function singleRequest(o: InvokeOptions, label: string): Promise<Message> {
  const desc = o.method.input;
  if (!o.requests) return create(desc);
  let first: RequestDocument | undefined;
  for await (const doc of o.requests) {
    if (first) {
      const kind = o.method.methodKind === "unary" ? "unary" : "server-streaming";
      throw new ProtocallError(
        `${label}:${doc.line}:${doc.column}: ${o.method.parent.typeName}/${o.method.name} is a ${kind} method and takes exactly one request message, but the data holds more; give one JSON document`,
      );
    }
    first = doc;
  }
  if (!first) throw noRequestDataError(label, `${o.method.parent.typeName}/${o.method.name}`);
  return requestFromJson(desc, first, label, o.registry?.());
}

async function* oneShot(message: Message): AsyncGenerator<Message> {
  yield message;
}
