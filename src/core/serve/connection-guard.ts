// Limits on the listener's connections: header, body and idle timeouts, and a cap on how many are
// open at once. Node's own timeouts do not cover the listener: its cleartext port hands each socket
// to an HTTP/1.1 or an HTTP/2 server by emitting "connection" (the HTTP/1.1 server's header and
// request timeouts only start with its own listen(), so they never run), HTTP/2 servers have no header
// or body timeouts, and the TLS server's HTTP/1.1 fallback skips them too. So one guard watches every
// connection, whatever its protocol, with one coarse timer; the request path only stamps times and
// flips counters (no timer per request: the listener handles thousands of requests per second).
//
// At the cap, a new connection takes the place of the open connection that has gone longest without
// progress and has no request being processed (one still waiting for a request head or a body), so
// that connections held open by a slow or silent client cannot lock out valid deliveries. Where the
// server can speak on the new connection before handing it on (cleartext), that choice waits for the
// connection's first bytes (a request, or the HTTP/2 preface), and when every open connection is busy
// the new one is answered rather than reset: HTTP/1.1 `503` with `Retry-After`, HTTP/2 a GOAWAY that
// tells the client to retry on a new connection. Otherwise (TLS, or past a bounded number of such
// waiting connections) it is closed. The cap is lowered to fit the process's limit on open file
// descriptors, so that accepting never fails for lack of one (which resets new connections).
import { readdirSync, readFileSync } from "node:fs";
import type http2 from "node:http2";
import type net from "node:net";
import { lingerThenClose } from "./refusal";

export interface ConnectionLimits {
  /**
   * A new connection must deliver its first request head (for HTTP/2, open its first stream) within
   * this time, TLS handshake included. Default 10 s.
   */
  readonly headersTimeoutMs?: number;
  /** A request's body must be complete within this time of its head. Default 30 s. (Infinity: none.) */
  readonly bodyTimeoutMs?: number;
  /**
   * A connection with no request in progress is closed after this time (between requests, an
   * HTTP/1.1 connection's next request head must be complete by then). Default 30 s.
   */
  readonly idleTimeoutMs?: number;
  /** Most connections open at once (default 512; lowered to fit the file descriptor limit). */
  readonly maxConnections?: number;
}

export const defaultLimits = {
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  idleTimeoutMs: 30_000,
  maxConnections: 512,
} as const;

const kConn = Symbol("protocall.connection");

/** One open connection, as the guard sees it. */
export interface TrackedConnection {
  readonly socket: net.Socket;
  /** Requests (HTTP/2 streams) whose head arrived and whose response is not finished. */
  active: number;
  /** Of those, the ones still receiving their body. */
  receiving: number;
  /** Whether a request head has arrived on it (the idle timeout applies from then on). */
  served: boolean;
  /** When it last made progress: opened, a body completed, a response finished. */
  since: number;
  session?: http2.Http2Session;
  /** When a graceful close (HTTP/2 GOAWAY) began; 0 when none did. */
  closing: number;
  /** Whether the server may write to `socket` itself (cleartext): closed to make room, it is answered. */
  answerable: boolean;
  /**
   * A graceful close its owner provides for a connection without a session (the proxy's HTTP/2
   * relay: a GOAWAY to the client); closed to make room or for idleness, it gets this first.
   */
  goAway?: () => void;
}

/** A request body being received; `done` when it is complete (or abandoned). */
export interface BodyWatch {
  done(): void;
}

interface BodyEntry extends BodyWatch {
  readonly conn: TrackedConnection | undefined;
  readonly deadline: number;
  readonly expire: () => void;
  finished: boolean;
}

