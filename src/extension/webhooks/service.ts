// The webhook calls of the view: the core client, made for a registry of the view with its token from
// secret storage (and the local registry's own certificate trusted), returning plain webhook records.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createWebhookClient, parseWebhookEvent } from "../../core/webhooks/client";
import { Code, WebhookError } from "../../core/webhooks/errors";
import { type Webhook, WebhookEvent } from "../../gen/buf/alpha/registry/v1alpha1/webhook_pb";
import type { RegistryEntry, RegistryStore } from "./registries";
import { eventName } from "./tree";

/** A webhook as the view shows it and the API returns it. */
export interface WebhookInfo {
  readonly id: string;
  /** e.g. WEBHOOK_EVENT_REPOSITORY_PUSH */
  readonly event: string;
  readonly owner: string;
  readonly repository: string;
  readonly callbackUrl: string;
  /** ISO 8601, when the registry sent it. */
  readonly createTime?: string;
  readonly updateTime?: string;
}

function info(w: Webhook): WebhookInfo {
  return {
    id: w.webhookId,
    event: eventName(w.event),
    owner: w.ownerName,
    repository: w.repositoryName,
    callbackUrl: w.callbackUrl,
    createTime: w.createTime ? timestampDate(w.createTime).toISOString() : undefined,
    updateTime: w.updateTime ? timestampDate(w.updateTime).toISOString() : undefined,
  };
}

export class WebhookService {
  constructor(private readonly store: RegistryStore) {}

  private async client(entry: RegistryEntry) {
    const token = await this.store.token(entry);
    if (token === undefined) {
      throw new WebhookError(
        "unauthenticated",
        Code.Unauthenticated,
        `you are not signed in to ${entry.name}`,
      );
    }
    return createWebhookClient({
      baseUrl: entry.url,
      token,
      ca: this.store.ca(entry),
      timeoutMs: 15_000,
      remoteLabel: entry.url,
    });
  }

  async list(entry: RegistryEntry, owner: string, repository: string): Promise<WebhookInfo[]> {
    return (await (await this.client(entry)).listWebhooks(owner, repository)).map(info);
  }

  async create(
    entry: RegistryEntry,
    owner: string,
    repository: string,
    callbackUrl: string,
    event = "WEBHOOK_EVENT_REPOSITORY_PUSH",
  ): Promise<WebhookInfo> {
    const parsed = parseWebhookEvent(event);
    if (parsed === undefined) {
      throw new WebhookError(
        "invalid_argument",
        Code.InvalidArgument,
        `"${event}" is not a webhook event: use ${eventName(WebhookEvent.REPOSITORY_PUSH)}`,
        1,
      );
    }
    const client = await this.client(entry);
    return info(await client.createWebhook({ owner, repository, callbackUrl, event: parsed }));
  }

  async delete(entry: RegistryEntry, webhookId: string): Promise<void> {
    await (await this.client(entry)).deleteWebhook(webhookId);
  }
}
