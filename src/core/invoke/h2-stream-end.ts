// How the server ended an HTTP/2 call's stream, as buf reports it. The transport keeps each call's
// stream (`watchStream`) and reads how it ended:
// - reset (RST_STREAM) while the connection stays up: Go's words (`stream error: stream ID 1; CANCEL;
//   received from peer`) and connect-go's codes, the gRPC mapping of HTTP/2 error codes (CANCEL →
//   canceled, REFUSED_STREAM → unavailable, ENHANCE_YOUR_CALM → resource_exhausted,
//   INADEQUATE_SECURITY → permission_denied, the protocol errors and NO_ERROR → internal). A code
//   outside that mapping (STREAM_CLOSED, HTTP_1_1_REQUIRED, one HTTP/2 does not define) is
//   `unavailable` before the response, and while the body arrives a failed read of the body
//   (body-cut-short.ts), as Go's client reports it (`streamResetError`);
// - while the body arrives, the connection closed (with a GOAWAY: its words, else "unexpected EOF"),
//   or the stream ended short of its Content-Length: a body cut short (`endedMidBody`).
import type http2 from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import type { UniversalClientResponse } from "@connectrpc/connect/protocol";
import { bodyCutShort } from "./body-cut-short";
import { type GoAway, goAwayError, hasCode, http2ErrorName, messageOf, tlsAlert } from "./node-errors";

/** The HTTP/2 stream of one call, once it is opened. */
export interface StreamSlot {
  stream?: http2.ClientHttp2Stream;
  /** The stream's session (a closed stream no longer names it). */
  session?: http2.ClientHttp2Session;
}

const NO_ERROR = 0;

/** connect-go's codes for the HTTP/2 error codes it maps, and the words it puts before Go's. */
const mapped: Record<number, { code: Code; prefix?: string }> = {
  0: { code: Code.Internal },
  1: { code: Code.Internal },
  2: { code: Code.Internal },
  3: { code: Code.Internal },
  4: { code: Code.Internal },
  6: { code: Code.Internal },
  7: { code: Code.Unavailable },
  8: { code: Code.Canceled },
  9: { code: Code.Internal },
  10: { code: Code.Internal },
  11: { code: Code.ResourceExhausted, prefix: "bandwidth exhausted: " },
  12: { code: Code.PermissionDenied, prefix: "transport protocol insecure: " },
};

/** The error of a call whose stream `streamId` the server reset with `rstCode`. */
export function streamResetError(
  streamId: number,
  rstCode: number,
  when: "before-response" | "in-body",
): ConnectError {
  const text = `stream error: stream ID ${streamId}; ${http2ErrorName(rstCode)}; received from peer`;
  const known = mapped[rstCode];
  if (known) return new ConnectError(`${known.prefix ?? ""}${text}`, known.code);
  return when === "before-response" ? new ConnectError(text, Code.Unavailable) : bodyCutShort(text);
}

/**
 * Puts a call's new stream in its slot, and fails a stream the server resets with NO_ERROR before
 * any response: Node closes it without an error, and the call would wait for a response that
 * cannot come.
 */
export function watchStream(
  slot: StreamSlot,
  stream: http2.ClientHttp2Stream,
  sess: http2.ClientHttp2Session,
): void {
  slot.stream = stream;
  slot.session = sess;
  let answered = false;
  stream.once("response", () => {
    answered = true;
  });
  stream.once("close", () => {
    const reset = !answered && stream.rstCode === NO_ERROR && !sess.closed && !sess.destroyed;
    if (reset && stream.listenerCount("error") > 0) {
      stream.emit("error", streamResetError(stream.id ?? 0, NO_ERROR, "before-response"));
    }
  });
}

/**
 * The call's stream id and the code it was reset with, when it was reset while its connection stayed
 * up and the call was not aborted on our side (then the reset is the server's).
 */
export function resetByServer(
  slot: StreamSlot,
  signal: AbortSignal | undefined,
): { id: number; code: number } | undefined {
  const stream = slot.stream;
  if (!stream || signal?.aborted || typeof stream.rstCode !== "number") return undefined;
  const sess = slot.session;
  if (!sess || sess.closed || sess.destroyed) return undefined;
  return { id: stream.id ?? 0, code: stream.rstCode };
}

/** Throws the error of a call whose stream the server reset before its response, if it did. */
export function throwIfResetByServer(slot: StreamSlot, signal: AbortSignal | undefined): void {
  const reset = resetByServer(slot, signal);
  if (reset) throw streamResetError(reset.id, reset.code, "before-response");
}

/**
 * Passes an HTTP/2 response body through and words a failure before its end as buf does: the
 * server closed the connection (a body cut short, with the GOAWAY's words, else "unexpected EOF"),
 * ended the stream before its Content-Length (nghttp2 then fails the stream with PROTOCOL_ERROR; Go
 * reads "unexpected EOF"), or reset the stream. A reset of the connection stays what it is.
 */
export async function* endedMidBody(
  res: UniversalClientResponse,
  slot: StreamSlot,
  signal: AbortSignal | undefined,
  goaways: WeakMap<http2.ClientHttp2Session, GoAway>,
): AsyncIterable<Uint8Array> {
  const contentLength = Number(res.header.get("content-length") ?? Number.NaN);
  let received = 0;
  try {
    for await (const chunk of res.body) {
      received += chunk.byteLength;
      yield chunk;
    }
  } catch (err) {
    const sess = slot.session;
    if (!sess || signal?.aborted || hasCode(err, "ECONNRESET") || tlsAlert(err)) throw err;
    if (sess.closed || sess.destroyed) {
      const goaway = goaways.get(sess);
      throw bodyCutShort(goaway ? goAwayError(goaway).rawMessage : "unexpected EOF");
    }
    if (received < contentLength && saysProtocolError(err)) throw bodyCutShort("unexpected EOF");
    // (A reset with NO_ERROR ends a body in Node as if it were complete: it fails no read.)
    const reset = resetByServer(slot, signal);
    if (reset && reset.code !== NO_ERROR) throw streamResetError(reset.id, reset.code, "in-body");
    throw err;
  }
}

/** Whether a stream failed with nghttp2's PROTOCOL_ERROR (in the error or one of its causes). */
function saysProtocolError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (messageOf(e).includes("NGHTTP2_PROTOCOL_ERROR")) return true;
  }
  return false;
}
