// The proxy's path for HTTP/2 clients whose upstream speaks HTTP/2: a relay between the client's
// connection and one upstream connection of its own, instead of Node's http2 server and client (whose
// streams, sessions and headers objects cost a call ~650 µs of CPU and many milliseconds of p99 on a
// busy machine). Each chunk read from one side is written to the other at once, before anything is
// decoded; the only change is the request heads, readdressed to the upstream (h2-request-rewrite.ts).
// Back-pressure is the sockets': a side is not read while the other's write buffer is full, so a
// stalled client stalls the upstream through TCP and HTTP/2 flow control, which pass end to end.
// After each write the frames are read on the side into CallRecords (relay-calls.ts), so the store,
// the per-call line, export and replay see the same calls as on the other paths; a decoding failure
// is reported once and the connection is then relayed without recording, never torn down.
import * as net from "node:net";
import * as tls from "node:tls";
import { FrameEvents } from "../http2/frame-events";
import { goawayFrame, settingOf } from "../http2/frames";
import type { ConnectionGuard } from "../serve/connection-guard";
import { RequestRewriter } from "./h2-request-rewrite";
import type { ProxyOptions } from "./proxy-server";
import { RelayCalls } from "./relay-calls";

/** SETTINGS_MAX_FRAME_SIZE (RFC 9113 §6.5.2). */
const MAX_FRAME_SIZE = 0x5;

/**
 * Opens the connection a relayed client connection gets upstream: h2c with prior knowledge for an
 * http:// upstream, TLS with ALPN h2 (trusting as the proxy's other paths do) for https://. Resolves
 * undefined when it cannot be had (refused, TLS failed, ALPN other than h2): that client connection
 * then takes the proxy's other HTTP/2 path, which answers each call `unavailable`.
 */
export function connectRelayUpstream(
  url: URL,
  trust: { ca?: string; insecure?: boolean },
  timeoutMs = 10_000,
): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    let socket: net.Socket;
    const fail = () => {
      socket.destroy();
      resolve(undefined);
    };
    if (url.protocol === "https:") {
      const secure = tls.connect({
        host,
        port,
        servername: net.isIP(host) ? undefined : host,
        ALPNProtocols: ["h2"],
        ca: trust.ca,
        rejectUnauthorized: !trust.insecure,
      });
      socket = secure;
      secure.once("secureConnect", () => {
        if (secure.alpnProtocol !== "h2") return fail();
        done();
      });
    } else {
      socket = net.connect({ host, port });
      socket.once("connect", () => done());
    }
    socket.setNoDelay(true);
    const timer = setTimeout(fail, timeoutMs);
    timer.unref();
    socket.once("error", () => {
      clearTimeout(timer);
      fail();
    });
    function done() {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      resolve(socket);
    }
  });
}

export interface RelayOptions {
  readonly proxy: ProxyOptions;
  readonly upstreamUrl: URL;
  readonly guard: ConnectionGuard;
}

/** Writes `pieces` to `to` in one write; false when its buffer is now full. */
function writeAll(to: net.Socket, pieces: Buffer[]): boolean {
  if (pieces.length === 0) return true;
  // One copy is cheaper than a writev (Node's costs several times a write), and the pieces are small
  // unless a DATA frame is among them.
  return to.write(pieces.length === 1 ? pieces[0] : Buffer.concat(pieces));
}

/** Pauses `from` until `to` drains (socket.pipe's back-pressure). */
function holdUntilDrained(from: net.Socket, to: net.Socket): void {
  from.pause();
  to.once("drain", () => from.resume());
}

/** Relays one client connection (its HTTP/2 preface not read yet) to `upstream`. */
export function relayHttp2(client: net.Socket, upstream: net.Socket, o: RelayOptions): void {
  const { guard } = o;
  const conn = guard.of(client);
  // A relayed connection is never answered by the guard with an HTTP/1.1 503 at the cap (it would land
  // between the upstream's frames): it gets the GOAWAY below.
  if (conn) conn.answerable = false;
  // No Nagle delay on a TLS client's socket either (the cleartext front sets it for its own).
  client.setNoDelay(true);
  const url = o.upstreamUrl;
  const rewriter = new RequestRewriter({
    scheme: url.protocol.slice(0, -1),
    authority: url.host,
    basePath: url.pathname.replace(/\/$/, ""),
  });
  const calls = new RelayCalls({
    proxy: o.proxy,
    basePath: url.pathname.replace(/\/$/, ""),
    nextClientBlock: () => rewriter.decoded.shift(),
    started: () => guard.requestStarted(conn),
    finished: () => guard.requestFinished(conn),
    upstreamSettings: (payload) => {
      const size = settingOf(payload, MAX_FRAME_SIZE);
      if (size !== undefined) rewriter.maxFrameSize = size;
    },
  });
  const fromClient = new FrameEvents(calls.client, true);
  const fromUpstream = new FrameEvents(calls.upstream);
  /** The side reading stopped (a frame it could not follow): the connection counts as busy from then on. */
  let sideStopped = false;
  const warn = (why: string) =>
    o.proxy.onWarning?.(`HTTP/2 relay: ${why}; this connection's calls pass on but are not recorded`);
  const side = (events: FrameEvents, chunk: Buffer) => {
    if (sideStopped) return;
    try {
      events.push(chunk);
    } catch (e) {
      sideStopped = true;
      if (calls.goBlind((e as Error).message)) warn((e as Error).message);
      guard.requestStarted(conn);
    }
  };

  if (conn) {
    // The guard's graceful close (idle, or room needed at the cap): a GOAWAY to the client, put between
    // the upstream's frames, naming the last stream passed on; streams the client opens after it are
    // not passed on (so a client may safely retry them elsewhere). Where the relay cannot tell a
    // frame boundary on the way down, the connection is closed instead.
    conn.goAway = () => {
      if (sideStopped || !fromUpstream.atBoundary || client.destroyed) {
        client.destroy();
        return;
      }
      const last = rewriter.lastStream;
      rewriter.refuseAbove = last;
      calls.refuseAbove = last;
      client.write(goawayFrame(last));
    };
  }

  client.on("data", (chunk: Buffer) => {
    if (!writeAll(upstream, rewriter.push(chunk))) holdUntilDrained(client, upstream);
    if (rewriter.failure !== undefined && calls.goBlind(rewriter.failure)) warn(rewriter.failure);
    side(fromClient, chunk);
    // Nobody takes the decoded heads once the side reading stopped.
    if (sideStopped) rewriter.decoded.length = 0;
  });
  upstream.on("data", (chunk: Buffer) => {
    if (!client.write(chunk)) holdUntilDrained(upstream, client);
    const wasBlind = calls.blind;
    side(fromUpstream, chunk);
    if (wasBlind === undefined && calls.blind !== undefined) warn(calls.blind);
  });
  upstream.on("error", () => {});
  /** Which side closed first: the open calls end as that side's doing. */
  let closedBy: "client" | "upstream" | undefined;
  const closeBoth = (by: "client" | "upstream") => {
    closedBy ??= by;
    calls.closed(closedBy);
  };
  client.on("end", () => upstream.end());
  upstream.on("end", () => client.end());
  client.on("close", () => {
    closeBoth("client");
    endThenDestroy(upstream);
  });
  upstream.on("close", () => {
    closeBoth("upstream");
    endThenDestroy(client);
  });
  client.resume();
}

/** Ends a socket whose peer side closed, letting what was written go out first; destroys it soon after. */
function endThenDestroy(socket: net.Socket): void {
  if (socket.destroyed) return;
  socket.end();
  setTimeout(() => socket.destroy(), 1000).unref();
}
