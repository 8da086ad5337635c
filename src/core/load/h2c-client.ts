// The light path's own HTTP/2 client: one plain-text connection with prior knowledge (h2c) over a
// net.Socket, for unary calls whose request headers never change. Node's http2 client spends far
// more CPU per request than the server under test does to answer it (a stream object with its
// Duplex machinery, header objects converted both ways, events per stream): on a machine the
// server shares, that CPU is taken from the server. Here a request is two frames written from a
// header block encoded once (hpack.ts), and a response is its frames read off the socket into one
// callback. Every frame a server may send is handled: SETTINGS, PING, WINDOW_UPDATE (both flow
// control windows are kept), HEADERS/CONTINUATION (decoded in order, so the HPACK table stays
// right), DATA, RST_STREAM and GOAWAY; a connection error or an undecodable frame ends every stream
// on the connection with a reason, never a hang.
import * as net from "node:net";
import { writeFrameHead } from "../http2/frames";
import { HpackDecoder } from "../http2/hpack";

/** A response: its fields as Node's http2 client gives them (pseudo-headers included), and its body. */
export interface H2cResponse {
  head: Record<string, string | string[]>;
  body: Buffer;
}

/** Why a stream ended without a response: a reset (an HTTP/2 error code), or the connection failing. */
export type H2cFailure = { kind: "reset"; code: number } | { kind: "connection"; message: string };

export type H2cDone = (failure: H2cFailure | undefined, response?: H2cResponse) => void;

/** HTTP/2 error codes used here (RFC 9113 §7). */
export const NO_ERROR = 0;
export const PROTOCOL_ERROR = 1;
export const REFUSED_STREAM = 7;
export const CANCEL = 8;

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const DATA = 0;
const HEADERS = 1;
const RST_STREAM = 3;
const SETTINGS = 4;
const PUSH_PROMISE = 5;
const PING = 6;
const GOAWAY = 7;
const WINDOW_UPDATE = 8;
const CONTINUATION = 9;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY = 0x20;

/** The receive window this side offers per stream and for the connection; refilled at half. */
const WINDOW = 16 * 1024 * 1024;
const MAX_ID = 2 ** 31 - 1;
/** The largest frame a server may send here (this side announces no larger SETTINGS_MAX_FRAME_SIZE). */
const MAX_FRAME = 16_384;

interface Stream {
  id: number;
  done: H2cDone;
  /** The request body still to send (flow control may hold part of it back). */
  pending: Uint8Array | undefined;
  sendWindow: number;
  received: number;
  head: Record<string, string | string[]> | undefined;
  chunks: Buffer[];
}

export class H2cConnection {
  private readonly socket: net.Socket;
  private readonly decoder = new HpackDecoder();
  private readonly streams = new Map<number, Stream>();
  /** Streams waiting for the server's concurrency limit, or for the connection to open. */
  private readonly queued: { headers: Buffer; body: Uint8Array; stream: Stream }[] = [];
  private out: Buffer[] = [];
  private flushing = false;
  private inbox: Buffer | undefined;
  private nextId = 1;
  private peerMaxStreams = Number.POSITIVE_INFINITY;
  private peerInitialWindow = 65_535;
  private peerMaxFrame = 16_384;
  private sendWindow = 65_535;
  private receivedOnConnection = 0;
  /** The header block being read (HEADERS then CONTINUATION frames), and its stream. */
  private headerBlock: { id: number; parts: Buffer[]; endStream: boolean } | undefined;
  private goneAway = false;
  /** The server's first SETTINGS arrived: until then requests wait (its stream limit is not known). */
  private ready = false;
  private ended: string | undefined;
  private onEnd: (() => void) | undefined;

  /** Connects to host:port; `onEnd` is called once when the connection can take no more requests. */
  constructor(host: string, port: number, onEnd?: () => void) {
    this.onEnd = onEnd;
    this.socket = net.connect({ host, port, noDelay: true });
    this.socket.unref();
    const settings = Buffer.alloc(9 + 12);
    writeFrameHead(settings, 0, 12, SETTINGS, 0, 0);
    settings.writeUInt16BE(0x2, 9); // ENABLE_PUSH
    settings.writeUInt32BE(0, 11);
    settings.writeUInt16BE(0x4, 15); // INITIAL_WINDOW_SIZE
    settings.writeUInt32BE(WINDOW, 17);
    const update = Buffer.alloc(13);
    writeFrameHead(update, 0, 4, WINDOW_UPDATE, 0, 0);
    update.writeUInt32BE(WINDOW - 65_535, 9);
    this.send(PREFACE);
    this.send(settings);
    this.send(update);
    this.socket.on("data", (chunk: Buffer) => this.read(chunk));
    this.socket.on("error", (err) => this.end(err.message));
    this.socket.on("close", () => this.end("the connection closed before the response"));
  }

