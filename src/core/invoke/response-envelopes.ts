// Response envelopes (gRPC, gRPC-Web, Connect streaming) read outside connect-es's per-message
// pipeline: `tapMessages` is the fast path for long streams (each chunk's envelopes split
// synchronously, with back-pressure per message), and `EnvelopeScanner` finds the trailer envelope for
// verbose output.
import { Code, ConnectError } from "@connectrpc/connect";
import type { UniversalClientResponse } from "@connectrpc/connect/protocol";
import { gunzipCapped, MAX_MESSAGE_BYTES } from "./response-limits";

/** Receives each response message's bytes; a returned promise holds back the next message. */
export type ResponseTap = (message: Uint8Array) => void | Promise<void>;

/**
 * Finds the trailer envelope in a response body (gRPC-Web trailers, flag 0x80; Connect end of
 * stream, flag 0x02), for verbose output only. Compressed trailer envelopes are not shown.
 */
export class EnvelopeScanner {
  private header = new Uint8Array(5);
  private headerLength = 0;
  private remaining = 0;
  private capture: Uint8Array[] | undefined;
  private found: Uint8Array | undefined;

  constructor(private readonly trailerFlag: number) {}

  push(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - i);
        this.capture?.push(chunk.subarray(i, i + take));
        this.remaining -= take;
        i += take;
        if (this.remaining === 0) this.finishEnvelope();
        continue;
      }
      this.header[this.headerLength++] = chunk[i++];
      if (this.headerLength === 5) {
        this.headerLength = 0;
        const flags = this.header[0];
        this.remaining =
          ((this.header[1] << 24) >>> 0) + (this.header[2] << 16) + (this.header[3] << 8) + this.header[4];
        this.capture =
          (flags & this.trailerFlag) === this.trailerFlag && (flags & 0x01) === 0 ? [] : undefined;
        if (this.remaining === 0) this.finishEnvelope();
      }
    }
  }

  private finishEnvelope(): void {
    if (this.capture) this.found = Buffer.concat(this.capture);
    this.capture = undefined;
  }

  /** The trailers carried in the body, if any. */
  trailers(grpcWeb: boolean): Headers | undefined {
    if (!this.found) return undefined;
    const text = new TextDecoder().decode(this.found);
    const headers = new Headers();
    try {
      if (grpcWeb) {
        for (const line of text.split(/\r?\n/)) {
          const colon = line.indexOf(":");
          if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
        }
      } else {
        const end = JSON.parse(text) as { metadata?: Record<string, string[]> };
        for (const [name, values] of Object.entries(end.metadata ?? {})) {
          for (const v of values) headers.append(name, v);
        }
      }
    } catch {
      return undefined;
    }
    let any = false;
    headers.forEach(() => {
      any = true;
    });
    return any ? headers : undefined;
  }
}

const ENVELOPED_BINARY = /^application\/(grpc|grpc\+proto|grpc-web|grpc-web\+proto|connect\+proto)(;|$)/;

/**
 * The fast path for long response streams. Connect's pipeline costs several promises per message;
 * here the envelopes of each received chunk are split synchronously and the messages handed to the
 * tap, and only what ends the stream (gRPC-Web trailers, the Connect end-of-stream message, or an
 * incomplete envelope) is passed on, so the transport still reports status, trailers and errors.
 * Responses that are not binary Protobuf (JSON, errors with other content types) pass unchanged.
 */
export function tapMessages(res: UniversalClientResponse, tap: ResponseTap): UniversalClientResponse {
  const contentType = res.header.get("content-type") ?? "";
  if (res.status !== 200 || !ENVELOPED_BINARY.test(contentType)) return res;
  const encoding =
    res.header.get("grpc-encoding") ?? res.header.get("connect-content-encoding") ?? "identity";
  const endFlag = contentType.includes("grpc-web") ? 0x80 : contentType.includes("connect") ? 0x02 : 0;
  return { ...res, body: splitEnvelopes(res.body, tap, endFlag, encoding) };
}

async function* splitEnvelopes(
  src: AsyncIterable<Uint8Array>,
  tap: ResponseTap,
  endFlag: number,
  encoding: string,
): AsyncIterable<Uint8Array> {
  let rest: Uint8Array = new Uint8Array(0);
  for await (const chunk of src) {
    let buf = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
    let pos = 0;
    const passOn: Uint8Array[] = [];
    while (buf.length - pos >= 5) {
      const flags = buf[pos];
      const len = ((buf[pos + 1] << 24) >>> 0) + (buf[pos + 2] << 16) + (buf[pos + 3] << 8) + buf[pos + 4];
      if (buf.length - pos - 5 < len) break;
      const end = pos + 5 + len;
      if (endFlag !== 0 && (flags & endFlag) === endFlag) {
        passOn.push(buf.subarray(pos, end));
      } else {
        let data = buf.subarray(pos + 5, end);
        if ((flags & 0x01) === 0x01) data = decompress(data, encoding);
        // Back-pressure per message: a chunk can hold megabytes of small messages (a stream reads
        // whatever the connection has buffered), and output that must wait stops the splitting here,
        // so messages are never decoded and formatted faster than they are written out.
        const wait = tap(data);
        if (wait) await wait;
      }
      pos = end;
    }
    rest = pos === buf.length ? new Uint8Array(0) : buf.subarray(pos);
    if (buf === chunk && rest.length > 0) rest = Uint8Array.from(rest); // the chunk's buffer may be reused
    buf = rest;
    for (const p of passOn) yield p;
  }
  if (rest.length > 0) yield rest;
}

function decompress(data: Uint8Array, encoding: string): Uint8Array {
  if (encoding !== "gzip") {
    throw new ConnectError(
      `protocol error: received a compressed message with encoding "${encoding}"`,
      Code.Internal,
    );
  }
  return gunzipCapped(data, MAX_MESSAGE_BYTES);
}
