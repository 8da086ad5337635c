// The frames of one direction of an HTTP/2 connection as the events an observer needs: a complete
// header block per HEADERS (+ CONTINUATION) or PUSH_PROMISE, DATA payloads without their padding
// (in the pieces they arrived in), the end of a stream, RST_STREAM, GOAWAY and SETTINGS. The proxy's
// relay runs one per direction beside the bytes it passes on, to see the calls (proxy/relay-calls.ts).
import {
  Flag,
  type FrameHandler,
  type FrameHead,
  FrameParser,
  FrameType,
  headerFragment,
  MAX_HEADER_BLOCK,
} from "./frames";

export interface FrameSink {
  /** A complete header block on `stream` (HEADERS: `endStream` from its flags; PUSH_PROMISE: `promise`). */
  headers(stream: number, block: Buffer, endStream: boolean, promise: boolean): void;
  /** Part of a DATA frame's data (padding left out). */
  data(stream: number, piece: Buffer): void;
  /** A DATA frame ended the stream (a HEADERS frame says so in `headers`). */
  endStream(stream: number): void;
  reset(stream: number, code: number): void;
  goaway(lastStream: number, code: number): void;
  /** A SETTINGS frame (not an acknowledgement): its payload. */
  settings(payload: Buffer): void;
}

/** Frames whose payload is read whole (the rest pass as they come, or are not needed). */
const WHOLE = new Set<number>([
  FrameType.HEADERS,
  FrameType.PUSH_PROMISE,
  FrameType.CONTINUATION,
  FrameType.RST_STREAM,
  FrameType.GOAWAY,
  FrameType.SETTINGS,
]);

export class FrameEvents implements FrameHandler {
  private readonly parser: FrameParser;
  private head: FrameHead | undefined;
  private pieces: Buffer[] = [];
  /** A DATA frame's padding length, once its first octet was read. */
  private pad = 0;
  private block:
    | { stream: number; endStream: boolean; promise: boolean; fragments: Buffer[]; size: number }
    | undefined;

  constructor(
    private readonly sink: FrameSink,
    expectPreface = false,
  ) {
    this.parser = new FrameParser(this, expectPreface);
  }

  push(chunk: Buffer): void {
    this.parser.push(chunk);
  }

  /** Whether the bytes read so far end a whole frame. */
  get atBoundary(): boolean {
    return this.parser.atBoundary;
  }

  start(head: FrameHead): void {
    this.head = head;
    this.pieces = [];
    this.pad = 0;
  }

  payload(piece: Buffer, offset: number): void {
    const h = this.head as FrameHead;
    if (h.type === FrameType.DATA) {
      if (!(h.flags & Flag.PADDED)) {
        this.sink.data(h.stream, piece);
        return;
      }
      let from = offset;
      if (offset === 0) {
        this.pad = piece[0];
        from = 1;
      }
      const to = Math.min(offset + piece.length, h.length - this.pad);
      if (to > from) this.sink.data(h.stream, piece.subarray(from - offset, to - offset));
      return;
    }
    if (WHOLE.has(h.type)) this.pieces.push(piece);
  }

  end(): void {
    const h = this.head as FrameHead;
    const t = h.type;
    if (t === FrameType.DATA) {
      if (h.flags & Flag.END_STREAM) this.sink.endStream(h.stream);
      return;
    }
    if (!WHOLE.has(t)) return;
    const payload = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces);
    this.pieces = [];
    if (t === FrameType.HEADERS || t === FrameType.PUSH_PROMISE) {
      this.block = {
        stream: h.stream,
        endStream: t === FrameType.HEADERS && (h.flags & Flag.END_STREAM) !== 0,
        promise: t === FrameType.PUSH_PROMISE,
        fragments: [headerFragment(t, h.flags, payload)],
        size: payload.length,
      };
    } else if (t === FrameType.CONTINUATION) {
      if (!this.block) return;
      this.block.fragments.push(payload);
      this.block.size += payload.length;
      if (this.block.size > MAX_HEADER_BLOCK)
        throw new Error(`a header block of more than ${MAX_HEADER_BLOCK} octets`);
    } else if (t === FrameType.RST_STREAM) {
      if (payload.length >= 4) this.sink.reset(h.stream, payload.readUInt32BE(0));
      return;
    } else if (t === FrameType.GOAWAY) {
      if (payload.length >= 8)
        this.sink.goaway(payload.readUInt32BE(0) & 0x7fffffff, payload.readUInt32BE(4));
      return;
    } else {
      if (!(h.flags & Flag.ACK)) this.sink.settings(payload);
      return;
    }
    const block = this.block;
    if (!block || !(h.flags & Flag.END_HEADERS)) return;
    this.block = undefined;
    const bytes = block.fragments.length === 1 ? block.fragments[0] : Buffer.concat(block.fragments);
    this.sink.headers(block.stream, bytes, block.endStream, block.promise);
  }
}
