// The registry emulator: one server with the registry's WebhookService (webhook-api.ts), the module API
// that the buf CLI pushes to and reads modules from (module-api.ts), protocall.registry.v1.
// RegistryService (a push without content, the delivery log), and batched event delivery
// (deliverer.ts). A push through either API fires the repository-push webhook. Users, tokens and
// roles (access.ts) are the same for every API; state (state.ts) is durable before anything is
// acknowledged; the HTTP front (http-front.ts) checks the path, the token and the body size before
// reading a body.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { compressionGzip } from "@connectrpc/connect-node";
import type { RepositoryCommit } from "../../gen/buf/alpha/registry/v1alpha1/repository_commit_pb";
import { encodeEvent, pushEvent } from "../webhooks/event";
import { defaultPrefix } from "../webhooks/paths";
import { Access } from "./access";
import type { RegistryConfig, RegistryUser } from "./config";
import { Deliverer, type DeliveryAttempt, type SetTimer } from "./deliverer";
import { callerKey, type FrontRoute, startFront } from "./http-front";
import { registerModuleApi } from "./module-api";
import { toRepository, toRepositoryCommit } from "./push-event";
import {
  type Change,
  type CommitData,
  type LabelData,
  type ModuleData,
  newId,
  ownerIdFor,
  RegistryState,
} from "./state";
import { registerWebhookApi } from "./webhook-api";

/**
 * Default largest Upload body: 32 MiB, room for large modules (all of googleapis' .proto files are
 * about 10 MB). An upload is held in memory whole and several times over while it is decoded, checked,
 * digested and journalled (a 32 MiB upload peaks near 250 MB of RSS, 200 MB near 1.4 GB), so the
 * limit bounds memory; a larger declared body is refused with `resource_exhausted` before it is read.
 */
export const defaultMaxUploadBytes = 32 * 1024 * 1024;
/** Largest body of every other RPC. */
const maxSmallBodyBytes = 4 * 1024 * 1024;

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
  /** Added to a delivery error when the callback's certificate is not trusted (says how to trust it). */
  readonly untrustedCertificateHint?: string;
  /** ListWebhooks page size (default 10). */
  readonly pageSize?: number;
  /** Overrides the config's webhooksEnabled when set. */
  readonly webhooksEnabled?: boolean;
  /** Largest Upload request body in bytes (default 32 MiB); other RPCs take at most 4 MiB. */
  readonly maxUploadBytes?: number;
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
  /** Number of disk syncs of the state so far (0 without a state file). */
  syncCount(): number;
  close(): Promise<void>;
}

const moduleServices = [
  "buf.registry.module.v1.ModuleService",
  "buf.registry.module.v1.UploadService",
  "buf.registry.module.v1.CommitService",
  "buf.registry.module.v1.LabelService",
  "buf.registry.module.v1.ResourceService",
  "buf.registry.module.v1.GraphService",
  "buf.registry.module.v1.DownloadService",
  "buf.registry.owner.v1.OwnerService",
];

