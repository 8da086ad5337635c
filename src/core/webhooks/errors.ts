// The typed failure of the webhook client: a Connect code plus a message that says what to do.
import { Code } from "@connectrpc/connect";
import { ProtocallError } from "../errors";

/** Why a webhook call failed. `unreachable` means no HTTP answer came back at all. */
export type WebhookErrorKind =
  | "unauthenticated"
  | "permission_denied"
  | "already_exists"
  | "invalid_argument"
  | "not_found"
  | "webhooks_disabled"
  | "unreachable"
  | "other";

export class WebhookError extends ProtocallError {
  constructor(
    readonly kind: WebhookErrorKind,
    /** The Connect/gRPC code; the CLI exits with code × 8 (like `protocall curl`), or 1 for local checks. */
    readonly code: Code,
    message: string,
    exitCode: number = code * 8,
  ) {
    super(message, exitCode);
  }
}

export { Code };
