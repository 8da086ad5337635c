// HTTP/2 frames (RFC 9113 §4, §6) as the proxy's relay reads them off a byte stream: a parser that
// follows frame boundaries across chunks (the 9-octet frame header, then the payload in the pieces it
// arrived in, so a relay can pass a DATA frame on before all of it is here), the header-block fragment
// inside a HEADERS / PUSH_PROMISE / CONTINUATION payload (padding and priority fields dropped), and a
// header block written back out as HEADERS + CONTINUATION frames no larger than the peer allows.

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

/** The client connection preface (RFC 9113 §3.4). */
export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * The largest header block a reader holds (far above what servers accept: Node's default header list
 * limit is 64 KiB); past it, a reader stops rather than hold a sender's endless CONTINUATION frames.
 */
export const MAX_HEADER_BLOCK = 1 << 20;

/** SETTINGS_MAX_FRAME_SIZE's default (RFC 9113 §6.5.2). */
export const DEFAULT_MAX_FRAME_SIZE = 16_384;

export interface FrameHead {
  readonly length: number;
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
}

/** What a `FrameParser` finds, in order. */
export interface FrameHandler {
  /** Octets of the connection preface (only when the parser was told to expect it). */
  preface?(piece: Buffer): void;
  /** A frame's header was read; `raw` is its 9 octets. */
  start(head: FrameHead, raw: Buffer): void;
  /** Part of the current frame's payload, `offset` octets into it. */
  payload(piece: Buffer, offset: number): void;
  /** The current frame's payload is complete. */
  end(): void;
}

/** Reads frames from the chunks of one direction of a connection, as they come. */
export class FrameParser {
  private prefaceLeft: number;
  private readonly head = Buffer.alloc(9);
  private headFill = 0;
  private current: FrameHead | undefined;
  private offset = 0;

  constructor(
    private readonly handler: FrameHandler,
    expectPreface = false,
  ) {
    this.prefaceLeft = expectPreface ? PREFACE.length : 0;
  }

  /** Whether every octet pushed so far ends a whole frame (a frame of one's own may be put in here). */
  get atBoundary(): boolean {
    return this.prefaceLeft === 0 && this.headFill === 0 && this.current === undefined;
  }

  push(chunk: Buffer): void {
    let at = 0;
    if (this.prefaceLeft > 0) {
      const n = Math.min(this.prefaceLeft, chunk.length);
      this.handler.preface?.(chunk.subarray(0, n));
      this.prefaceLeft -= n;
      at = n;
    }
    while (at < chunk.length) {
      const frame = this.current;
      if (!frame) {
        at = this.readHead(chunk, at);
        continue;
      }
      const n = Math.min(frame.length - this.offset, chunk.length - at);
      this.handler.payload(chunk.subarray(at, at + n), this.offset);
      this.offset += n;
      at += n;
      if (this.offset === frame.length) this.finish();
    }
  }

  /** Reads (the rest of) a frame header from `chunk` at `at`; returns where it stopped. */
  private readHead(chunk: Buffer, at: number): number {
    let raw: Buffer;
    if (this.headFill === 0 && chunk.length - at >= 9) {
      raw = chunk.subarray(at, at + 9);
      at += 9;
    } else {
      const n = Math.min(9 - this.headFill, chunk.length - at);
      chunk.copy(this.head, this.headFill, at, at + n);
      this.headFill += n;
      at += n;
      if (this.headFill < 9) return at;
      this.headFill = 0;
      raw = Buffer.from(this.head);
    }
    const head: FrameHead = {
      length: raw.readUIntBE(0, 3),
      type: raw[3],
      flags: raw[4],
      stream: raw.readUInt32BE(5) & 0x7fffffff,
    };
    this.current = head;
    this.offset = 0;
    this.handler.start(head, raw);
    if (head.length === 0) this.finish();
    return at;
  }

  private finish(): void {
    this.current = undefined;
    this.handler.end();
  }
}

/** The octets of the padding length field and of the fields before the block, and of the padding. */
export function fragmentBounds(type: number, flags: number, payload: Buffer): { from: number; to: number } {
  let from = 0;
  let pad = 0;
  if ((type === FrameType.HEADERS || type === FrameType.PUSH_PROMISE) && flags & Flag.PADDED) {
    pad = payload[0] ?? 0;
    from = 1;
  }
  if (type === FrameType.HEADERS && flags & Flag.PRIORITY) from += 5;
  if (type === FrameType.PUSH_PROMISE) from += 4;
  const to = payload.length - pad;
  if (to < from)
    throw new Error(
      `a ${type === FrameType.HEADERS ? "HEADERS" : "PUSH_PROMISE"} frame's padding is longer than it`,
    );
  return { from, to };
}

/** The header-block fragment of a HEADERS, PUSH_PROMISE or CONTINUATION frame's payload. */
export function headerFragment(type: number, flags: number, payload: Buffer): Buffer {
  const { from, to } = fragmentBounds(type, flags, payload);
  return payload.subarray(from, to);
}

/**
 * A header block as HEADERS + CONTINUATION frames of at most `maxFrameSize` octets each (no padding,
 * no priority), the HEADERS frame ending the stream when `endStream`.
 */
export function headerFrames(
  block: Buffer,
  stream: number,
  endStream: boolean,
  maxFrameSize: number,
): Buffer {
  const count = Math.max(1, Math.ceil(block.length / maxFrameSize));
  const out = Buffer.allocUnsafe(block.length + 9 * count);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const piece = block.subarray(i * maxFrameSize, (i + 1) * maxFrameSize);
    const type = i === 0 ? FrameType.HEADERS : FrameType.CONTINUATION;
    const flags = (i === count - 1 ? Flag.END_HEADERS : 0) | (i === 0 && endStream ? Flag.END_STREAM : 0);
    writeFrameHead(out, at, piece.length, type, flags, stream);
    piece.copy(out, at + 9);
    at += 9 + piece.length;
  }
  return out;
}

/** Writes a frame's 9-octet head into `b` at `at`. */
export function writeFrameHead(
  b: Buffer,
  at: number,
  length: number,
  type: number,
  flags: number,
  stream: number,
): void {
  b[at] = length >>> 16;
  b[at + 1] = (length >>> 8) & 0xff;
  b[at + 2] = length & 0xff;
  b[at + 3] = type;
  b[at + 4] = flags;
  b.writeUInt32BE(stream, at + 5);
}

/** One frame: its head, then `payload`. */
export function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(9 + payload.length);
  writeFrameHead(out, 0, payload.length, type, flags, stream);
  payload.copy(out, 9);
  return out;
}

/** A GOAWAY frame: streams above `lastStream` were not taken; `code` 0 is a graceful close. */
export function goawayFrame(lastStream: number, code = 0): Buffer {
  const payload = Buffer.alloc(8);
  payload.writeUInt32BE(lastStream & 0x7fffffff, 0);
  payload.writeUInt32BE(code, 4);
  return frame(FrameType.GOAWAY, 0, 0, payload);
}

/** The value of setting `id` in a SETTINGS payload (the last one if repeated), if it is there. */
export function settingOf(payload: Buffer, id: number): number | undefined {
  let value: number | undefined;
  for (let at = 0; at + 6 <= payload.length; at += 6) {
    if (payload.readUInt16BE(at) === id) value = payload.readUInt32BE(at + 2);
  }
  return value;
}
