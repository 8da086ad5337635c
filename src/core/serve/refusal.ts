// How every server we run refuses a request without losing the answer: the shared rules for the
// listener, the registry emulator and the servers built after them.
//
// - `Expect: 100-continue`: Node answers `100 Continue` on its own before any handler runs, so a
//   client told to go on starts sending a body that is then refused. `expectContinue` takes that
//   decision back: `100 Continue` goes out only when a handler calls `continueBody` before reading,
//   so a request refused from its head (size, path, token) is answered without inviting the body.
// - HTTP/1.1 lingering close (as nginx's `lingering_close`): closing a socket while the client's
//   unread bytes are still arriving makes the kernel reset the connection, and the client then loses
//   the answer it was just sent (curl reports a broken pipe). `lingerOnClose` sends FIN, then reads and
//   drops what still arrives, bounded in time and bytes, before closing.
// - HTTP/2: an answered stream whose body is still arriving is reset (`NO_ERROR`, or `CANCEL` if the
//   answer cannot be written out in time) so that a client still uploading stops at once instead of
//   waiting on flow control until the connection is dropped (`endRefusedStream`).
import type http from "node:http";
import http2 from "node:http2";
import type net from "node:net";

export type NodeReq = http.IncomingMessage | http2.Http2ServerRequest;
export type NodeRes = http.ServerResponse | http2.Http2ServerResponse;

const kExpecting = Symbol("protocall.expectsContinue");
const kLingering = Symbol("protocall.lingering");

/** How long, and how many bytes, a closing HTTP/1.1 connection keeps reading (and dropping) the body. */
export const lingerMs = 2000;
export const lingerBytes = 256 * 1024 * 1024;

/**
 * Routes requests that carry `Expect: 100-continue` to `onRequest` without the automatic
 * `100 Continue` (HTTP/1.1 and HTTP/2 servers, the HTTP/1.1 fallback of a TLS server included).
 */
export function expectContinue(
  server: http.Server | http2.Http2Server | http2.Http2SecureServer,
  onRequest: (req: NodeReq, res: NodeRes) => void,
): void {
  (server as http.Server).on("checkContinue", (req: NodeReq, res: NodeRes) => {
    (res as unknown as Record<symbol, boolean>)[kExpecting] = true;
    onRequest(req, res);
  });
}

/** Sends `100 Continue` if the client waits for it: call just before reading an accepted body. */
export function continueBody(res: NodeRes): void {
  const r = res as unknown as Record<symbol, boolean>;
  if (!r[kExpecting]) return;
  r[kExpecting] = false;
  if (!res.headersSent) res.writeContinue();
}

/**
 * Makes the server's close of this connection a lingering close: send FIN, then read and drop what the
 * client is still sending for a moment (bounded in time and bytes) before closing.
 */
export function lingerOnClose(socket: net.Socket): void {
  const s = socket as net.Socket & Record<symbol, boolean>;
  if (s[kLingering]) return;
  s[kLingering] = true;
  socket.destroySoon = function lingeringClose(this: net.Socket) {
    lingerThenClose(this);
  };
}

/** Ends `socket` now (FIN), drops what still arrives for a bounded time, then closes it. */
export function lingerThenClose(socket: net.Socket): void {
  if (socket.destroyed) return;
  // The server's own parser stops here: it would read the dropped body as a next request and fail.
  socket.removeAllListeners("data");
  socket.on("error", () => {});
  socket.end();
  let dropped = 0;
  const stop = () => socket.destroy();
  const timer = setTimeout(stop, lingerMs);
  timer.unref();
  socket.on("data", (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > lingerBytes) stop();
  });
  socket.once("end", stop);
  socket.once("close", () => clearTimeout(timer));
  socket.resume();
  readAgain(socket);
}

/**
 * Starts reading `socket`'s handle again if it is stopped. The "data" listener above takes the socket
 * back from Node's HTTP parser, but when that parser had stopped the handle (a refused body left
 * unread fills the request's buffer), `resume()` alone does not start it again on Node 22 and 24: the
 * stream still counts a read in flight from before the parser took the socket over, so it never asks
 * the handle for more. Nothing then arrives, the client's sends stall, and the close at the end of the
 * linger resets the connection under the answer.
 */
function readAgain(socket: net.Socket): void {
  const handle = (socket as net.Socket & { _handle?: { reading?: boolean; readStart?: () => number } })
    ._handle;
  if (!handle || handle.reading || typeof handle.readStart !== "function") return;
  handle.reading = true;
  if (handle.readStart() !== 0) socket.destroy();
}

/** Longest wait for a refused stream's answer to be written out before the stream is cancelled. */
const answerGraceMs = 2000;

/**
 * After a refused request's answer has been handed to the stream, resets it: `NO_ERROR` once the
 * answer is written out (the client stops sending and keeps the answer), `CANCEL` if it cannot be
 * written out in time. Does nothing to a stream whose request is complete (nothing left to stop).
 */
export function endRefusedStream(stream: http2.ServerHttp2Stream): void {
  if (stream.destroyed || stream.closed) return;
  stream.resume(); // what still arrives until the reset is dropped
  // Not in this turn of the event loop: on Node 22 a reset submitted right after the answer is
  // written goes out before it, and the client never sees the answer.
  const reset = (code: number) => {
    setImmediate(() => {
      if (!stream.destroyed && !stream.closed) stream.close(code);
    });
  };
  if (stream.writableFinished) {
    reset(http2.constants.NGHTTP2_NO_ERROR);
    return;
  }
  const timer = setTimeout(() => reset(http2.constants.NGHTTP2_CANCEL), answerGraceMs);
  timer.unref();
  stream.once("finish", () => {
    clearTimeout(timer);
    reset(http2.constants.NGHTTP2_NO_ERROR);
  });
  stream.once("close", () => clearTimeout(timer));
}