  /** Whether the connection is over (closed, failed, or drained after GOAWAY). */
  get finished(): boolean {
    return this.ended !== undefined;
  }

  /** Whether new requests may go on this connection. */
  get usable(): boolean {
    return this.ended === undefined && !this.goneAway && this.nextId < MAX_ID;
  }

  /**
   * Sends a request: `headers` a complete HPACK block (END_HEADERS in one frame), `body` the whole
   * body. `done` is called exactly once.
   */
  request(headers: Buffer, body: Uint8Array, done: H2cDone): void {
    const stream: Stream = {
      id: 0,
      done,
      pending: body,
      sendWindow: 0,
      received: 0,
      head: undefined,
      chunks: [],
    };
    if (this.ended !== undefined) {
      done({ kind: "connection", message: this.ended });
      return;
    }
    if (this.goneAway) {
      done({ kind: "reset", code: REFUSED_STREAM });
      return;
    }
    if (!this.ready || this.streams.size >= this.peerMaxStreams || this.queued.length > 0) {
      this.queued.push({ headers, body, stream });
      return;
    }
    this.open(headers, stream);
  }

  /** Resets every open stream with CANCEL; their `done` gets a reset with that code. */
  cancelAll(): void {
    const queued = this.queued.splice(0);
    for (const q of queued) q.stream.done({ kind: "reset", code: CANCEL });
    for (const s of [...this.streams.values()]) {
      this.rst(s.id, CANCEL);
      this.finish(s, { kind: "reset", code: CANCEL });
    }
  }

  close(): void {
    this.cancelAll();
    if (this.ended === undefined) {
      const goaway = Buffer.alloc(17);
      writeFrameHead(goaway, 0, 8, GOAWAY, 0, 0);
      this.send(goaway);
      this.flush();
    }
    this.end("the connection was closed");
    this.socket.end();
  }

  private open(headers: Buffer, stream: Stream): void {
    const id = this.nextId;
    this.nextId += 2;
    stream.id = id;
    stream.sendWindow = this.peerInitialWindow;
    this.streams.set(id, stream);
    if (headers.length > this.peerMaxFrame) {
      // A header block larger than one frame: HEADERS then CONTINUATION frames.
      for (let at = 0; at < headers.length; at += this.peerMaxFrame) {
        const part = headers.subarray(at, at + this.peerMaxFrame);
        const last = at + this.peerMaxFrame >= headers.length;
        const f = Buffer.allocUnsafe(9 + part.length);
        writeFrameHead(f, 0, part.length, at === 0 ? HEADERS : CONTINUATION, last ? END_HEADERS : 0, id);
        part.copy(f, 9);
        this.send(f);
      }
    } else {
      const f = Buffer.allocUnsafe(9 + headers.length);
      writeFrameHead(f, 0, headers.length, HEADERS, END_HEADERS, id);
      headers.copy(f, 9);
      this.send(f);
    }
    this.pump(stream);
  }

  /** Sends as much of the stream's body as the flow control windows allow. */
  private pump(s: Stream): void {
    const body = s.pending;
    if (body === undefined) return;
    if (body.length === 0) {
      const f = Buffer.allocUnsafe(9);
      writeFrameHead(f, 0, 0, DATA, END_STREAM, s.id);
      this.send(f);
      s.pending = undefined;
      return;
    }
    let at = 0;
    while (at < body.length) {
      const n = Math.min(body.length - at, this.peerMaxFrame, this.sendWindow, s.sendWindow);
      if (n <= 0) break;
      const last = at + n === body.length;
      const f = Buffer.allocUnsafe(9 + n);
      writeFrameHead(f, 0, n, DATA, last ? END_STREAM : 0, s.id);
      f.set(body.subarray(at, at + n), 9);
      this.send(f);
      this.sendWindow -= n;
      s.sendWindow -= n;
      at += n;
    }
    s.pending = at === body.length ? undefined : body.subarray(at);
  }

