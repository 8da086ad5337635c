// How a failure that escaped a command reaches the user: one line on stderr and an exit code.
import type { ConnectError } from "@connectrpc/connect";
import { errorMessage, ProtocallError } from "../core/errors";
import type { CliContext } from "./context";

/**
 * Whether a value is a ConnectError, checked as @connectrpc/connect's own `instanceof` does (by name
 * and code), so the start-up path (`--help`, usage errors) does not load the Connect and Protobuf
 * runtimes just to test an error's class.
 */
function isConnectError(err: unknown): err is ConnectError {
  if (!(err instanceof Error) || err.name !== "ConnectError") return false;
  const e = err as Partial<ConnectError>;
  return typeof e.code === "number" && typeof e.rawMessage === "string" && Array.isArray(e.details);
}

/** Prints an uncaught failure as one line; never a stack trace unless PROTOCALL_DEBUG is set. */
export function reportError(err: unknown, ctx: CliContext): number {
  if (ctx.env.PROTOCALL_DEBUG && err instanceof Error && err.stack) ctx.stderr.write(`${err.stack}\n`);
  if (err instanceof ProtocallError) {
    ctx.stderr.write(`protocall: ${err.message}\n`);
    return err.exitCode;
  }
  if (isConnectError(err)) {
    ctx.stderr.write(`protocall: ${err.rawMessage || err.code}\n`);
    return err.code * 8;
  }
  ctx.stderr.write(`protocall: unexpected error: ${errorMessage(err)}\n`);
  return 1;
}
