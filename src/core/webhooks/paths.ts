// URL paths of the two webhook services. Only the package prefix ("buf" on the real registry) varies;
// the JSON and binary encodings do not depend on it.

export const defaultPrefix = "buf";

/** Path of a WebhookService RPC, e.g. `/buf.alpha.registry.v1alpha1.WebhookService/CreateWebhook`. */
export function webhookServicePath(prefix: string, rpc: string): string {
  return `/${prefix}.alpha.registry.v1alpha1.WebhookService/${rpc}`;
}

/** Path of the listener's Event RPC, e.g. `/buf.alpha.webhook.v1alpha1.EventService/Event`. */
export function eventPath(prefix: string): string {
  return `/${prefix}.alpha.webhook.v1alpha1.EventService/Event`;
}

/** Checks a package prefix given by the user (letters, digits, underscores, dots between words). */
export function isValidPrefix(prefix: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(prefix);
}
