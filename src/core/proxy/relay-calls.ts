// The calls on one connection the HTTP/2 relay passes (h2-relay.ts), read on the side from the frames
// each way (http2/frame-events.ts) into the same CallRecords the other paths make (call-record.ts):
// a client HEADERS on a new stream starts a call; DATA each way becomes its messages; the upstream's
// first HEADERS is the answer's head (a trailers-only answer when it ends the stream), a second its
// trailers; RST_STREAM from the client or the upstream is the call's reset; the call is stored once
// both sides ended the stream or one reset it, and GOAWAY or a closed connection ends the open ones
// (the client's close as its cancel).
// Streams are followed from the frame headers alone, so the connection guard's count of open requests
// stays right even when header blocks can no longer be decoded ("blind": reported once, its calls are
// then passed on but not recorded).
import type { FrameSink } from "../http2/frame-events";
import { HpackDecoder } from "../http2/hpack";
import { type CallRecord, encodingOf, flat, recordCall } from "./call-record";
import { requestTimeoutMs } from "./call-status";
import type { HeaderFields } from "./h2-request-rewrite";
import type { ProxyOptions } from "./proxy-server";

type Headers = Record<string, string | string[]>;

/** HTTP/2's CANCEL error code (RFC 9113 §7). */
const CANCEL = 0x8;

interface RelayStream {
  readonly id: number;
  rec?: CallRecord;
  headers?: Headers;
  clientEnded: boolean;
  upstreamEnded: boolean;
  /** Whether the answer's (final) head arrived. */
  answered: boolean;
}

export interface RelayCallsOptions {
  readonly proxy: ProxyOptions;
  readonly basePath: string;
  /** The next request head the rewriter decoded (undefined: it could not). */
  readonly nextClientBlock: () => HeaderFields | undefined;
  /** A stream opened / was closed (for the connection guard's count of requests in progress). */
  readonly started: () => void;
  readonly finished: () => void;
  /** The upstream's SETTINGS, as they pass. */
  readonly upstreamSettings: (payload: Buffer) => void;
}