export class ConnectionGuard {
  private readonly conns = new Set<TrackedConnection>();
  /** Bodies being received, by a number (a number key is cheaper to hash than an object). */
  private readonly bodies = new Map<number, BodyEntry>();
  private nextBody = 0;
  private readonly timer: NodeJS.Timeout;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxConnections: number;
  /** Connections over the cap waiting for their first bytes (see `admit`), with when each arrived. */
  private readonly waiting = new Map<net.Socket, number>();
  /**
   * Most connections that may wait at the cap, or linger after being answered there, at once
   * (bounded by the spare file descriptors: past it, they are closed without lingering).
   */
  readonly maxWaiting: number;
  /** Connections answered at the cap that are still lingering. */
  private lingering = 0;
  /** Connections closed by a timeout, closed to make room, refused at the cap, and answered at the cap. */
  readonly stats = { timedOut: 0, evicted: 0, refused: 0, answered: 0, bodiesTimedOut: 0 };

  /** `reserveDescriptors`: file descriptors to leave free for everything but incoming connections. */
  constructor(limits: ConnectionLimits = {}, reserveDescriptors = 32) {
    this.headersTimeoutMs = limits.headersTimeoutMs ?? defaultLimits.headersTimeoutMs;
    this.bodyTimeoutMs = limits.bodyTimeoutMs ?? defaultLimits.bodyTimeoutMs;
    this.idleTimeoutMs = limits.idleTimeoutMs ?? defaultLimits.idleTimeoutMs;
    const wanted = limits.maxConnections ?? defaultLimits.maxConnections;
    const free = freeDescriptors();
    this.maxConnections = Math.max(
      1,
      free === undefined ? wanted : Math.min(wanted, Math.max(4, free - reserveDescriptors)),
    );
    this.maxWaiting =
      free === undefined ? 256 : Math.max(0, Math.min(1024, free - reserveDescriptors - this.maxConnections));
    // Infinity turns a timeout off.
    const shortest = Math.min(this.headersTimeoutMs, this.bodyTimeoutMs, this.idleTimeoutMs, 4000);
    const tick = Math.min(1000, Math.max(20, Math.floor(shortest / 4)));
    this.timer = setInterval(() => this.check(), tick);
    this.timer.unref();
  }

  /** Number of connections open now. */
  get size(): number {
    return this.conns.size;
  }

  /**
   * Starts watching a newly accepted connection, making room for it (or refusing it) at the cap.
   * `answerable`: the caller reads the connection's first bytes and calls `admit` before handing it
   * on, so that at the cap the connection can wait for them and be answered instead of reset.
   * Returns false when the connection was closed.
   */
  accept(socket: net.Socket, answerable = false): boolean {
    if (this.conns.size >= this.maxConnections) {
      if (answerable && this.waiting.size < this.maxWaiting) {
        this.waiting.set(socket, Date.now());
        socket.once("close", () => this.waiting.delete(socket));
        return true;
      }
      const victim = this.victim();
      if (!victim) {
        this.stats.refused++;
        socket.destroy();
        return false;
      }
      this.stats.evicted++;
      this.makeRoom(victim);
    }
    this.track(socket, answerable);
    return true;
  }

  /**
   * Called with an answerable connection's first bytes: true when it is (now) one of the open
   * connections, to be served; false when it was over the cap with every connection busy, and has
   * been answered (`503` with `Retry-After`, or an HTTP/2 GOAWAY) and is closing.
   */
  admit(socket: net.Socket, first: Buffer): boolean {
    if (!this.waiting.has(socket)) return !socket.destroyed;
    this.waiting.delete(socket);
    if (this.conns.size >= this.maxConnections) {
      const victim = this.victim();
      if (!victim) {
        this.stats.answered++;
        this.answer(socket, first);
        return false;
      }
      this.stats.evicted++;
      this.makeRoom(victim);
    }
    this.track(socket, true);
    return true;
  }

  private track(socket: net.Socket, answerable: boolean): void {
    const conn: TrackedConnection = {
      socket,
      active: 0,
      receiving: 0,
      served: false,
      since: Date.now(),
      closing: 0,
      answerable,
    };
    (socket as unknown as Record<symbol, TrackedConnection>)[kConn] = conn;
    this.conns.add(conn);
    socket.once("close", () => this.conns.delete(conn));
  }