  private send(b: Buffer): void {
    this.out.push(b);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes what the requests of this turn of the event loop queued, in one write. */
  private flush(): void {
    this.flushing = false;
    if (this.out.length === 0 || this.socket.destroyed) return;
    const data = this.out.length === 1 ? this.out[0] : Buffer.concat(this.out);
    this.out = [];
    this.socket.write(data);
  }

  private rst(id: number, code: number): void {
    if (this.ended !== undefined) return;
    const f = Buffer.allocUnsafe(13);
    writeFrameHead(f, 0, 4, RST_STREAM, 0, id);
    f.writeUInt32BE(code, 9);
    this.send(f);
  }

  private finish(s: Stream, failure: H2cFailure | undefined, response?: H2cResponse): void {
    if (!this.streams.delete(s.id)) return;
    this.dequeue();
    if (!this.usable && this.streams.size === 0 && this.ended === undefined) {
      this.end("the server closed the connection");
      this.socket.end();
    }
    s.done(failure, response);
  }

  /** Opens the queued streams the server's limit allows. */
  private dequeue(): void {
    while (this.queued.length > 0 && this.streams.size < this.peerMaxStreams && this.usable) {
      const q = this.queued.shift() as (typeof this.queued)[number];
      this.open(q.headers, q.stream);
    }
  }

  /** The connection is over: every stream still open (or queued) ends with `why`. */
  private end(why: string): void {
    if (this.ended !== undefined) return;
    this.ended = why;
    const failure: H2cFailure = { kind: "connection", message: why };
    for (const q of this.queued.splice(0)) q.stream.done(failure);
    for (const s of [...this.streams.values()]) this.finish(s, failure);
    this.unusable();
    if (!this.socket.destroyed) this.socket.destroy();
  }

  private unusable(): void {
    const f = this.onEnd;
    this.onEnd = undefined;
    f?.();
  }

  /** A frame the server should not have sent: the connection cannot be trusted any more. */
  private fail(why: string): void {
    if (this.ended !== undefined) return;
    const goaway = Buffer.alloc(17);
    writeFrameHead(goaway, 0, 8, GOAWAY, 0, 0);
    goaway.writeUInt32BE(PROTOCOL_ERROR, 13);
    this.send(goaway);
    this.flush();
    this.end(`the server broke the HTTP/2 protocol: ${why}`);
  }

  private read(chunk: Buffer): void {
    let buf = this.inbox ? Buffer.concat([this.inbox, chunk]) : chunk;
    this.inbox = undefined;
    let at = 0;
    while (buf.length - at >= 9 && this.ended === undefined) {
      const length = buf.readUIntBE(at, 3);
      if (length > MAX_FRAME) {
        this.fail(`a frame of ${length} bytes`);
        return;
      }
      if (buf.length - at < 9 + length) break;
      const type = buf[at + 3];
      const flags = buf[at + 4];
      const id = buf.readUInt32BE(at + 5) & 0x7fffffff;
      const payload = buf.subarray(at + 9, at + 9 + length);
      at += 9 + length;
      this.frame(type, flags, id, payload);
    }
    if (at < buf.length && this.ended === undefined) {
      buf = buf.subarray(at);
      this.inbox = buf;
    }
  }

  private frame(type: number, flags: number, id: number, payload: Buffer): void {
    if (this.headerBlock && type !== CONTINUATION) {
      this.fail("a header block was interrupted");
      return;
    }
    switch (type) {
      case DATA: {
        this.data(flags, id, payload);
        return;
      }
      case HEADERS: {
        let p: Buffer | undefined = payload;
        if (flags & PADDED) p = unpad(p);
        if (p === undefined) {
          this.fail("bad padding");
          return;
        }
        if (flags & PRIORITY) p = p.subarray(5);
        this.headerBlock = { id, parts: [p], endStream: (flags & END_STREAM) !== 0 };
        if (flags & END_HEADERS) {
          this.headersDone();
          return;
        }
        return;
      }
      case CONTINUATION:
        if (!this.headerBlock || this.headerBlock.id !== id) {
          this.fail("a stray CONTINUATION");
          return;
        }
        this.headerBlock.parts.push(payload);
        if (flags & END_HEADERS) {
          this.headersDone();
          return;
        }
        return;
      case RST_STREAM: {
        const s = this.streams.get(id);
        if (s) this.finish(s, { kind: "reset", code: payload.length >= 4 ? payload.readUInt32BE(0) : 0 });
        return;
      }
      case SETTINGS:
        if (flags & ACK) return;
        {
          this.settings(payload);
          return;
        }
      case PUSH_PROMISE: {
        this.fail("a push promise (push was turned off)");
        return;
      }
      case PING:
        if (flags & ACK) return;
        if (payload.length === 8) {
          const f = Buffer.allocUnsafe(17);
          writeFrameHead(f, 0, 8, PING, ACK, 0);
          payload.copy(f, 9);
          this.send(f);
        }
        return;
      case GOAWAY: {
        const last = payload.length >= 4 ? payload.readUInt32BE(0) & 0x7fffffff : 0;
        this.goneAway = true;
        this.unusable();
        for (const s of [...this.streams.values()])
          if (s.id > last) this.finish(s, { kind: "reset", code: REFUSED_STREAM });
        for (const q of this.queued.splice(0)) q.stream.done({ kind: "reset", code: REFUSED_STREAM });
        if (this.streams.size === 0 && this.ended === undefined) {
          this.end("the server closed the connection");
          this.socket.end();
        }
        return;
      }
      case WINDOW_UPDATE: {
        if (payload.length < 4) return;
        const n = payload.readUInt32BE(0) & 0x7fffffff;
        if (id === 0) {
          this.sendWindow += n;
          for (const s of this.streams.values()) if (s.pending) this.pump(s);
        } else {
          const s = this.streams.get(id);
          if (s) {
            s.sendWindow += n;
            if (s.pending) this.pump(s);
          }
        }
        return;
      }
      default:
        return; // Unknown frame types are ignored (RFC 9113 §4.1).
    }
  }

  private settings(p: Buffer): void {
    for (let i = 0; i + 6 <= p.length; i += 6) {
      const key = p.readUInt16BE(i);
      const value = p.readUInt32BE(i + 2);
      if (key === 0x3) this.peerMaxStreams = value;
      else if (key === 0x4) {
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const s of this.streams.values()) s.sendWindow += delta;
      } else if (key === 0x5) this.peerMaxFrame = value;
    }
    const ack = Buffer.allocUnsafe(9);
    writeFrameHead(ack, 0, 0, SETTINGS, ACK, 0);
    this.send(ack);
    for (const s of this.streams.values()) if (s.pending) this.pump(s);
    this.ready = true;
    this.dequeue();
  }