export async function startRegistryEmulator(options: RegistryEmulatorOptions): Promise<RegistryEmulator> {
  const config = options.config;
  const prefix = options.prefix ?? defaultPrefix;
  const enabled = options.webhooksEnabled ?? config.webhooksEnabled;
  const maxUpload = options.maxUploadBytes ?? defaultMaxUploadBytes;
  const log = options.log;
  const state = await RegistryState.open(options.statePath);
  try {
    await ensureConfiguredModules(state, config);
  } catch (err) {
    await state.close();
    throw err;
  }
  const access = new Access(config, state);
  const deliverer = new Deliverer({
    batchSize: options.batchSize ?? 20,
    batchIntervalMs: options.batchIntervalMs ?? 5000,
    trustCa: options.trustCa,
    untrustedCertificateHint: options.untrustedCertificateHint,
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

  const caller = (ctx: HandlerContext): RegistryUser => {
    const user = ctx.values.get(callerKey);
    if (!user) throw new Error("no signed-in user in the call context");
    return user;
  };

  /** Queues the event for the repository's webhooks; returns how many were queued. */
  function fire(module: ModuleData, commit: RepositoryCommit, eventTime = new Date()): number {
    const webhooks = enabled
      ? state.webhooks.filter((w) => w.owner === module.owner && w.repository === module.name)
      : [];
    if (webhooks.length === 0) return 0;
    const repository = toRepository(module, access.owner(module.owner));
    const body = encodeEvent(pushEvent(repository, commit, eventTime));
    for (const w of webhooks) {
      deliverer.enqueue({
        webhookId: w.webhookId,
        owner: module.owner,
        repository: module.name,
        callbackUrl: w.callbackUrl,
        commitId: commit.id,
        body,
      });
    }
    return webhooks.length;
  }

  const router = createConnectRouter({
    readMaxBytes: maxUpload,
    acceptCompression: [compressionGzip],
    // Responses go uncompressed: the emulator runs next to its clients, where gzip only costs time.
    compressMinBytes: 2 ** 31,
  });
  registerWebhookApi(router, {
    state,
    access,
    prefix,
    pageSize: options.pageSize ?? 10,
    enabled,
    caller,
    deliveries: () => deliverer.list(),
    log,
    onAlphaPush: (module, commit) => fire(module, commit, timestampDate(commit.createTime!)),
  });
  registerModuleApi(router, {
    state,
    access,
    caller,
    onPush(module: ModuleData, commit: CommitData, labels: readonly LabelData[], by: RegistryUser) {
      const sequence = state.position(commit.id);
      const queued = fire(module, toRepositoryCommit(module, commit, labels, sequence));
      log?.(
        `Upload ${module.owner}/${module.name} by ${by.name}: commit ${commit.id}` +
          (labels.length ? ` labels ${labels.map((l) => l.name).join(",")}` : "") +
          (queued ? `, ${queued} event queued` : ""),
      );
    },
  });

  const routes = new Map<string, FrontRoute>();
  const webhookPrefix = "/buf.alpha.registry.v1alpha1.WebhookService/";
  for (const handler of router.handlers) {
    const path = handler.requestPath;
    const maxBodyBytes =
      path === "/buf.registry.module.v1.UploadService/Upload" ? maxUpload : maxSmallBodyBytes;
    // The generated webhook service is registered under the `buf` package; another prefix replaces it.
    const served =
      prefix !== defaultPrefix && path.startsWith(webhookPrefix)
        ? `/${prefix}.alpha.registry.v1alpha1.WebhookService/${path.slice(webhookPrefix.length)}`
        : path;
    routes.set(served, { handler, maxBodyBytes });
  }
  const servedList = [
    `${prefix}.alpha.registry.v1alpha1.WebhookService`,
    "buf.alpha.registry.v1alpha1.AuthnService (GetCurrentUser)",
    "protocall.registry.v1.RegistryService",
    ...moduleServices,
  ].join(", ");
  let front: Awaited<ReturnType<typeof startFront>>;
  try {
    front = await startFront({
      routes,
      userByToken: (token) => access.userByToken(token),
      unimplemented: (path) =>
        `${path.replace(/^\//, "")} is not served by this registry emulator; it serves ${servedList}`,
      host: options.host,
      port: options.port,
      tls: options.tls,
    });
  } catch (err) {
    await state.close();
    throw err;
  }
  return {
    url: front.url,
    port: front.port,
    deliveries: () => deliverer.list(),
    syncCount: () => state.syncCount(),
    async close() {
      await deliverer.close();
      await front.close();
      await state.close();
    },
  };
}

/** Every configured repository exists as a module (created once, so its id stays the same). */
async function ensureConfiguredModules(state: RegistryState, config: RegistryConfig): Promise<void> {
  const time = new Date().toISOString();
  const changes: Change[] = [];
  for (const r of config.repositories) {
    const existing = state.module(r.owner, r.name);
    if (existing && existing.visibility === r.visibility) continue;
    changes.push({
      t: "module",
      module: existing
        ? { ...existing, visibility: r.visibility, updateTime: time }
        : {
            id: newId(),
            ownerId: ownerIdFor(r.owner),
            owner: r.owner,
            name: r.name,
            visibility: r.visibility,
            state: "active",
            description: "",
            url: "",
            defaultLabel: "main",
            createTime: time,
            updateTime: time,
            createdBy: "",
          },
    });
  }
  await state.commit(changes);
}
