// The registry's WebhookService (Create/List/Delete, with its rules: the Admin role per repository, one
// webhook per repository and event, the callback URL rules, paging), AuthnService.GetCurrentUser (what
// `buf registry login` calls), and protocall.registry.v1.RegistryService (Push: a commit without
// content; ListDeliveries). A repository here is a module of
// the module API (module-api.ts): configured ones and those created by `buf push --create` alike.
// Every answer is sent only once the change it reports (or the state it shows) is on disk.
import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { AuthnService } from "../../gen/buf/alpha/registry/v1alpha1/authn_pb";
import { RepositoryCommitSchema } from "../../gen/buf/alpha/registry/v1alpha1/repository_commit_pb";
import {
  type Webhook,
  WebhookEvent,
  WebhookSchema,
  WebhookService,
} from "../../gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { DeliverySchema, RegistryService } from "../../gen/protocall/registry/v1/registry_pb";
import { callbackUrlProblems } from "../webhooks/callback-url";
import { newCommit } from "../webhooks/event";
import type { Access } from "./access";
import type { RegistryUser } from "./config";
import type { DeliveryAttempt } from "./deliverer";
import { persist } from "./module-api";
import { type ModuleData, ownerIdFor, type RegistryState, type StoredWebhook } from "./state";

export interface WebhookApiContext {
  readonly state: RegistryState;
  readonly access: Access;
  readonly prefix: string;
  readonly pageSize: number;
  readonly enabled: boolean;
  caller(ctx: HandlerContext): RegistryUser;
  /** Queues the push event of an alpha (content-less) commit, once it is on disk. */
  onAlphaPush(module: ModuleData, commit: ReturnType<typeof newCommit>): number;
  deliveries(): readonly DeliveryAttempt[];
  log?: (line: string) => void;
}

export function registerWebhookApi(router: ConnectRouter, api: WebhookApiContext): void {
  registerWebhookService(router, api);
  // `buf registry login` checks the token with this call before writing ~/.netrc.
  router.service(AuthnService, {
    getCurrentUser(_req, ctx) {
      const user = api.caller(ctx);
      const epoch = timestampFromDate(new Date(0));
      return {
        user: { id: ownerIdFor(user.name), username: user.name, createTime: epoch, updateTime: epoch },
      };
    },
  });

  registerRegistryService(router, api);
}

