// Webhooks as the view shows them and the API returns them, made from the registry's messages. Loaded
// on first use (with the generated registry types), not at activation.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  type Webhook,
  WebhookEvent,
  WebhookEventSchema,
} from "../../gen/buf/alpha/registry/v1alpha1/webhook_pb";

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

/** The event's name as the registry spells it, e.g. WEBHOOK_EVENT_REPOSITORY_PUSH. */
export function eventName(event: WebhookEvent): string {
  const short = WebhookEvent[event];
  return short ? `WEBHOOK_EVENT_${short}` : `WEBHOOK_EVENT_${event}`;
}

/** The events a webhook can subscribe to, for the event picker. */
export function eventChoices(): { label: string; detail?: string }[] {
  return WebhookEventSchema.values
    .filter((v) => v.number !== WebhookEvent.UNSPECIFIED)
    .map((v) => ({
      label: eventName(v.number as WebhookEvent),
      detail:
        v.number === WebhookEvent.REPOSITORY_PUSH ? "A push to the repository: a new commit" : undefined,
    }));
}

export function webhookInfo(w: Webhook): WebhookInfo {
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

export { WebhookEvent };
