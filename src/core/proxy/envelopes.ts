// Reads the messages of a call on the side as its bytes flow through the proxy: the 5-byte
// envelopes of gRPC, gRPC-Web and Connect streams (flag, length, payload), or a Connect unary body
// as one message. Never changes a byte of what is passed on; keeps at most `maxMessages` payloads.
// A compressed message (an envelope's flag 1, or a unary body under Content-Encoding) is kept
// decompressed when its encoding is gzip (its decompressed size bounded as a message is), so the
// store decodes it; another encoding is kept as it came and shows as raw bytes.
import { gunzipSync } from "node:zlib";

export interface EnvelopeReader {
  /** Feeds the next chunk of a body. */
  push(chunk: Buffer): void;
  /** Ends the body (a Connect unary body becomes its one message). */
  end(): void;
  /** The body's compression (`grpc-encoding`, `connect-content-encoding`, or a unary body's `content-encoding`). */
  encoding: string | undefined;
  readonly messages: Buffer[];
  /** When each kept message was complete, in milliseconds since the reader was made. */
  readonly times: number[];
  /** Control envelopes (gRPC-Web trailers, Connect end-of-stream), in order. */
  readonly controls: Buffer[];
  bytes: number;
  truncated: boolean;
}

export function envelopeReader(
  enveloped: boolean,
  maxMessages = 1000,
  maxMessageBytes = 4 << 20,
): EnvelopeReader {
  let pending: Buffer = Buffer.alloc(0);
  const started = performance.now();
  const now = () => Math.round((performance.now() - started) * 1000) / 1000;
  /** The payload as the application wrote it, when its compression is known. */
  const inflate = (payload: Buffer): Buffer => {
    if (r.encoding?.trim().toLowerCase() !== "gzip") return payload;
    try {
      return gunzipSync(payload, { maxOutputLength: maxMessageBytes });
    } catch {
      r.truncated = true;
      return payload;
    }
  };
  const r: EnvelopeReader = {
    encoding: undefined,
    messages: [],
    times: [],
    controls: [],
    bytes: 0,
    truncated: false,
    push(chunk) {
      r.bytes += chunk.length;
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      if (!enveloped) {
        if (pending.length > maxMessageBytes) {
          r.truncated = true;
          pending = pending.subarray(0, maxMessageBytes);
        }
        return;
      }
      while (pending.length >= 5) {
        const flags = pending[0];
        const length = pending.readUInt32BE(1);
        if (pending.length < 5 + length) break;
        const raw = Buffer.from(pending.subarray(5, 5 + length));
        pending = pending.subarray(5 + length);
        const control = flags & 0x80 || flags & 0x02;
        if (!control && (r.messages.length >= maxMessages || length > maxMessageBytes)) {
          r.truncated = true;
          continue;
        }
        const payload = flags & 0x01 ? inflate(raw) : raw;
        if (control) r.controls.push(payload);
        else {
          r.messages.push(payload);
          r.times.push(now());
        }
      }
    },
    end() {
      if (!enveloped && r.bytes > 0) {
        r.messages.push(inflate(Buffer.from(pending)));
        r.times.push(now());
      }
    },
  };
  return r;
}