  /**
   * Closes a connection to make room. A cleartext one is told why rather than reset: an HTTP/2
   * session gets a GOAWAY (its streams still receiving are cancelled), an HTTP/1.1 connection (idle,
   * or with a request head or body still arriving) a `503` with `Retry-After`, then a lingering close.
   */
  private makeRoom(conn: TrackedConnection): void {
    this.conns.delete(conn);
    if (conn.goAway) {
      conn.goAway();
      setTimeout(() => conn.socket.destroy(), 1000).unref();
      return;
    }
    if (!conn.answerable) {
      this.drop(conn);
      return;
    }
    const session = conn.session;
    if (session && !session.destroyed) {
      session.close(); // GOAWAY; the streams still receiving get a moment, then the session ends
      setTimeout(() => session.destroy(), 1000).unref();
      return;
    }
    this.answer(conn.socket, Buffer.alloc(0));
  }

  /** Answers a connection at the cap; it lingers while spare descriptors allow, else closes at once. */
  private answer(socket: net.Socket, first: Buffer): void {
    const linger = this.waiting.size + this.lingering < this.maxWaiting;
    if (linger) {
      this.lingering++;
      socket.once("close", () => this.lingering--);
    }
    answerAtCap(socket, first, this.maxConnections, linger);
  }

  /**
   * The connection a socket or session belongs to: the accepted socket itself, the TLS socket over
   * it, an HTTP/2 session's socket (a proxy that reads the properties of one of those), or a session.
   */
  of(socket: unknown): TrackedConnection | undefined {
    const s = socket as Record<symbol | string, unknown> | undefined;
    if (!s) return undefined;
    return (s[kConn] ?? (s._parent as Record<symbol, unknown> | undefined)?.[kConn]) as
      | TrackedConnection
      | undefined;
  }

  /** Watches an HTTP/2 session: each stream is a request on its connection. */
  attachSession(session: http2.Http2Session): void {
    const conn = this.of(session.socket);
    if (!conn) return;
    conn.session = session;
    (session as unknown as Record<symbol, TrackedConnection>)[kConn] = conn;
    session.on("stream", (stream: http2.ServerHttp2Stream) => {
      this.requestStarted(conn);
      stream.once("close", () => this.requestFinished(conn));
    });
  }

  /** A request head arrived on `conn`. */
  requestStarted(conn: TrackedConnection | undefined): void {
    if (!conn) return;
    conn.active++;
    conn.served = true;
  }

  /** A response on `conn` finished (or its stream closed). */
  requestFinished(conn: TrackedConnection | undefined): void {
    if (!conn) return;
    conn.active--;
    conn.since = Date.now();
  }

  /** Gives a request body `bodyTimeoutMs` to arrive; `expire` runs if it does not. */
  watchBody(conn: TrackedConnection | undefined, expire: () => void): BodyWatch {
    if (conn) conn.receiving++;
    const key = this.nextBody++;
    const entry: BodyEntry = {
      conn,
      deadline: Date.now() + this.bodyTimeoutMs,
      expire,
      finished: false,
      done: () => {
        if (entry.finished) return;
        entry.finished = true;
        this.bodies.delete(key);
        if (entry.conn) {
          entry.conn.receiving--;
          entry.conn.since = Date.now();
        }
      },
    };
    this.bodies.set(key, entry);
    return entry;
  }

  /** Stops the timer and closes every connection. */
  close(): void {
    clearInterval(this.timer);
    for (const conn of this.conns) conn.socket.destroy();
    for (const socket of this.waiting.keys()) socket.destroy();
    this.waiting.clear();
    this.conns.clear();
    this.bodies.clear();
  }