/** WebhookService: Create, List (paged) and Delete, with the registry's rules. */
function registerWebhookService(router: ConnectRouter, api: WebhookApiContext): void {
  const { state, access, log } = api;
  router.service(WebhookService, {
    async createWebhook(req, ctx) {
      const user = api.caller(ctx);
      requireEnabled(api);
      if (req.webhookEvent !== WebhookEvent.REPOSITORY_PUSH) {
        throw new ConnectError(
          "webhook_event must be WEBHOOK_EVENT_REPOSITORY_PUSH, the only event",
          Code.InvalidArgument,
        );
      }
      const repo = findRepository(api, req.ownerName, req.repositoryName);
      requireAdmin(api, user, repo);
      const problems = callbackUrlProblems(req.callbackUrl, api.prefix);
      if (problems.length) throw new ConnectError(problems.join("; "), Code.InvalidArgument);
      if (
        state.webhooks.some(
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
      await persist(state.commit([{ t: "webhook", webhook: stored }]));
      log?.(
        `CreateWebhook ${repo.owner}/${repo.name} by ${user.name}: ${stored.webhookId} -> ${stored.callbackUrl}`,
      );
      return { webhook: toWebhook(stored) };
    },
    async listWebhooks(req, ctx) {
      const user = api.caller(ctx);
      requireEnabled(api);
      let all: StoredWebhook[];
      if (req.ownerName && !req.repositoryName) {
        // Emulator extension: the owner's webhooks across the repositories the caller administers.
        all = state.webhooks.filter((w) => {
          if (w.owner !== req.ownerName) return false;
          const m = state.module(w.owner, w.repository);
          return m !== undefined && access.roleOn(user, m) === "admin";
        });
      } else {
        const repo = findRepository(api, req.ownerName, req.repositoryName);
        requireAdmin(api, user, repo);
        all = state.webhooks.filter((w) => w.owner === repo.owner && w.repository === repo.name);
      }
      let start = 0;
      if (req.pageToken) {
        const decoded = /^o(\d+)$/.exec(Buffer.from(req.pageToken, "base64url").toString("utf8"));
        if (!decoded) throw new ConnectError(`invalid page_token "${req.pageToken}"`, Code.InvalidArgument);
        start = Number(decoded[1]);
      }
      const page = all.slice(start, start + api.pageSize);
      const next =
        start + api.pageSize < all.length
          ? Buffer.from(`o${start + api.pageSize}`).toString("base64url")
          : "";
      await persist(state.barrier());
      return { webhooks: page.map(toWebhook), nextPageToken: next };
    },
    async deleteWebhook(req, ctx) {
      const user = api.caller(ctx);
      requireEnabled(api);
      if (!req.webhookId) throw new ConnectError("webhook_id is required", Code.InvalidArgument);
      const w = state.webhooks.find((x) => x.webhookId === req.webhookId);
      if (!w) throw new ConnectError(`webhook ${req.webhookId} does not exist`, Code.NotFound);
      requireAdmin(api, user, findRepository(api, w.owner, w.repository));
      await persist(state.commit([{ t: "webhook-deleted", webhookId: w.webhookId }]));
      log?.(`DeleteWebhook ${w.webhookId} of ${w.owner}/${w.repository} by ${user.name}`);
      return {};
    },
  });
}

/** protocall.registry.v1.RegistryService: Push (a commit without content) and ListDeliveries. */
function registerRegistryService(router: ConnectRouter, api: WebhookApiContext): void {
  const { state, access, log } = api;
  router.service(RegistryService, {
    async push(req, ctx) {
      const user = api.caller(ctx);
      const repo = findRepository(api, req.ownerName, req.repositoryName);
      if (!access.roleOn(user, repo)) {
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
      const commit = newCommit({
        author: req.author || user.name,
        tags: req.tags,
        sequenceId: BigInt(state.alphaCommitsOf(repo.id).length + state.commitsOf(repo.id).length + 1),
      });
      await persist(
        state.commit([
          { t: "alpha-commit", moduleId: repo.id, commit: toJson(RepositoryCommitSchema, commit) },
        ]),
      );
      const queued = api.onAlphaPush(repo, commit);
      log?.(
        `Push ${repo.owner}/${repo.name} by ${user.name}: commit ${commit.id} #${commit.commitSequenceId}`,
      );
      return { commit, eventQueued: queued > 0 };
    },
    async listDeliveries(req, ctx) {
      const user = api.caller(ctx);
      if (Boolean(req.ownerName) !== Boolean(req.repositoryName)) {
        throw new ConnectError("give both owner_name and repository_name, or neither", Code.InvalidArgument);
      }
      const visible = (owner: string, name: string) => {
        const m = state.module(owner, name);
        return m !== undefined && access.roleOn(user, m) !== undefined;
      };
      const deliveries = api
        .deliveries()
        .filter((a) => visible(a.owner, a.repository))
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
            // Tenths of a millisecond: what a timer on a busy machine can tell apart.
            latencyMs: Math.round(a.latencyMs * 10) / 10,
            responseBody: a.responseBody,
            error: a.error,
            success: a.success,
          }),
        );
      return { deliveries };
    },
  });
}

function findRepository({ state }: WebhookApiContext, owner: string, name: string): ModuleData {
  if (!owner || !name) {
    throw new ConnectError("owner_name and repository_name are required", Code.InvalidArgument);
  }
  const module = state.module(owner, name);
  if (!module) throw new ConnectError(`repository ${owner}/${name} does not exist`, Code.NotFound);
  return module;
}

function requireAdmin({ access }: WebhookApiContext, user: RegistryUser, module: ModuleData): void {
  if (access.roleOn(user, module) !== "admin") {
    throw new ConnectError(
      `user ${user.name} does not have the Admin role on repository ${module.owner}/${module.name}`,
      Code.PermissionDenied,
    );
  }
}

function requireEnabled(api: WebhookApiContext): void {
  if (!api.enabled) {
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
