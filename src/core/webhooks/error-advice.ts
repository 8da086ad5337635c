// What the editor tells the user when a webhook call fails: the client's message with its command-line
// advice (environment variables, flags) replaced by what to do in the editor, plus the one action that
// fixes it (sign in, open the settings). Works from the client's typed errors (WebhookError.kind).
import { errorMessage, ProtocallError } from "../errors";
import type { WebhookError, WebhookErrorKind } from "./errors";

/** The action offered with a message: a button on a notification, or the command of an error node. */
export type WebhookFix = "signIn" | "openSettings";

export interface WebhookAdvice {
  readonly message: string;
  readonly fix?: WebhookFix;
}

export interface AdviceContext {
  /** How the registry is shown to the user (its name, or URL). */
  readonly registry: string;
  /** Whether the registry comes from the `protocall.registries` setting (then its URL can be fixed there). */
  readonly fromSettings?: boolean;
}

/** The text before the first of `tails` found in `message` (the client's command-line advice). */
function cut(message: string, tails: readonly string[]): string {
  let end = message.length;
  for (const tail of tails) {
    const at = message.indexOf(tail);
    if (at >= 0 && at < end) end = at;
  }
  return message.slice(0, end);
}

/**
 * A WebhookError, recognised by its kind rather than by its class: this module is loaded when the
 * editor starts, and the class would bring the whole Connect runtime with it.
 */
function isWebhookError(err: unknown): err is WebhookError {
  return err instanceof ProtocallError && typeof (err as { kind?: unknown }).kind === "string";
}

export function webhookErrorAdvice(err: unknown, ctx: AdviceContext): WebhookAdvice {
  if (!isWebhookError(err)) return { message: errorMessage(err) };
  const m = err.message;
  const kind: WebhookErrorKind = err.kind;
  switch (kind) {
    case "unauthenticated":
      return {
        message: `${cut(m, [": check the token in"])}: sign in to ${ctx.registry} again with a valid API token`,
        fix: "signIn",
      };
    case "permission_denied":
      return { message: m };
    case "already_exists":
      return {
        message: `${cut(m, ["; a repository allows one"])}; a repository allows one: delete the webhook listed under it first, then create the new one`,
      };
    case "invalid_argument":
      return {
        message: `${cut(m, ["; check --"])}; check the repository name, the event and the callback URL`,
      };
    case "not_found":
      if (m.startsWith("webhook ")) {
        return { message: `${cut(m, [": list the repository"])}: it was deleted already; refresh the view` };
      }
      return {
        message: `${cut(m, [": check --owner"])}: check the repository's owner and name (remove it from the view and add it with the right name)`,
      };
    case "webhooks_disabled":
      return {
        message: `${cut(m, [", or check that --remote"])}${ctx.fromSettings ? ", or check the registry's URL in the settings" : ""}`,
        fix: ctx.fromSettings ? "openSettings" : undefined,
      };
    case "unreachable":
      return {
        message: `${cut(m, ["; check --remote"])}; check the registry's URL${ctx.fromSettings ? " in the settings" : ""} and your network`,
        fix: ctx.fromSettings ? "openSettings" : undefined,
      };
    default:
      return { message: m };
  }
}
