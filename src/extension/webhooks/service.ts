// The registry calls of the view: the core clients (webhooks; the module API for a repository's commits
// and labels), made for a registry of the view through the one registry access module, with its token
// from secret storage (and the local registry's own certificate, or the registry's CA file, trusted
// besides what SSL_CERT_FILE or the system trusts), returning plain records.
// The client and the generated registry types load on the first call, keeping activation light.
import type { LastDelivery } from "../../core/webhooks/delivery-status";
import type { RegistryEntry, RegistryStore } from "./registries";
import type { WebhookInfo } from "./webhook-info";

export type { LastDelivery } from "../../core/webhooks/delivery-status";

export type { WebhookInfo } from "./webhook-info";

/** A repository's module history as the view shows it: latest commits (newest first) and labels. */
export interface ModuleHistory {
  readonly commits: readonly {
    readonly id: string;
    readonly createTime?: string;
    /** The user who pushed it, when the registry names them. */
    readonly author?: string;
  }[];
  readonly labels: readonly {
    readonly name: string;
    readonly commitId: string;
    readonly updateTime?: string;
  }[];
}

export class WebhookService {
  /** `env`: the environment registry calls read (the editor's proxy settings applied). */
  constructor(
    private readonly store: RegistryStore,
    private readonly env: () => NodeJS.ProcessEnv = () => process.env,
  ) {}

  /** The access to a registry of the view: its sign-in's token and CA (access.ts). */
  private async access(entry: RegistryEntry, token: string) {
    const { remoteAccess } = await import("../../core/registry/access");
    const remote = new URL(entry.url).host;
    const ca = this.store.ca(entry);
    return remoteAccess(remote, {
      env: this.env(),
      tokens: { [remote]: token },
      cas: ca ? { [remote]: ca } : undefined,
      secure: entry.url.startsWith("https:"),
    });
  }

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
      access: await this.access(entry, token),
      timeoutMs: 15_000,
      remoteLabel: entry.url,
    });
  }

  /**
   * The repository's latest commits and its labels, from the module API (ListCommits, ListLabels, and
   * GetOwners for the authors' names). Undefined when the registry has no such module (not_found) or
   * no module API (unimplemented): a repository that only has webhooks.
   */
  async history(
    entry: RegistryEntry,
    owner: string,
    repository: string,
    count = 10,
  ): Promise<ModuleHistory | undefined> {
    const token = await this.store.token(entry);
    if (token === undefined) return undefined;
    const { ModuleClient } = await import("../../core/registry/module-client");
    const client = new ModuleClient({
      access: await this.access(entry, token),
      baseUrl: new URL(entry.url).origin,
      timeoutMs: 15_000,
    });
    let commits: Awaited<ReturnType<typeof client.listCommits>>;
    let labels: Awaited<ReturnType<typeof client.listLabels>>;
    try {
      [commits, labels] = await Promise.all([
        client.listCommits(owner, repository, count),
        client.listLabels(owner, repository),
      ]);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/(^|: )(not_found|unimplemented): /.test(message) || / was not found/.test(message))
        return undefined;
      throw err;
    }
    const authorIds = commits.map((c) => c.createdByUserId).filter((id): id is string => !!id);
    // Names are a nicety: a registry that cannot give them still shows the commits.
    const owners = await client.names([], authorIds).then(
      (n) => n.owners,
      () => new Map<string, string>(),
    );
    return {
      commits: commits.map((c) => ({
        id: c.id,
        createTime: c.createTime?.toISOString(),
        author: c.createdByUserId ? owners.get(c.createdByUserId) : undefined,
      })),
      labels: labels.map((l) => ({
        name: l.name,
        commitId: l.commitId,
        updateTime: l.updateTime?.toISOString(),
      })),
    };
  }

  /**
   * The last delivery attempt of each webhook of the repository, when the registry records them (the
   * registry emulator); undefined for any other registry, when signed out, or when they cannot be read
   * (the status is a nicety: the webhooks still show).
   */
  async deliveries(
    entry: RegistryEntry,
    owner: string,
    repository: string,
  ): Promise<Map<string, LastDelivery> | undefined> {
    const token = await this.store.token(entry);
    if (token === undefined) return undefined;
    const { lastDeliveries } = await import("../../core/webhooks/delivery-status");
    return Promise.resolve()
      .then(() => lastDeliveries({ baseUrl: entry.url, token, ca: this.store.ca(entry) }, owner, repository))
      .catch(() => undefined);
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
