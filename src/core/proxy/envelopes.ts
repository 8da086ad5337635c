// Reads the messages of a call on the side as its bytes flow through the proxy: the 5-byte
// envelopes of gRPC, gRPC-Web and Connect streams (flag, length, payload), or a Connect unary body
// as one message. Never changes or re-encodes a byte; keeps at most `maxMessages` payloads.

export interface EnvelopeReader {
  /** Feeds the next chunk of a body. */
  push(chunk: Buffer): void;
  /** Ends the body (a Connect unary body becomes its one message). */
  end(): void;
  readonly messages: Buffer[];
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
  const r: EnvelopeReader = {
    messages: [],
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
        const payload = Buffer.from(pending.subarray(5, 5 + length));
        pending = pending.subarray(5 + length);
        if (flags & 0x80 || flags & 0x02) r.controls.push(payload);
        else if (r.messages.length < maxMessages && length <= maxMessageBytes) r.messages.push(payload);
        else r.truncated = true;
      }
    },
    end() {
      if (!enveloped && r.bytes > 0) r.messages.push(Buffer.from(pending));
    },
  };
  return r;
}
