// The webhook calls of the view: the core client, made for a registry of the view with its token from
// secret storage (and the local registry's own certificate trusted), returning plain webhook records.
// The client and the generated registry types load on the first call, keeping activation light.
import type { RegistryEntry, RegistryStore } from "./registries";
import type { WebhookInfo } from "./webhook-info";

export type { WebhookInfo } from "./webhook-info";

export class WebhookService {
  constructor(private readonly store: RegistryStore) {}

  private async client(entry: RegistryEntry) {
    const token = await this.store.token(entry);
    if (token === undefined) {
      const { Code, WebhookError } = await import("../../core/webhooks/errors");
      throw new WebhookError(
        "unauthenticated",
        Code.Unauthenticated,
        `you are not signed in to ${entry.name}`,
      );
    }
    const { createWebhookClient } = await import("../../core/webhooks/client");
    return createWebhookClient({
      baseUrl: entry.url,
      token,
      ca: this.store.ca(entry),
      timeoutMs: 15_000,
      remoteLabel: entry.url,
    });
  }

  async list(entry: RegistryEntry, owner: string, repository: string): Promise<WebhookInfo[]> {
    const { webhookInfo } = await import("./webhook-info");
    return (await (await this.client(entry)).listWebhooks(owner, repository)).map(webhookInfo);
  }

  async create(
    entry: RegistryEntry,
    owner: string,
    repository: string,
    callbackUrl: string,
    event = "WEBHOOK_EVENT_REPOSITORY_PUSH",
  ): Promise<WebhookInfo> {
    const { parseWebhookEvent } = await import("../../core/webhooks/client");
    const { eventName, WebhookEvent, webhookInfo } = await import("./webhook-info");
    const parsed = parseWebhookEvent(event);
    if (parsed === undefined) {
      const { Code, WebhookError } = await import("../../core/webhooks/errors");
      throw new WebhookError(
        "invalid_argument",
        Code.InvalidArgument,
        `"${event}" is not a webhook event: use ${eventName(WebhookEvent.REPOSITORY_PUSH)}`,
        1,
      );
    }
    const client = await this.client(entry);
    return webhookInfo(await client.createWebhook({ owner, repository, callbackUrl, event: parsed }));
  }

  async delete(entry: RegistryEntry, webhookId: string): Promise<void> {
    await (await this.client(entry)).deleteWebhook(webhookId);
  }
}