  private check(): void {
    const now = Date.now();
    // A connection waiting at the cap that sends nothing within the header timeout (at most 1 s).
    const waitMs = Math.min(1000, this.headersTimeoutMs);
    for (const [socket, since] of this.waiting) {
      if (now - since < waitMs) continue;
      this.waiting.delete(socket);
      this.stats.refused++;
      socket.destroy();
    }
    for (const entry of this.bodies.values()) {
      if (now < entry.deadline) continue;
      entry.done();
      this.stats.bodiesTimedOut++;
      try {
        entry.expire();
      } catch {
        // The request is gone already.
      }
    }
    for (const conn of this.conns) {
      if (conn.closing) {
        if (now - conn.closing > 1000) this.drop(conn);
        continue;
      }
      if (conn.active > 0) continue;
      const limit = conn.served ? this.idleTimeoutMs : this.headersTimeoutMs;
      if (now - conn.since < limit) continue;
      this.stats.timedOut++;
      if (conn.session && !conn.session.destroyed) {
        // No stream is open: say goodbye (GOAWAY) so that a client knows not to reuse it.
        conn.closing = now;
        conn.session.close();
      } else if (conn.goAway) {
        conn.closing = now;
        conn.goAway();
      } else {
        this.drop(conn);
      }
    }
  }

  /** The connection to close for a new one: no request being processed, longest without progress. */
  private victim(): TrackedConnection | undefined {
    let best: TrackedConnection | undefined;
    for (const conn of this.conns) {
      if (conn.active !== conn.receiving) continue;
      if (!best || conn.since < best.since) best = conn;
    }
    return best;
  }

  private drop(conn: TrackedConnection): void {
    this.conns.delete(conn);
    if (conn.session && !conn.session.destroyed) conn.session.destroy();
    conn.socket.destroy();
  }
}

/** Seconds a client told to come back at the cap should wait. */
const retryAfterSeconds = 1;

/**
 * Answers a connection over the cap from its first bytes, then closes it (lingering, so the client
 * reads the answer, when spare descriptors allow): an HTTP/2 client (the preface) gets SETTINGS and a GOAWAY that processed no
 * stream, which tells it to retry on a new connection; anything else an HTTP/1.1 `503` with
 * `Retry-After` and a Connect error JSON body.
 */
function answerAtCap(socket: net.Socket, first: Buffer, cap: number, linger: boolean): void {
  const message = `the server has its maximum of ${cap} connections open; retry after ${retryAfterSeconds} s`;
  if (first.subarray(0, 4).toString("latin1") === "PRI ") {
    const debug = Buffer.from(message);
    const goaway = Buffer.alloc(9 + 8);
    goaway.writeUIntBE(8 + debug.length, 0, 3);
    goaway[3] = 0x7; // GOAWAY
    goaway.writeUInt32BE(0, 9); // last stream id: none processed
    goaway.writeUInt32BE(0x0, 13); // NO_ERROR: a graceful refusal
    socket.write(Buffer.concat([Buffer.from([0, 0, 0, 0x4, 0, 0, 0, 0, 0]), goaway, debug]));
  } else {
    const body = JSON.stringify({ code: "unavailable", message });
    socket.write(
      "HTTP/1.1 503 Service Unavailable\r\n" +
        `Retry-After: ${retryAfterSeconds}\r\n` +
        "Content-Type: application/json\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  }
  if (linger) {
    lingerThenClose(socket);
    return;
  }
  socket.removeAllListeners("data");
  socket.on("error", () => {});
  socket.end(() => socket.destroy());
  setTimeout(() => socket.destroy(), 100).unref();
}

/** File descriptors this process may still open (Linux), or undefined where that cannot be read. */
function freeDescriptors(): number | undefined {
  try {
    const limits = readFileSync("/proc/self/limits", "utf8");
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
    if (!m || m[1] === "unlimited") return undefined;
    return Number(m[1]) - readdirSync("/proc/self/fd").length;
  } catch {
    return undefined;
  }
}
