// The one change the HTTP/2 relay (h2-relay.ts) makes to what a client sends: each request head is
// addressed to the upstream (`:authority` its host, `:scheme` its scheme, `:path` under its base path;
// hop-by-hop headers dropped, `te: trailers` kept: the rules of call-record.ts). Every other byte
// passes as it came, and as soon as it came (a DATA frame is passed on piece by piece). A header block
// (HEADERS + CONTINUATION) is decoded with an HPACK decoder that follows the client's encoder, and
// re-encoded with the static table only (so the upstream's table never holds anything the client's
// encoder does not know about; each block first sets that table's size to 0, which is always allowed
// and is what an upstream that lowered SETTINGS_HEADER_TABLE_SIZE waits for), split at the upstream's
// SETTINGS_MAX_FRAME_SIZE. A block that cannot be
// decoded is passed on as it came, and so is every block after it (the decoder no longer follows the
// client's table): the upstream then judges it, and the relay reports it once.

import {
  DEFAULT_MAX_FRAME_SIZE,
  Flag,
  type FrameHandler,
  type FrameHead,
  FrameParser,
  FrameType,
  headerFragment,
  headerFrames,
  MAX_HEADER_BLOCK,
} from "../http2/frames";
import { encodeHeadersStatic, HpackDecoder } from "../http2/hpack";
import { passesOn } from "./call-record";

/** Where requests go: the upstream's scheme, host (with port) and base path (no trailing slash). */
export interface RewriteTarget {
  readonly scheme: string;
  readonly authority: string;
  readonly basePath: string;
}

export type HeaderFields = [string, string][];

/** A request head (or client trailers) readdressed to `target`. */
export function rewriteFields(fields: HeaderFields, target: RewriteTarget): HeaderFields {
  const pseudo: HeaderFields = [];
  const regular: HeaderFields = [];
  let request = false;
  let authority = false;
  for (const [name, value] of fields) {
    if (!name.startsWith(":")) {
      if (passesOn(name, value, true)) regular.push([name, value]);
      continue;
    }
    if (name === ":method") request = true;
    if (name === ":authority") {
      authority = true;
      pseudo.push([name, target.authority]);
    } else if (name === ":scheme") pseudo.push([name, target.scheme]);
    else if (name === ":path") pseudo.push([name, target.basePath + value]);
    else pseudo.push([name, value]);
  }
  // A client may name the host in `host` instead (dropped above): the upstream is named either way.
  if (request && !authority) pseudo.push([":authority", target.authority]);
  return pseudo.concat(regular);
}

interface PendingBlock {
  readonly stream: number;
  readonly endStream: boolean;
  /** The frames as they came (header octets, payload), passed on unchanged if the block cannot be decoded. */
  readonly frames: Buffer[];
  readonly fragments: Buffer[];
  /** Octets held so far. */
  size: number;
}

/** Rewrites the client → upstream byte stream of one connection (preface included). */
export class RequestRewriter implements FrameHandler {
  /** The upstream's SETTINGS_MAX_FRAME_SIZE, set by the relay as the upstream's SETTINGS pass. */
  maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  /**
   * Each header block's decoded fields as the client sent them (undefined: not decoded), in order:
   * the relay's side reader takes them from here instead of decoding the blocks again.
   */
  readonly decoded: (HeaderFields | undefined)[] = [];
  /** Set once a block could not be decoded: why. From then on, blocks pass as they came. */
  failure: string | undefined;
  /** The highest stream a client HEADERS frame named so far. */
  lastStream = 0;
  /**
   * Set once the client was sent a GOAWAY naming this last stream: frames of streams above it are
   * not passed on (their heads still decoded, to follow the client's table).
   */
  refuseAbove: number | undefined;
  /** Whether the current frame is one not passed on. */
  private dropping = false;
  private readonly parser = new FrameParser(this, true);
  private readonly decoder = new HpackDecoder(2 ** 32);
  private out: Buffer[] = [];
  private head: FrameHead | undefined;
  private raw: Buffer | undefined;
  private pieces: Buffer[] = [];
  /** Whether the current frame belongs to a header block (held back until the block is complete). */
  private holding = false;
  private block: PendingBlock | undefined;

