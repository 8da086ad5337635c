/**
 * A failure the user can act on: bad input, a missing file, a schema that cannot be resolved.
 * Front ends print it as one line (`protocall: <message>`) and exit with `exitCode` (below 8).
 * RPC failures are `ConnectError`s instead and exit with their gRPC code × 8.
 */
export class ProtocallError extends Error {
  override readonly name = "ProtocallError";
  constructor(
    message: string,
    readonly exitCode = 1,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Returns the message of any thrown value, without a stack trace. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
