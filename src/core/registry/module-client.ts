// A client of a registry's module API (buf.registry.module.v1), making the calls the buf CLI makes to
// read a module: CommitService.GetCommits (a reference to a commit), GraphService.GetGraph (the
// commit and its dependencies), DownloadService.Download (their files), and ModuleService.GetModules /
// OwnerService.GetOwners (the names of dependencies, for messages), plus the read-only listings the
// editor shows (CommitService.ListCommits, LabelService.ListLabels). Connect unary with binary
// messages over HTTP/1.1, as buf calls a registry. Each response is checked as buf checks it (counts,
// dashless ids, b5 digests, the graph's closure) and every failure becomes a one-line ProtocallError
// worded like buf's (registry-errors.ts). Only CommitService is loaded up front: a call whose module
// is cached makes that one call, and the other services' descriptors are not worth decoding for it.
import type { DescMessage, DescMethodUnary, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { Commit } from "../../gen/buf/registry/module/v1/commit_pb";
import { CommitService } from "../../gen/buf/registry/module/v1/commit_service_pb";
import { DigestType } from "../../gen/buf/registry/module/v1/digest_pb";
import { ProtocallError } from "../errors";
import { dashedId, type ModuleRef, registryBaseUrl } from "../schema/module-ref";
import type { RemoteAccess } from "./access";
import { b5Length, type ModuleFile } from "./b5-digest";
import { invalidResponse, type RegistryRpc, registryFailure } from "./registry-errors";
import { registryTransport } from "./transport";

/** Most references one request may carry. */
const maxRefs = 250;

/** The largest response read by default (a Download of a module with its files): 256 MiB. */
export const defaultMaxResponseBytes = 256 * 1024 * 1024;

export interface ModuleClientOptions {
  /** The remote with its token and trust (access.ts). */
  readonly access: RemoteAccess;
  /** The registry's base URL when it is not `https://<remote>` (a local registry served over http). */
  readonly baseUrl?: string;
  readonly signal?: AbortSignal;
  /** Per call (default 60 s; Download 10 min): a registry that stops answering cannot hang a caller. */
  readonly timeoutMs?: number;
  /** The largest response body read (default defaultMaxResponseBytes); a larger one is refused. */
  readonly maxResponseBytes?: number;
}

/** A commit as the client uses it: ids checked, the digest a 64-byte b5 value. */
export interface CommitInfo {
  readonly id: string;
  readonly digest: Uint8Array;
  readonly moduleId: string;
  readonly ownerId: string;
  readonly createTime?: Date;
  readonly createdByUserId?: string;
}

export interface ModuleGraph {
  /** Every commit of the graph by id: the root and its dependencies, direct and transitive. */
  readonly commits: ReadonlyMap<string, CommitInfo>;
  /** Direct dependencies by commit id. */
  readonly edges: ReadonlyMap<string, readonly string[]>;
}

export interface LabelInfo {
  readonly name: string;
  readonly commitId: string;
  readonly updateTime?: Date;
}

export class ModuleClient {
  private readonly transport;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;

  private readonly remote: string;

  constructor(private readonly o: ModuleClientOptions) {
    this.remote = o.access.remote;
    this.transport = registryTransport(o.access, {
      baseUrl: o.baseUrl ?? registryBaseUrl(this.remote),
      readMaxBytes: o.maxResponseBytes ?? defaultMaxResponseBytes,
    });
    this.timeoutMs = o.timeoutMs ?? 60_000;
    this.maxBytes = o.maxResponseBytes ?? defaultMaxResponseBytes;
  }

  /** CommitService.GetCommits for one module reference (ref "" = the default label). */
  async getCommit(ref: ModuleRef): Promise<CommitInfo> {
    const res = await this.call("GetCommits", CommitService.method.getCommits, {
      resourceRefs: [
        {
          value: {
            case: "name",
            value: { owner: ref.owner, module: ref.module, child: { case: "ref", value: ref.ref } },
          },
        },
      ],
    });
    if (res.commits.length !== 1) {
      throw invalidResponse(this.remote, "GetCommits", `expected 1 Commits, got ${res.commits.length}`);
    }
    return this.commit("GetCommits", res.commits[0]);
  }

  /** GraphService.GetGraph of one commit of `ref`'s module: checked to hold the commit and every edge's ends. */
  async getGraph(ref: ModuleRef, commitId: string): Promise<ModuleGraph> {
    const { GraphService } = await import("../../gen/buf/registry/module/v1/graph_service_pb");
    const res = await this.call("GetGraph", GraphService.method.getGraph, {
      resourceRefs: [
        {
          value: {
            case: "name",
            value: { owner: ref.owner, module: ref.module, child: { case: "ref", value: commitId } },
          },
        },
      ],
    });
    const commits = new Map<string, CommitInfo>();
    for (const c of res.graph?.commits ?? []) {
      const info = this.commit("GetGraph", c);
      commits.set(info.id, info);
    }
    if (!commits.has(commitId)) {
      throw invalidResponse(
        this.remote,
        "GetGraph",
        `the graph does not contain the commit asked for (${commitId})`,
      );
    }
    const edges = new Map<string, string[]>();
    for (const e of res.graph?.edges ?? []) {
      const from = e.fromNode?.commitId ?? "";
      const to = e.toNode?.commitId ?? "";
      for (const id of [from, to]) {
        if (!commits.has(id)) {
          throw invalidResponse(
            this.remote,
            "GetGraph",
            `an edge names commit "${id}", which the graph does not contain`,
          );
        }
      }
      if (from === to) continue;
      const list = edges.get(from) ?? [];
      if (!list.includes(to)) list.push(to);
      edges.set(from, list);
    }
    return { commits, edges };
  }

  /**
   * DownloadService.Download of commits by id (up to 250 per request), their files by commit id.
   * `nameOf` names a commit's module for messages.
   */
  async download(ids: readonly string[], nameOf: (id: string) => string): Promise<Map<string, ModuleFile[]>> {
    const { DownloadService } = await import("../../gen/buf/registry/module/v1/download_service_pb");
    const out = new Map<string, ModuleFile[]>();
    for (let i = 0; i < ids.length; i += maxRefs) {
      const batch = ids.slice(i, i + maxRefs);
      const res = await this.call(
        "Download",
        DownloadService.method.download,
        { values: batch.map((id) => ({ resourceRef: { value: { case: "id" as const, value: id } } })) },
        { timeoutMs: Math.max(this.timeoutMs, 600_000), module: nameOf(batch[0]) },
      );
      if (res.contents.length !== batch.length) {
        throw invalidResponse(
          this.remote,
          "Download",
          `expected ${batch.length} Contents, got ${res.contents.length}`,
        );
      }
      res.contents.forEach((content, j) => {
        const id = batch[j];
        if (content.commit?.id !== id) {
          throw invalidResponse(
            this.remote,
            "Download",
            `could not get module data for remote module "${nameOf(id)}": no content returned for commit ID ${dashedId(id)}`,
          );
        }
        out.set(
          id,
          content.files.map((f) => ({ path: f.path, content: f.content })),
        );
      });
    }
    return out;
  }

  /** Module names by module id and owner names by owner id (ModuleService.GetModules, OwnerService.GetOwners). */
  async names(
    moduleIds: readonly string[],
    ownerIds: readonly string[],
  ): Promise<{ modules: Map<string, string>; owners: Map<string, string> }> {
    const [{ ModuleService }, { OwnerService }] = await Promise.all([
      import("../../gen/buf/registry/module/v1/module_service_pb"),
      import("../../gen/buf/registry/owner/v1/owner_service_pb"),
    ]);
    const modules = new Map<string, string>();
    const owners = new Map<string, string>();
    const mods = [...new Set(moduleIds)];
    const owns = [...new Set(ownerIds)];
    for (let i = 0; i < mods.length; i += maxRefs) {
      const batch = mods.slice(i, i + maxRefs);
      const res = await this.call("GetModules", ModuleService.method.getModules, {
        moduleRefs: batch.map((id) => ({ value: { case: "id" as const, value: id } })),
      });
      if (res.modules.length !== batch.length) {
        throw invalidResponse(
          this.remote,
          "GetModules",
          `expected ${batch.length} Modules, got ${res.modules.length}`,
        );
      }
      for (const [j, id] of batch.entries()) modules.set(id, res.modules[j].name);
    }
    for (let i = 0; i < owns.length; i += maxRefs) {
      const batch = owns.slice(i, i + maxRefs);
      const res = await this.call("GetOwners", OwnerService.method.getOwners, {
        ownerRefs: batch.map((id) => ({ value: { case: "id" as const, value: id } })),
      });
      if (res.owners.length !== batch.length) {
        throw invalidResponse(
          this.remote,
          "GetOwners",
          `expected ${batch.length} Owners, got ${res.owners.length}`,
        );
      }
      batch.forEach((id, j) => {
        const o = res.owners[j].value;
        if (o.case === undefined) {
          throw invalidResponse(
            this.remote,
            "GetOwners",
            `owner ${id} is neither a user nor an organization`,
          );
        }
        owners.set(id, o.value.name);
      });
    }
    return { modules, owners };
  }

  /** CommitService.ListCommits of a whole module: its latest `count` commits, newest first, checked. */
  async listCommits(owner: string, module: string, count = 10): Promise<CommitInfo[]> {
    const res = await this.call(
      "ListCommits",
      CommitService.method.listCommits,
      { pageSize: count, resourceRef: moduleResource(owner, module) },
      { module: `${owner}/${module}` },
    );
    return res.commits.slice(0, count).map((c) => this.commit("ListCommits", c));
  }

  /** LabelService.ListLabels of a whole module (at most `count`), as the registry orders them. */
  async listLabels(owner: string, module: string, count = 50): Promise<LabelInfo[]> {
    const { LabelService } = await import("../../gen/buf/registry/module/v1/label_service_pb");
    const res = await this.call(
      "ListLabels",
      LabelService.method.listLabels,
      { pageSize: count, resourceRef: moduleResource(owner, module) },
      { module: `${owner}/${module}` },
    );
    return res.labels.slice(0, count).map((l) => {
      if (!/^[0-9a-f]{32}$/.test(l.commitId)) {
        throw invalidResponse(
          this.remote,
          "ListLabels",
          `label "${l.name}" points at "${l.commitId}", not a commit id`,
        );
      }
      return {
        name: l.name,
        commitId: l.commitId,
        updateTime: l.updateTime
          ? new Date(Number(l.updateTime.seconds) * 1000 + l.updateTime.nanos / 1e6)
          : undefined,
      };
    });
  }

  /** Checks a commit as buf does: a dashless id and a 64-byte b5 digest. */
  private commit(rpc: RegistryRpc, c: Commit): CommitInfo {
    if (!/^[0-9a-f]{32}$/.test(c.id)) {
      throw invalidResponse(
        this.remote,
        rpc,
        /^[0-9a-f-]{36}$/.test(c.id)
          ? `expected dashless uuid to be of length 32 but was 36: ${c.id}`
          : `"${c.id}" is not a commit id (32 lowercase hex digits)`,
      );
    }
    if (!c.digest) throw invalidResponse(this.remote, rpc, `commit ${c.id} has no digest`);
    if (c.digest.type !== DigestType.B5) {
      throw invalidResponse(
        this.remote,
        rpc,
        `commit ${c.id}: unknown modulev1.DigestType: ${DigestType[c.digest.type] ? `DIGEST_TYPE_${DigestType[c.digest.type]}` : c.digest.type}`,
      );
    }
    if (c.digest.value.length !== b5Length) {
      throw invalidResponse(
        this.remote,
        rpc,
        `commit ${c.id}: invalid shake256 digest value: expected ${b5Length} bytes, got ${c.digest.value.length}`,
      );
    }
    return {
      id: c.id,
      digest: c.digest.value,
      moduleId: c.moduleId,
      ownerId: c.ownerId,
      createTime: c.createTime
        ? new Date(Number(c.createTime.seconds) * 1000 + c.createTime.nanos / 1e6)
        : undefined,
      createdByUserId: c.createdByUserId || undefined,
    };
  }

  /** One unary call, its failure worded for the user. */
  private async call<I extends DescMessage, O extends DescMessage>(
    rpc: RegistryRpc,
    method: DescMethodUnary<I, O>,
    request: MessageInitShape<I>,
    extra: { timeoutMs?: number; module?: string } = {},
  ): Promise<MessageShape<O>> {
    const timeoutMs = extra.timeoutMs ?? this.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = this.o.signal ? AbortSignal.any([this.o.signal, timeout]) : timeout;
    const url = `${this.o.baseUrl ?? registryBaseUrl(this.remote)}/${method.parent.typeName}/${method.name}`;
    try {
      return (await this.transport.unary(method, signal, undefined, undefined, request)).message;
    } catch (err) {
      if (timeout.aborted && !this.o.signal?.aborted) {
        throw new ProtocallError(
          `the registry at https://${this.remote} did not answer ${rpc} within ${Math.round(timeoutMs / 1000)} s; try again later, or check the registry`,
        );
      }
      throw registryFailure(err, {
        rpc,
        url,
        remote: this.remote,
        token: this.o.access.token,
        module: extra.module,
        maxBytes: this.maxBytes,
        aborted: this.o.signal?.aborted ? this.o.signal.reason : undefined,
      });
    }
  }
}

/** A reference to a whole module (no label or commit). */
function moduleResource(owner: string, module: string) {
  return { value: { case: "name" as const, value: { owner, module } } };
}
