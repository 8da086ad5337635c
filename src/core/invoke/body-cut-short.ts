// A response body cut short because the server ended its connection cleanly (a FIN over HTTP/1.1, an
// HTTP/2 connection closed, with or without a GOAWAY), not by a reset. buf reports it by where the
// body stopped: between two messages `internal` ("protocol error: incomplete envelope: …"), inside an
// enveloped message `unknown` ("read enveloped message: …"), inside a Connect unary body `unknown`
// ("read message: …"), each ending in Go's words for the failed read ("unexpected EOF", or the GOAWAY).
// The HTTP clients mark such a failure with `bodyCutShort`; response-limits.ts, which follows the
// envelopes and so knows where the body stopped, words the error with `cutShortError`.
import { Code, ConnectError } from "@connectrpc/connect";

const kReadError = Symbol("protocall.bodyCutShort");

/** Where a cut-short body stopped. */
export type CutPosition = "between-messages" | "inside-message" | "unary";

/** A body that ended early on a clean close; `readError` is Go's wording of the failed read. */
export function bodyCutShort(readError: string): ConnectError {
  const err = new ConnectError(readError, Code.Unknown);
  (err as ConnectError & Record<symbol, string>)[kReadError] = readError;
  return err;
}

/** The read failure of a body marked by `bodyCutShort`, else undefined. */
export function cutShortReadError(err: unknown): string | undefined {
  return err instanceof ConnectError ? (err as ConnectError & Record<symbol, string>)[kReadError] : undefined;
}

/** buf's error for a body cut short at `where`. */
export function cutShortError(readError: string, where: CutPosition): ConnectError {
  switch (where) {
    case "between-messages":
      return new ConnectError(`protocol error: incomplete envelope: ${readError}`, Code.Internal);
    case "inside-message":
      return new ConnectError(`read enveloped message: ${readError}`, Code.Unknown);
    default:
      return new ConnectError(`read message: ${readError}`, Code.Unknown);
  }
}
