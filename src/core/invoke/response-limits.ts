// How much of a response the client reads, as buf bounds it: a message over 4 MiB (MAX_MESSAGE_BYTES)
// is refused with `resource_exhausted` from its length prefix or Content-Length, before it is read;
// a compressed one is inflated with that cap (zlib stops as soon as the output passes it, so a gzip
// bomb costs at most 4 MiB in and 4 MiB out); an enveloped body that ends inside a message is
// `internal`, and one cut short by a clean close of the connection is worded by where it stopped
// (body-cut-short.ts). The transport passes every response body through `boundMessages`.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Compression, UniversalClientResponse } from "@connectrpc/connect/protocol";
import { type CutPosition, cutShortError, cutShortReadError } from "./body-cut-short";

/** The largest response message accepted, compressed or not (buf's default, 4 MiB). */
export const MAX_MESSAGE_BYTES = 4 << 20;

export function tooLarge(size?: number): ConnectError {
  return new ConnectError(
    size === undefined
      ? `message is larger than configured max ${MAX_MESSAGE_BYTES}`
      : `message size ${size} is larger than configured max ${MAX_MESSAGE_BYTES}`,
    Code.ResourceExhausted,
  );
}

/**
 * Checks a response body as it streams through, before anything buffers it: an enveloped body
 * (gRPC, gRPC-Web, Connect streaming) by each envelope's length prefix, which may not exceed the
 * limit and must be followed by that many bytes; any other successful body (Connect unary) by its
 * Content-Length and its running size. Costs one look at each envelope header.
 */
export function boundMessages(res: UniversalClientResponse): AsyncIterable<Uint8Array> {
  const contentType = res.header.get("content-type") ?? "";
  if (/^application\/(grpc|connect\+)/.test(contentType)) return checkEnvelopes(res.body);
  if (res.status !== 200) return res.body;
  const length = Number(res.header.get("content-length") ?? Number.NaN);
  if (length > MAX_MESSAGE_BYTES) return failing(tooLarge());
  return capBody(res.body);
}

async function* failing(err: Error): AsyncIterable<Uint8Array> {
  yield* [];
  throw err;
}

async function* capBody(src: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let total = 0;
  for await (const chunk of cutShortAt(src, () => "unary")) {
    total += chunk.byteLength;
    if (total > MAX_MESSAGE_BYTES) throw tooLarge();
    yield chunk;
  }
}

/** Passes `src` through; a failure marked as a body cut short is worded by where `position` says. */
async function* cutShortAt(
  src: AsyncIterable<Uint8Array>,
  position: () => CutPosition,
): AsyncIterable<Uint8Array> {
  try {
    yield* src;
  } catch (err) {
    const readError = cutShortReadError(err);
    throw readError === undefined ? err : cutShortError(readError, position());
  }
}

async function* checkEnvelopes(src: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const header = new Uint8Array(5);
  let headerLength = 0;
  let promised = 0;
  let remaining = 0;
  // Cut inside a length prefix is still between messages for buf ("incomplete envelope").
  const position = (): CutPosition => (remaining > 0 ? "inside-message" : "between-messages");
  for await (const chunk of cutShortAt(src, position)) {
    let i = 0;
    while (i < chunk.length) {
      if (remaining > 0) {
        const take = Math.min(remaining, chunk.length - i);
        remaining -= take;
        i += take;
        continue;
      }
      header[headerLength++] = chunk[i++];
      if (headerLength === 5) {
        headerLength = 0;
        remaining = ((header[1] << 24) >>> 0) + (header[2] << 16) + (header[3] << 8) + header[4];
        promised = remaining;
        // Trailer envelopes (gRPC-Web 0x80, Connect's end of stream 0x02) are metadata, not messages.
        if (remaining > MAX_MESSAGE_BYTES && (header[0] & 0x82) === 0) throw tooLarge(remaining);
      }
    }
    yield chunk;
  }
  if (remaining > 0) {
    throw new ConnectError(
      `protocol error: promised ${promised} bytes in enveloped message, got ${promised - remaining} bytes`,
      Code.Internal,
    );
  }
}

/**
 * Inflates with a cap on the output: zlib works through the input chunk by chunk and stops as soon as
 * the output passes `max` (a 1 GiB bomb ends after 4 MiB of output), so nothing is inflated whole.
 */
export function gunzipCapped(data: Uint8Array, max: number): Uint8Array<ArrayBuffer> {
  try {
    return new Uint8Array(loadZlib().gunzipSync(data, { maxOutputLength: max }));
  } catch (err) {
    if (err instanceof RangeError || (err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      throw tooLarge();
    }
    throw ConnectError.from(err, Code.InvalidArgument);
  }
}

export function loadZlib(): typeof import("node:zlib") {
  return require("node:zlib");
}

/** gzip for responses; zlib is loaded only when a server actually compresses. */
export const gzip: Compression = {
  name: "gzip",
  async compress(bytes) {
    const zlib = loadZlib();
    return new Uint8Array(zlib.gzipSync(bytes));
  },
  async decompress(bytes, readMaxBytes) {
    if (bytes.byteLength === 0) return new Uint8Array(0);
    return gunzipCapped(bytes, Math.min(readMaxBytes, MAX_MESSAGE_BYTES));
  },
};
