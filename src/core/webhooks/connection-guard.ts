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
// that connections held open by a slow or silent client cannot lock out valid deliveries; if every
// connection is busy, the new one is closed. The cap is lowered to fit the process's limit on open
// file descriptors, so that accepting never fails for lack of one (which resets new connections).
import { readdirSync, readFileSync } from "node:fs";
import type http2 from "node:http2";
import type net from "node:net";

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
  /** Connections closed by a timeout, closed to make room, and refused at the cap. */
  readonly stats = { timedOut: 0, evicted: 0, refused: 0, bodiesTimedOut: 0 };

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

  /** Starts watching a newly accepted connection, making room for it (or refusing it) at the cap. */
  accept(socket: net.Socket): void {
    if (this.conns.size >= this.maxConnections) {
      const victim = this.victim();
      if (!victim) {
        this.stats.refused++;
        socket.destroy();
        return;
      }
      this.stats.evicted++;
      this.drop(victim);
    }
    const conn: TrackedConnection = {
      socket,
      active: 0,
      receiving: 0,
      served: false,
      since: Date.now(),
      closing: 0,
    };
    (socket as unknown as Record<symbol, TrackedConnection>)[kConn] = conn;
    this.conns.add(conn);
    socket.once("close", () => this.conns.delete(conn));
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
    this.conns.clear();
    this.bodies.clear();
  }

  private check(): void {
    const now = Date.now();
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
