// The registry emulator: a real Connect server with the registry's WebhookService rules (bearer tokens,
// the Admin role per repository, one webhook per repository and event, callback URL rules, paging),
// plus protocall.registry.v1.RegistryService (Push, ListDeliveries) and the batched event delivery.
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { create, toJson } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { RepositoryCommitSchema } from "../../../gen/buf/alpha/registry/v1alpha1/repository_commit_pb";
import { RepositorySchema, Visibility } from "../../../gen/buf/alpha/registry/v1alpha1/repository_pb";
import {
  type Webhook,
  WebhookEvent,
  WebhookSchema,
  WebhookService,
} from "../../../gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { DeliverySchema, RegistryService } from "../../../gen/protocall/registry/v1/registry_pb";
import { callbackUrlProblems } from "../callback-url";
import { encodeEvent, newCommit, pushEvent } from "../event";
import { defaultPrefix } from "../paths";
import type { RegistryConfig, RegistryRepository, RegistryUser } from "./config";
import { Deliverer, type DeliveryAttempt, type SetTimer } from "./deliverer";
import { RegistryState, type StoredWebhook } from "./state";

export interface RegistryEmulatorOptions {
  readonly config: RegistryConfig;
  /** Where state is persisted; in memory only when absent. */
  readonly statePath?: string;
  readonly host?: string;
  readonly port?: number;
  /** Serve https with this certificate and key (PEM). */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Package prefix of the webhook services in URL paths (default `buf`). */
  readonly prefix?: string;
  readonly batchSize?: number;
  readonly batchIntervalMs?: number;
  /** PEM of a CA that deliveries trust in addition to the system roots. */
  readonly trustCa?: string;
  /** ListWebhooks page size (default 10). */
  readonly pageSize?: number;
  /** Overrides the config's webhooksEnabled when set. */
  readonly webhooksEnabled?: boolean;
  /** Schedules delivery batches (default: real timers); tests pass a clock they control. */
  readonly setTimer?: SetTimer;
  /** Receives one line per delivery attempt and per call (the --verbose log). */
  readonly log?: (line: string) => void;
}

export interface RegistryEmulator {
  /** Base URL, e.g. `http://127.0.0.1:41234` (what `--remote` takes). */
  readonly url: string;
  readonly port: number;
  deliveries(): readonly DeliveryAttempt[];
  close(): Promise<void>;
}