  private data(flags: number, id: number, payload: Buffer): void {
    this.receivedOnConnection += payload.length;
    if (this.receivedOnConnection >= WINDOW / 2) {
      this.windowUpdate(0, this.receivedOnConnection);
      this.receivedOnConnection = 0;
    }
    const s = this.streams.get(id);
    if (!s) return;
    s.received += payload.length;
    if (s.received >= WINDOW / 2 && !(flags & END_STREAM)) {
      this.windowUpdate(id, s.received);
      s.received = 0;
    }
    const body = flags & PADDED ? unpad(payload) : payload;
    if (body === undefined) {
      this.fail("bad padding");
      return;
    }
    if (body.length > 0) s.chunks.push(body);
    if (flags & END_STREAM) this.complete(s);
  }

  private windowUpdate(id: number, n: number): void {
    const f = Buffer.allocUnsafe(13);
    writeFrameHead(f, 0, 4, WINDOW_UPDATE, 0, id);
    f.writeUInt32BE(n, 9);
    this.send(f);
  }

  private headersDone(): void {
    const block = this.headerBlock as NonNullable<typeof this.headerBlock>;
    this.headerBlock = undefined;
    let fields: [string, string][];
    try {
      fields = this.decoder.decode(block.parts.length === 1 ? block.parts[0] : Buffer.concat(block.parts));
    } catch (err) {
      this.fail(`an HPACK block that cannot be decoded (${(err as Error).message})`);
      return;
    }
    const s = this.streams.get(block.id);
    if (!s) return;
    if (s.head === undefined) {
      const head = headObject(fields);
      // An informational (1xx) head comes before the response's own.
      if (!String(head[":status"]).startsWith("1")) s.head = head;
    }
    // A second block is the trailers; a Connect unary response has none, and they are not read.
    if (block.endStream) this.complete(s);
  }

  private complete(s: Stream): void {
    if (s.head === undefined) {
      this.rst(s.id, PROTOCOL_ERROR);
      this.finish(s, { kind: "reset", code: PROTOCOL_ERROR });
      return;
    }
    const body = s.chunks.length === 1 ? s.chunks[0] : Buffer.concat(s.chunks);
    this.finish(s, undefined, { head: s.head, body });
  }
}

/** Header fields as Node's http2 client gives them: by name, repeats joined (set-cookie a list). */
function headObject(fields: [string, string][]): Record<string, string | string[]> {
  const head: Record<string, string | string[]> = {};
  for (const [name, value] of fields) {
    const had = head[name];
    if (had === undefined) head[name] = name === "set-cookie" ? [value] : value;
    else if (Array.isArray(had)) had.push(value);
    else head[name] = `${had}, ${value}`;
  }
  return head;
}

function unpad(p: Buffer): Buffer | undefined {
  if (p.length < 1) return undefined;
  const pad = p[0];
  if (pad >= p.length) return undefined;
  return p.subarray(1, p.length - pad);
}