/** Header fields as Node's http2 presents them: repeated names as arrays (cookies joined with "; "). */
export function headerObject(fields: HeaderFields): Headers {
  const out: Headers = {};
  for (const [name, value] of fields) {
    const had = out[name];
    if (had === undefined) out[name] = value;
    else if (name === "cookie") out[name] = `${had}; ${value}`;
    else out[name] = Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}

export class RelayCalls {
  private readonly streams = new Map<number, RelayStream>();
  /** The highest stream the client opened. */
  private lastStream = 0;
  /** Set once the client was told (GOAWAY) that streams above it are not taken: those open no call. */
  refuseAbove: number | undefined;
  /** Why header blocks are no longer decoded, once they are not. */
  blind: string | undefined;
  private readonly decoder = new HpackDecoder(2 ** 32);
  /** The frames from the client, and from the upstream. */
  readonly client: FrameSink;
  readonly upstream: FrameSink;

  constructor(private readonly o: RelayCallsOptions) {
    this.client = {
      headers: (id, _block, endStream) => this.clientHeaders(id, o.nextClientBlock(), endStream),
      data: (id, piece) => this.streams.get(id)?.rec?.sent.push(piece),
      endStream: (id) => this.ended(id, "client"),
      reset: (id, code) => this.reset(id, code, "client"),
      goaway: () => {},
      settings: () => {},
    };
    this.upstream = {
      headers: (id, block, endStream, promise) => this.upstreamHeaders(id, block, endStream, promise),
      data: (id, piece) => this.streams.get(id)?.rec?.received.push(piece),
      endStream: (id) => this.ended(id, "upstream"),
      reset: (id, code) => this.reset(id, code, "upstream"),
      goaway: (last, code) => this.goaway(last, code),
      settings: (payload) => o.upstreamSettings(payload),
    };
  }

  /** Stops decoding header blocks: the open calls are dropped, later ones are not recorded. */
  goBlind(why: string): boolean {
    if (this.blind !== undefined) return false;
    this.blind = why;
    for (const s of this.streams.values()) s.rec = undefined;
    return true;
  }

  /**
   * The connection closed: the calls still open end. A client that went away cancelled them (its
   * deadline when it ran out, as for a reset); an upstream that did leaves them without an answer.
   * Calls already answered in full end as they are.
   */
  closed(by: "client" | "upstream"): void {
    for (const s of [...this.streams.values()]) {
      const rec = s.rec;
      if (rec && !s.upstreamEnded) {
        if (by === "client") {
          rec.reset ??= {
            by,
            code: CANCEL,
            timeoutMs: requestTimeoutMs(s.headers ?? {}),
            elapsedMs: rec.elapsedMs(),
          };
        } else rec.error ??= "the upstream closed the connection";
      }
      this.done(s);
    }
  }

  /** Calls open now. */
  get open(): number {
    return this.streams.size;
  }

  private clientHeaders(id: number, fields: HeaderFields | undefined, endStream: boolean): void {
    let s = this.streams.get(id);
    if (!s) {
      // A HEADERS frame on a stream that is done (client trailers after the answer) opens nothing, nor
      // one the relay did not pass on after its GOAWAY.
      if (id <= this.lastStream || (this.refuseAbove !== undefined && id > this.refuseAbove)) return;
      this.lastStream = id;
      s = { id, clientEnded: false, upstreamEnded: false, answered: false };
      this.streams.set(id, s);
      this.o.started();
      if (fields && this.blind === undefined) {
        const headers = headerObject(fields);
        s.headers = headers;
        s.rec = recordCall(headers, String(headers[":path"] ?? "/"), "2", this.o.basePath, this.o.proxy);
      }
    }
    if (endStream) this.ended(id, "client");
  }

  private upstreamHeaders(id: number, block: Buffer, endStream: boolean, promise: boolean): void {
    let fields: HeaderFields | undefined;
    if (this.blind === undefined) {
      try {
        // Every block is decoded, pushed ones too: they all move the upstream encoder's table.
        fields = this.decoder.decode(block);
      } catch (e) {
        this.goBlind(`cannot decode an answer's head: ${(e as Error).message}`);
      }
    }
    if (promise) return;
    const s = this.streams.get(id);
    const rec = s?.rec;
    if (s && rec && fields) {
      const headers = headerObject(fields);
      if (!s.answered) {
        const status = Number(headers[":status"]);
        // An informational head (100 Continue) is not the answer.
        if (status >= 200 || endStream) {
          s.answered = true;
          rec.httpStatus = status;
          rec.responseHeaders = flat(headers);
          rec.received.encoding = encodingOf(rec.protocol, rec.enveloped, headers);
        }
      } else rec.trailers = flat(headers);
    }
    if (endStream) this.ended(id, "upstream");
  }

  private ended(id: number, by: "client" | "upstream"): void {
    const s = this.streams.get(id);
    if (!s) return;
    if (by === "client") s.clientEnded = true;
    else s.upstreamEnded = true;
    if (s.clientEnded && s.upstreamEnded) this.done(s);
  }

  private reset(id: number, code: number, by: "client" | "upstream"): void {
    const s = this.streams.get(id);
    if (!s) return;
    const rec = s.rec;
    if (rec && code !== 0 && !s.upstreamEnded) {
      rec.reset ??=
        by === "client"
          ? { by, code, timeoutMs: requestTimeoutMs(s.headers ?? {}), elapsedMs: rec.elapsedMs() }
          : { by, code };
    }
    this.done(s);
  }

  /** Streams above `last` were not taken by the upstream. */
  private goaway(last: number, code: number): void {
    for (const s of [...this.streams.values()]) {
      if (s.id <= last) continue;
      if (s.rec)
        s.rec.error ??= `the upstream closed the connection (GOAWAY, code ${code}) without taking the call`;
      this.done(s);
    }
  }

  private done(s: RelayStream): void {
    if (!this.streams.delete(s.id)) return;
    this.o.finished();
    s.rec?.finish();
  }
}