export async function startRegistryEmulator(options: RegistryEmulatorOptions): Promise<RegistryEmulator> {
  const config = options.config;
  const prefix = options.prefix ?? defaultPrefix;
  const pageSize = options.pageSize ?? 10;
  const enabled = options.webhooksEnabled ?? config.webhooksEnabled;
  const state = RegistryState.open(options.statePath);
  const log = options.log;
  const deliverer = new Deliverer({
    batchSize: options.batchSize ?? 20,
    batchIntervalMs: options.batchIntervalMs ?? 5000,
    trustCa: options.trustCa,
    setTimer: options.setTimer,
    onAttempt: log
      ? (a) =>
          log(
            `delivery #${a.id} batch ${a.batch} ${a.owner}/${a.repository} commit ${a.commitId} -> ${a.callbackUrl}: ` +
              (a.success ? `HTTP ${a.httpStatus}` : `failed (${a.error})`) +
              ` in ${a.latencyMs.toFixed(1)} ms`,
          )
      : undefined,
  });
  const usersByToken = new Map(config.users.map((u) => [u.token, u]));

  function authenticate(ctx: HandlerContext): RegistryUser {
    const header = ctx.requestHeader.get("authorization") ?? "";
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (!m) {
      throw new ConnectError('missing "Authorization: Bearer <token>" header', Code.Unauthenticated);
    }
    const user = usersByToken.get(m[1].trim());
    if (!user) throw new ConnectError("invalid token", Code.Unauthenticated);
    return user;
  }

  function findRepository(owner: string, name: string): RegistryRepository {
    if (!owner || !name) {
      throw new ConnectError("owner_name and repository_name are required", Code.InvalidArgument);
    }
    const repo = config.repositories.find((r) => r.owner === owner && r.name === name);
    if (!repo) throw new ConnectError(`repository ${owner}/${name} does not exist`, Code.NotFound);
    return repo;
  }

  function requireAdmin(user: RegistryUser, repo: RegistryRepository): void {
    if (!repo.admins.includes(user.name)) {
      throw new ConnectError(
        `user ${user.name} does not have the Admin role on repository ${repo.owner}/${repo.name}`,
        Code.PermissionDenied,
      );
    }
  }

  function requireEnabled(): void {
    if (!enabled) {
      throw new ConnectError("webhooks are disabled on this instance", Code.FailedPrecondition);
    }
  }

  function toWebhook(w: StoredWebhook): Webhook {
    return create(WebhookSchema, {
      event: w.event,
      webhookId: w.webhookId,
      createTime: timestampFromDate(new Date(w.createTime)),
      updateTime: timestampFromDate(new Date(w.updateTime)),
      repositoryName: w.repository,
      ownerName: w.owner,
      callbackUrl: w.callbackUrl,
    });
  }

  const routes = (router: ConnectRouter) => {
    router.service(WebhookService, {
      createWebhook(req, ctx) {
        const user = authenticate(ctx);
        requireEnabled();
        if (req.webhookEvent !== WebhookEvent.REPOSITORY_PUSH) {
          throw new ConnectError(
            "webhook_event must be WEBHOOK_EVENT_REPOSITORY_PUSH, the only event",
            Code.InvalidArgument,
          );
        }
        const repo = findRepository(req.ownerName, req.repositoryName);
        requireAdmin(user, repo);
        const problems = callbackUrlProblems(req.callbackUrl, prefix);
        if (problems.length) throw new ConnectError(problems.join("; "), Code.InvalidArgument);
        if (
          state.data.webhooks.some(
            (w) => w.owner === repo.owner && w.repository === repo.name && w.event === req.webhookEvent,
          )
        ) {
          throw new ConnectError(
            `repository ${repo.owner}/${repo.name} already has a webhook for WEBHOOK_EVENT_REPOSITORY_PUSH`,
            Code.AlreadyExists,
          );
        }
        const now = new Date().toISOString();
        const stored: StoredWebhook = {
          webhookId: crypto.randomUUID(),
          event: req.webhookEvent,
          owner: repo.owner,
          repository: repo.name,
          callbackUrl: req.callbackUrl,
          createTime: now,
          updateTime: now,
        };
        state.data.webhooks.push(stored);
        state.save();
        log?.(
          `CreateWebhook ${repo.owner}/${repo.name} by ${user.name}: ${stored.webhookId} -> ${stored.callbackUrl}`,
        );
        return { webhook: toWebhook(stored) };
      },
      listWebhooks(req, ctx) {
        const user = authenticate(ctx);
        requireEnabled();
        let all: StoredWebhook[];
        if (req.ownerName && !req.repositoryName) {
          // Emulator extension: the owner's webhooks across the repositories the caller administers.
          const administered = new Set(
            config.repositories
              .filter((r) => r.owner === req.ownerName && r.admins.includes(user.name))
              .map((r) => r.name),
          );
          all = state.data.webhooks.filter(
            (w) => w.owner === req.ownerName && administered.has(w.repository),
          );
        } else {
          const repo = findRepository(req.ownerName, req.repositoryName);
          requireAdmin(user, repo);
          all = state.data.webhooks.filter((w) => w.owner === repo.owner && w.repository === repo.name);
        }
        let start = 0;
        if (req.pageToken) {
          const decoded = /^o(\d+)$/.exec(Buffer.from(req.pageToken, "base64url").toString("utf8"));
          if (!decoded) throw new ConnectError(`invalid page_token "${req.pageToken}"`, Code.InvalidArgument);
          start = Number(decoded[1]);
        }
        const page = all.slice(start, start + pageSize);
        const next =
          start + pageSize < all.length ? Buffer.from(`o${start + pageSize}`).toString("base64url") : "";
        return { webhooks: page.map(toWebhook), nextPageToken: next };
      },
      deleteWebhook(req, ctx) {
        const user = authenticate(ctx);
        requireEnabled();
        if (!req.webhookId) throw new ConnectError("webhook_id is required", Code.InvalidArgument);
        const index = state.data.webhooks.findIndex((w) => w.webhookId === req.webhookId);
        if (index < 0) throw new ConnectError(`webhook ${req.webhookId} does not exist`, Code.NotFound);
        const w = state.data.webhooks[index];
        requireAdmin(user, findRepository(w.owner, w.repository));
        state.data.webhooks.splice(index, 1);
        state.save();
        log?.(`DeleteWebhook ${w.webhookId} of ${w.owner}/${w.repository} by ${user.name}`);
        return {};
      },
    });
    router.service(RegistryService, {
      push(req, ctx) {
        const user = authenticate(ctx);
        const repo = findRepository(req.ownerName, req.repositoryName);
        if (!repo.admins.includes(user.name) && !repo.members.includes(user.name)) {
          throw new ConnectError(
            `user ${user.name} is neither a member nor an Admin of repository ${repo.owner}/${repo.name}: add "${user.name}" to its "members" in the registry config`,
            Code.PermissionDenied,
          );
        }
        for (const tag of req.tags) {
          if (!/^[A-Za-z0-9._-]{1,250}$/.test(tag)) {
            throw new ConnectError(`invalid tag name "${tag}"`, Code.InvalidArgument);
          }
        }
        const stored = state.repository(repo.owner, repo.name);
        const commit = newCommit({
          author: req.author || user.name,
          tags: req.tags,
          sequenceId: BigInt(stored.commits.length + 1),
        });
        stored.commits.push(toJson(RepositoryCommitSchema, commit));
        stored.updateTime = new Date().toISOString();
        state.save();
        const webhooks = enabled
          ? state.data.webhooks.filter((w) => w.owner === repo.owner && w.repository === repo.name)
          : [];
        if (webhooks.length) {
          const repository = create(RepositorySchema, {
            id: stored.id,
            name: repo.name,
            ownerName: repo.owner,
            owner: { case: "userId", value: stored.ownerId },
            visibility: Visibility.PUBLIC,
            createTime: timestampFromDate(new Date(stored.createTime)),
            updateTime: timestampFromDate(new Date(stored.updateTime)),
            defaultBranch: "main",
          });
          const body = encodeEvent(pushEvent(repository, commit, timestampDate(commit.createTime!)));
          for (const w of webhooks) {
            deliverer.enqueue({
              webhookId: w.webhookId,
              owner: repo.owner,
              repository: repo.name,
              callbackUrl: w.callbackUrl,
              commitId: commit.id,
              body,
            });
          }
        }
        log?.(
          `Push ${repo.owner}/${repo.name} by ${user.name}: commit ${commit.id} #${commit.commitSequenceId}`,
        );
        return { commit, eventQueued: webhooks.length > 0 };
      },
      listDeliveries(req, ctx) {
        const user = authenticate(ctx);
        if (Boolean(req.ownerName) !== Boolean(req.repositoryName)) {
          throw new ConnectError(
            "give both owner_name and repository_name, or neither",
            Code.InvalidArgument,
          );
        }
        const visible = new Set(
          config.repositories
            .filter((r) => r.admins.includes(user.name) || r.members.includes(user.name))
            .map((r) => `${r.owner}/${r.name}`),
        );
        const deliveries = deliverer
          .list()
          .filter((a) => visible.has(`${a.owner}/${a.repository}`))
          .filter((a) => !req.ownerName || (a.owner === req.ownerName && a.repository === req.repositoryName))
          .map((a) =>
            create(DeliverySchema, {
              id: BigInt(a.id),
              webhookId: a.webhookId,
              ownerName: a.owner,
              repositoryName: a.repository,
              callbackUrl: a.callbackUrl,
              commitId: a.commitId,
              batch: BigInt(a.batch),
              attemptTime: timestampFromDate(a.attemptTime),
              httpStatus: a.httpStatus,
              latencyMs: a.latencyMs,
              responseBody: a.responseBody,
              error: a.error,
              success: a.success,
            }),
          );
        return { deliveries };
      },
    });
  };

  const handler = connectNodeAdapter({ routes });
  const servicePrefix = `/${prefix}.alpha.registry.v1alpha1.WebhookService/`;
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    // The generated service is registered under the `buf` package; another prefix is mapped onto it.
    if (prefix !== defaultPrefix && req.url?.startsWith(servicePrefix)) {
      req.url = `/buf.alpha.registry.v1alpha1.WebhookService/${req.url.slice(servicePrefix.length)}`;
    } else if (prefix !== defaultPrefix && req.url?.startsWith("/buf.alpha.registry.v1alpha1.")) {
      req.url = "/not-found";
    }
    handler(req, res);
  };
  const server = options.tls
    ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, listener)
    : http.createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostText = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `${options.tls ? "https" : "http"}://${hostText}:${address.port}`,
    port: address.port,
    deliveries: () => deliverer.list(),
    async close() {
      await deliverer.close();
      state.flush();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
