// An HTTP/2 stream the server resets (RST_STREAM) while the connection stays up, as buf reports it:
// Go's words (`stream error: stream ID 1; CANCEL; received from peer`) and connect-go's codes, the
// gRPC mapping of HTTP/2 error codes (CANCEL → canceled, REFUSED_STREAM → unavailable,
// ENHANCE_YOUR_CALM → resource_exhausted, INADEQUATE_SECURITY → permission_denied, the protocol
// errors and NO_ERROR → internal). A code outside that mapping (STREAM_CLOSED, HTTP_1_1_REQUIRED, one
// HTTP/2 does not define) is `unavailable` before the response, and while the body arrives it is a
// failed read of the body (body-cut-short.ts), as Go's client reports it.
import { Code, ConnectError } from "@connectrpc/connect";
import { bodyCutShort } from "./body-cut-short";
import { http2ErrorName } from "./node-errors";

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