  constructor(private readonly target: RewriteTarget) {}

  /** The bytes to send upstream for `chunk` (neighbouring pieces of the chunk joined back up). */
  push(chunk: Buffer): Buffer[] {
    this.parser.push(chunk);
    const out = this.out;
    this.out = [];
    return out;
  }

  preface(piece: Buffer): void {
    this.emit(piece);
  }

  start(head: FrameHead, raw: Buffer): void {
    if (head.type === FrameType.HEADERS && head.stream > this.lastStream) this.lastStream = head.stream;
    this.dropping = this.refuseAbove !== undefined && head.stream > this.refuseAbove;
    this.holding =
      this.failure === undefined &&
      (head.type === FrameType.HEADERS || (head.type === FrameType.CONTINUATION && !!this.block));
    if (!this.holding) {
      if (!this.dropping) this.emit(raw);
      return;
    }
    this.head = head;
    this.raw = raw;
    this.pieces = [];
    if (head.type === FrameType.HEADERS) {
      this.block = {
        stream: head.stream,
        endStream: (head.flags & Flag.END_STREAM) !== 0,
        frames: [],
        fragments: [],
        size: 0,
      };
    }
  }

  payload(piece: Buffer): void {
    if (this.holding) this.pieces.push(piece);
    else if (!this.dropping) this.emit(piece);
  }

  end(): void {
    if (!this.holding) return;
    this.holding = false;
    const head = this.head as FrameHead;
    const block = this.block as PendingBlock;
    const payload = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces);
    this.pieces = [];
    block.frames.push(this.raw as Buffer, payload);
    block.size += payload.length;
    if (this.failure === undefined) {
      try {
        block.fragments.push(headerFragment(head.type, head.flags, payload));
      } catch (e) {
        this.failure = (e as Error).message;
      }
      if (block.size > MAX_HEADER_BLOCK)
        this.failure = `a request head of more than ${MAX_HEADER_BLOCK} octets`;
    }
    if (this.failure !== undefined) {
      // Not rewritten: what was held goes on now, and the rest of the block as it comes.
      this.block = undefined;
      this.passAsItCame(block);
      return;
    }
    if (!(head.flags & Flag.END_HEADERS)) return;
    this.block = undefined;
    this.finishBlock(block);
  }

  private finishBlock(block: PendingBlock): void {
    try {
      const bytes = block.fragments.length === 1 ? block.fragments[0] : Buffer.concat(block.fragments);
      const fields = this.decoder.decode(bytes);
      this.decoded.push(fields);
      if (this.refuseAbove !== undefined && block.stream > this.refuseAbove) return;
      const rewritten = encodeHeadersStatic(rewriteFields(fields, this.target), true);
      this.emit(headerFrames(rewritten, block.stream, block.endStream, this.maxFrameSize));
    } catch (e) {
      this.failure = `cannot decode a request head: ${(e as Error).message}`;
      this.passAsItCame(block);
    }
  }

  private passAsItCame(block: PendingBlock): void {
    this.decoded.push(undefined);
    if (this.refuseAbove !== undefined && block.stream > this.refuseAbove) return;
    for (const piece of block.frames) this.emit(piece);
  }

  /** Queues `piece`, joined to the one before when it continues it in the same buffer. */
  private emit(piece: Buffer): void {
    if (piece.length === 0) return;
    const last = this.out[this.out.length - 1];
    if (last && last.buffer === piece.buffer && last.byteOffset + last.length === piece.byteOffset) {
      this.out[this.out.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + piece.length);
    } else this.out.push(piece);
  }
}
