// The registry's module API as the buf CLI uses it (push, build/export/curl by module reference,
// dep update): buf.registry.module.v1 ModuleService (GetModules, CreateModules), UploadService,
// CommitService (GetCommits, and ListCommits for `buf registry module commit list`), LabelService
// (ListLabels and ListLabelHistory, for `buf registry module label list` and `commit list
// REMOTE/owner/module:label`), ResourceService (GetResources), GraphService (GetGraph), DownloadService, and
// buf.registry.owner.v1.OwnerService (GetOwners). Every answer is computed from the state and sent
// only once what it shows is on disk (a push's commits and labels are written before they are
// acknowledged, and a read waits for the writes it may have seen).
//
// Rules: reading a private module needs a role on it; pushing needs the member or Admin role; a new
// module's creator is its Admin; labels default to "main"; an upload with no labels moves the default
// label, otherwise only the labels it names; a push whose content equals an existing commit of the
// module returns that commit (labels still move) and fires no webhook; ids are dashless UUIDs and a
// dashed commit id is accepted in a reference.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { type Commit, CommitSchema } from "../../gen/buf/registry/module/v1/commit_pb";
import { CommitService, ListCommitsRequest_Order } from "../../gen/buf/registry/module/v1/commit_service_pb";
import { DigestType } from "../../gen/buf/registry/module/v1/digest_pb";
import { DownloadService } from "../../gen/buf/registry/module/v1/download_service_pb";
import { FileType } from "../../gen/buf/registry/module/v1/file_pb";
import { GraphService } from "../../gen/buf/registry/module/v1/graph_service_pb";
import {
  CommitCheckStatus,
  type Label,
  type LabelRef,
  LabelSchema,
  type ScopedLabelRef,
} from "../../gen/buf/registry/module/v1/label_pb";
import {
  LabelService,
  ListLabelHistoryRequest_Order,
  ListLabelsRequest_ArchiveFilter,
  ListLabelsRequest_Order,
} from "../../gen/buf/registry/module/v1/label_service_pb";
import {
  type Module,
  type ModuleRef,
  ModuleSchema,
  ModuleState,
  ModuleVisibility,
} from "../../gen/buf/registry/module/v1/module_pb";
import { ModuleService } from "../../gen/buf/registry/module/v1/module_service_pb";
import {
  type Resource,
  type ResourceRef,
  ResourceSchema,
} from "../../gen/buf/registry/module/v1/resource_pb";
import { ResourceService } from "../../gen/buf/registry/module/v1/resource_service_pb";
import { UploadService } from "../../gen/buf/registry/module/v1/upload_service_pb";
import { OrganizationVerificationStatus } from "../../gen/buf/registry/owner/v1/organization_pb";
import { type Owner, type OwnerRef, OwnerSchema } from "../../gen/buf/registry/owner/v1/owner_pb";
import { OwnerService } from "../../gen/buf/registry/owner/v1/owner_service_pb";
import { UserState, UserType } from "../../gen/buf/registry/owner/v1/user_pb";
import { b5Digest, type ModuleFile, moduleFileKind, selectModuleFiles } from "../registry/b5-digest";
import type { Access, OwnerInfo } from "./access";
import type { RegistryUser } from "./config";
import {
  type Change,
  type CommitData,
  type LabelData,
  type ModuleData,
  newId,
  normalizeId,
  ownerIdFor,
  type RegistryState,
} from "./state";
import { planUpload, UploadPlanError } from "./upload-plan";

/** Most references one Get request may carry (as on the registry). */
export const maxRefs = 250;

export interface ModuleApiContext {
  readonly state: RegistryState;
  readonly access: Access;
  /** The signed-in user of a call (the server checked the token before reading the request). */
  caller(ctx: HandlerContext): RegistryUser;
  /** A push made `commit` (new, and on disk) and moved `labels` to it. */
  onPush(module: ModuleData, commit: CommitData, labels: readonly LabelData[], by: RegistryUser): void;
  now?(): Date;
}

const ownerNamePattern = /^[a-z][a-z0-9-]*[a-z0-9]$/;
const moduleNamePattern = /^[a-z0-9][a-z0-9._-]*$/;

function checkCount(n: number, what: string): void {
  if (n === 0) throw new ConnectError(`give at least one ${what}`, Code.InvalidArgument);
  if (n > maxRefs) {
    throw new ConnectError(
      `${n} ${what}s in one request; at most ${maxRefs} are allowed`,
      Code.InvalidArgument,
    );
  }
}

/** Waits for a write; a failed one is the registry's problem (unavailable), not the caller's. */
export async function persist(write: Promise<void>): Promise<void> {
  try {
    await write;
  } catch (err) {
    throw new ConnectError(err instanceof Error ? err.message : String(err), Code.Unavailable);
  }
}

function ts(iso: string) {
  return timestampFromDate(new Date(iso));
}

/** A page size of 0 means this many (as the buf CLI's own default). */
const defaultPageSize = 10;
const maxPageSize = 250;

/** One page of `items`: the page token is the offset of the page's first item. */
function page<T>(items: readonly T[], pageSize: number, pageToken: string): { next: string; items: T[] } {
  const start = Number(pageToken || "0");
  if (!/^\d*$/.test(pageToken) || !Number.isSafeInteger(start)) {
    throw new ConnectError(
      `page token "${pageToken}" is not one this registry gave: pass the next_page_token of the previous page`,
      Code.InvalidArgument,
    );
  }
  if (pageSize > maxPageSize) {
    throw new ConnectError(`page size ${pageSize} is over the limit of ${maxPageSize}`, Code.InvalidArgument);
  }
  const size = pageSize === 0 ? defaultPageSize : pageSize;
  const end = start + size;
  return { next: end < items.length ? String(end) : "", items: items.slice(start, end) };
}

export function registerModuleApi(router: ConnectRouter, api: ModuleApiContext): void {
  const q = moduleQueries(api);
  registerModuleService(router, api, q);
  registerOwnerService(router, api, q);
  registerCommitService(router, api, q);
  registerResourceService(router, api, q);
  registerLabelService(router, api, q);
  registerGraphService(router, api, q);
  registerDownloadService(router, api, q);
  registerUploadService(router, api, q);
}

function moduleName(m: ModuleData): string {
  return `${m.owner}/${m.name}`;
}

function toCommit(c: CommitData): Commit {
  return create(CommitSchema, {
    id: c.id,
    createTime: ts(c.createTime),
    ownerId: c.ownerId,
    moduleId: c.moduleId,
    digest: { type: DigestType.B5, value: c.digest },
    createdByUserId: c.createdBy ? ownerIdFor(c.createdBy) : "",
    sourceControlUrl: c.sourceControlUrl,
  });
}

function toModule(m: ModuleData): Module {
  return create(ModuleSchema, {
    id: m.id,
    createTime: ts(m.createTime),
    updateTime: ts(m.updateTime),
    name: m.name,
    ownerId: m.ownerId,
    visibility: m.visibility === "public" ? ModuleVisibility.PUBLIC : ModuleVisibility.PRIVATE,
    state: m.state === "deprecated" ? ModuleState.DEPRECATED : ModuleState.ACTIVE,
    description: m.description,
    url: m.url,
    defaultLabelName: m.defaultLabel,
  });
}

function toOwner(o: OwnerInfo): Owner {
  const time = timestampFromDate(new Date(0));
  return create(OwnerSchema, {
    value:
      o.kind === "user"
        ? {
            case: "user",
            value: {
              id: o.id,
              name: o.name,
              createTime: time,
              updateTime: time,
              type: UserType.STANDARD,
              state: UserState.ACTIVE,
            },
          }
        : {
            case: "organization",
            value: {
              id: o.id,
              name: o.name,
              createTime: time,
              updateTime: time,
              verificationStatus: OrganizationVerificationStatus.UNVERIFIED,
            },
          },
  });
}

/** How the handlers find modules, commits, labels and owners from the references in requests. */
function moduleQueries(api: ModuleApiContext) {
  const refs = referenceQueries(api);
  return { ...refs, ...resourceQueries(api, refs) };
}

type ModuleQueries = ReturnType<typeof moduleQueries>;

/** Modules and commits by reference, with the read rule and the commits' dependency closure. */
function referenceQueries(api: ModuleApiContext) {
  const { state, access } = api;
  const now = () => (api.now ? api.now() : new Date());

  /** Transitive dependencies of a commit (each once); commits are immutable, so this is cached. */
  const closures = new Map<string, CommitData[]>();
  function closure(commit: CommitData): CommitData[] {
    const cached = closures.get(commit.id);
    if (cached) return cached;
    const out: CommitData[] = [];
    const seen = new Set<string>();
    const walk = (c: CommitData) => {
      for (const id of c.deps) {
        if (seen.has(id)) continue;
        seen.add(id);
        const dep = state.commitById(id);
        if (!dep) continue;
        out.push(dep);
        walk(dep);
      }
    };
    walk(commit);
    closures.set(commit.id, out);
    return out;
  }

  function readable(user: RegistryUser, module: ModuleData): ModuleData {
    if (!access.canRead(user, module)) {
      throw new ConnectError(
        `user ${user.name} has no role on private module ${moduleName(module)}: add "${user.name}" to its "members" in the registry config`,
        Code.PermissionDenied,
      );
    }
    return module;
  }

  function moduleByName(owner: string, name: string): ModuleData {
    if (!owner || !name)
      throw new ConnectError("a module name needs an owner and a module", Code.InvalidArgument);
    const m = state.module(owner, name);
    if (!m) throw new ConnectError(`module "${owner}/${name}" was not found`, Code.NotFound);
    return m;
  }

  function moduleOfRef(ref: ModuleRef | undefined): ModuleData {
    switch (ref?.value.case) {
      case "id": {
        const m = state.moduleById(normalizeId(ref.value.value) ?? ref.value.value);
        if (!m) throw new ConnectError(`module with id "${ref.value.value}" was not found`, Code.NotFound);
        return m;
      }
      case "name":
        return moduleByName(ref.value.value.owner, ref.value.value.module);
      default:
        throw new ConnectError("a module reference needs an id or a name", Code.InvalidArgument);
    }
  }

  function defaultCommit(m: ModuleData): CommitData {
    const label = state.label(m.id, m.defaultLabel);
    const commit = label && state.commitById(label.commitId);
    if (!commit) {
      throw new ConnectError(
        `module ${moduleName(m)} has no commit on its default label "${m.defaultLabel}": push to it first (a push with --label moves only the labels it names)`,
        Code.FailedPrecondition,
      );
    }
    return commit;
  }

  /** A module reference's commit: a commit id of this module wins over a label of the same name. */
  function commitOfName(m: ModuleData, ref: string, labelOnly: boolean): CommitData {
    if (ref === "") return defaultCommit(m);
    if (!labelOnly) {
      const id = normalizeId(ref);
      const commit = id ? state.commitById(id) : undefined;
      if (commit && commit.moduleId === m.id) return commit;
    }
    const label = state.label(m.id, ref);
    const commit = label && state.commitById(label.commitId);
    if (!commit) {
      throw new ConnectError(
        labelOnly
          ? `label "${ref}" was not found in module ${moduleName(m)}`
          : `no commit or label "${ref}" was found in module ${moduleName(m)}`,
        Code.NotFound,
      );
    }
    return commit;
  }

  function commitOfRef(user: RegistryUser, ref: ResourceRef | undefined): CommitData {
    switch (ref?.value.case) {
      case "id": {
        const raw = ref.value.value;
        const id = normalizeId(raw) ?? raw;
        const commit = state.commitById(id);
        if (commit) {
          readable(user, state.moduleById(commit.moduleId)!);
          return commit;
        }
        const label = state.labelById(id);
        if (label) {
          readable(user, state.moduleById(label.moduleId)!);
          return state.commitById(label.commitId)!;
        }
        const m = state.moduleById(id);
        if (m) return defaultCommit(readable(user, m));
        throw new ConnectError(`no commit, label or module has the id "${raw}"`, Code.NotFound);
      }
      case "name": {
        const name = ref.value.value;
        const m = readable(user, moduleByName(name.owner, name.module));
        switch (name.child.case) {
          case "labelName":
            return commitOfName(m, name.child.value, true);
          case "ref":
            return commitOfName(m, name.child.value, false);
          default:
            return defaultCommit(m);
        }
      }
      default:
        throw new ConnectError("a resource reference needs an id or a name", Code.InvalidArgument);
    }
  }

  return { now, closure, readable, moduleByName, moduleOfRef, defaultCommit, commitOfName, commitOfRef };
}

/** Labels, resources and owners by reference, on top of `referenceQueries`. */
function resourceQueries(api: ModuleApiContext, refs: ReturnType<typeof referenceQueries>) {
  const { state, access } = api;
  const { readable, moduleByName, commitOfRef } = refs;

  function toLabel(l: LabelData): Label {
    const m = state.moduleById(l.moduleId)!;
    return create(LabelSchema, {
      id: l.id,
      createTime: ts(l.createTime),
      updateTime: ts(l.updateTime),
      name: l.name,
      ownerId: m.ownerId,
      moduleId: m.id,
      commitId: l.commitId,
      updatedByUserId: l.updatedBy ? ownerIdFor(l.updatedBy) : "",
      commitCheckState: { status: CommitCheckStatus.DISABLED, updateTime: ts(l.updateTime) },
    });
  }

  function labelOfRef(user: RegistryUser, ref: LabelRef | undefined): LabelData {
    switch (ref?.value.case) {
      case "id": {
        const label = state.labelById(normalizeId(ref.value.value) ?? ref.value.value);
        if (!label) throw new ConnectError(`label with id "${ref.value.value}" was not found`, Code.NotFound);
        readable(user, state.moduleById(label.moduleId)!);
        return label;
      }
      case "name": {
        const name = ref.value.value;
        const m = readable(user, moduleByName(name.owner, name.module));
        const label = state.label(m.id, name.label);
        if (!label) {
          throw new ConnectError(
            `label "${name.label}" was not found in module ${moduleName(m)}`,
            Code.NotFound,
          );
        }
        return label;
      }
      default:
        throw new ConnectError("a label reference needs an id or a name", Code.InvalidArgument);
    }
  }

  /**
   * What a List or GetResources call's reference names: a whole module (no label or commit in it), a
   * label, or a commit; `commitOfRef`'s rules otherwise.
   */
  function resourceOf(
    user: RegistryUser,
    ref: ResourceRef | undefined,
  ): { module: ModuleData; label?: LabelData; commit?: CommitData } {
    if (ref?.value.case === "id") {
      const id = normalizeId(ref.value.value) ?? ref.value.value;
      const m = state.moduleById(id);
      if (m) return { module: readable(user, m) };
      const label = state.labelById(id);
      if (label) {
        return { module: readable(user, state.moduleById(label.moduleId)!), label };
      }
    }
    // No label or commit, or an empty one (as buf sends a reference without `:ref`): the module.
    if (ref?.value.case === "name" && !ref.value.value.child.value) {
      const name = ref.value.value;
      return { module: readable(user, moduleByName(name.owner, name.module)) };
    }
    const commit = commitOfRef(user, ref);
    const module = state.moduleById(commit.moduleId)!;
    const child = ref?.value.case === "name" ? ref.value.value.child : undefined;
    // A label named by the reference (not a commit id that resolved to itself).
    const labelName =
      child?.case === "labelName" || (child?.case === "ref" && child.value !== commit.id)
        ? child.value
        : undefined;
    const label = labelName === undefined ? undefined : state.label(module.id, labelName);
    return label ? { module, label, commit } : { module, commit };
  }

  function ownerOfRef(ref: OwnerRef | undefined): OwnerInfo {
    switch (ref?.value.case) {
      case "id": {
        const o = access.ownerById(normalizeId(ref.value.value) ?? ref.value.value);
        if (!o) throw new ConnectError(`owner with id "${ref.value.value}" was not found`, Code.NotFound);
        return o;
      }
      case "name": {
        const o = access.owner(ref.value.value);
        if (!o) throw new ConnectError(`owner "${ref.value.value}" was not found`, Code.NotFound);
        return o;
      }
      default:
        throw new ConnectError("an owner reference needs an id or a name", Code.InvalidArgument);
    }
  }

  return { toLabel, labelOfRef, resourceOf, ownerOfRef };
}

function registerModuleService(router: ConnectRouter, api: ModuleApiContext, q: ModuleQueries): void {
  const { state, access } = api;
  const { now, readable, moduleOfRef, ownerOfRef } = q;
  router.service(ModuleService, {
    async getModules(req, ctx) {
      const user = api.caller(ctx);
      checkCount(req.moduleRefs.length, "module reference");
      const modules = req.moduleRefs.map((ref) => toModule(readable(user, moduleOfRef(ref))));
      await persist(state.barrier());
      return { modules };
    },
    async createModules(req, ctx) {
      const user = api.caller(ctx);
      checkCount(req.values.length, "value");
      const time = now().toISOString();
      const created: ModuleData[] = [];
      for (const v of req.values) {
        let ownerName: string;
        if (v.ownerRef?.value.case === "id") ownerName = ownerOfRef(v.ownerRef).name;
        else if (v.ownerRef?.value.case === "name") ownerName = v.ownerRef.value.value;
        else throw new ConnectError("owner_ref is required", Code.InvalidArgument);
        if (!access.owner(ownerName) && !ownerNamePattern.test(ownerName)) {
          throw new ConnectError(
            `owner name "${ownerName}" is not valid: 2 to 32 lowercase letters, digits and hyphens, starting with a letter`,
            Code.InvalidArgument,
          );
        }
        if (v.name.length < 2 || v.name.length > 100 || !moduleNamePattern.test(v.name)) {
          throw new ConnectError(
            `module name "${v.name}" is not valid: 2 to 100 lowercase letters, digits, ".", "-" and "_", starting with a letter or digit`,
            Code.InvalidArgument,
          );
        }
        if (v.defaultLabelName.length > 250 || /\s/.test(v.defaultLabelName)) {
          throw new ConnectError(
            `default label name "${v.defaultLabelName}" is not valid`,
            Code.InvalidArgument,
          );
        }
        const refusal = access.createRefusal(user, ownerName);
        if (refusal) throw new ConnectError(refusal, Code.PermissionDenied);
        const full = `${ownerName}/${v.name}`;
        if (state.module(ownerName, v.name) || created.some((m) => moduleName(m) === full)) {
          throw new ConnectError(`module ${full} already exists`, Code.AlreadyExists);
        }
        created.push({
          id: newId(),
          ownerId: ownerIdFor(ownerName),
          owner: ownerName,
          name: v.name,
          visibility: v.visibility === ModuleVisibility.PUBLIC ? "public" : "private",
          state: "active",
          description: v.description,
          url: v.url,
          defaultLabel: v.defaultLabelName || "main",
          createTime: time,
          updateTime: time,
          createdBy: user.name,
        });
      }
      await persist(state.commit(created.map((module) => ({ t: "module", module }))));
      return { modules: created.map(toModule) };
    },
  });
}

function registerOwnerService(router: ConnectRouter, api: ModuleApiContext, q: ModuleQueries): void {
  const { state } = api;
  const { ownerOfRef } = q;
  router.service(OwnerService, {
    async getOwners(req) {
      checkCount(req.ownerRefs.length, "owner reference");
      const owners = req.ownerRefs.map((ref) => toOwner(ownerOfRef(ref)));
      await persist(state.barrier());
      return { owners };
    },
  });
}

function registerCommitService(router: ConnectRouter, api: ModuleApiContext, q: ModuleQueries): void {
  const { state } = api;
  const { commitOfRef, resourceOf } = q;
  router.service(CommitService, {
    async getCommits(req, ctx) {
      const user = api.caller(ctx);
      checkCount(req.resourceRefs.length, "resource reference");
      const commits = req.resourceRefs.map((ref) => toCommit(commitOfRef(user, ref)));
      await persist(state.barrier());
      return { commits };
    },
    async listCommits(req, ctx) {
      const user = api.caller(ctx);
      const { module, commit } = resourceOf(user, req.resourceRef);
      let commits = commit ? [commit] : [...state.commitsOf(module.id)];
      const query = req.idQuery.replaceAll("-", "").toLowerCase();
      if (query) commits = commits.filter((c) => c.id.startsWith(query));
      if (req.order !== ListCommitsRequest_Order.CREATE_TIME_ASC) commits.reverse();
      const { next, items } = page(commits, req.pageSize, req.pageToken);
      await persist(state.barrier());
      return { nextPageToken: next, commits: items.map(toCommit) };
    },
  });
}

function registerResourceService(router: ConnectRouter, api: ModuleApiContext, q: ModuleQueries): void {
  const { state } = api;
  const { toLabel, resourceOf } = q;
  router.service(ResourceService, {
    async getResources(req, ctx) {
      const user = api.caller(ctx);
      checkCount(req.resourceRefs.length, "resource reference");
      const resources = req.resourceRefs.map((ref): Resource => {
        const { module, label, commit } = resourceOf(user, ref);
        if (label) return create(ResourceSchema, { value: { case: "label", value: toLabel(label) } });
        if (commit) return create(ResourceSchema, { value: { case: "commit", value: toCommit(commit) } });
        return create(ResourceSchema, { value: { case: "module", value: toModule(module) } });
      });
      await persist(state.barrier());
      return { resources };
    },
  });
}

function registerLabelService(router: ConnectRouter, api: ModuleApiContext, q: ModuleQueries): void {
  const { state } = api;
  const { toLabel, labelOfRef, resourceOf } = q;
  router.service(LabelService, {
    async listLabels(req, ctx) {
      const user = api.caller(ctx);
      const { module, label, commit } = resourceOf(user, req.resourceRef);
      let labels = label
        ? [label]
        : state.labelsOf(module.id).filter((l) => !commit || l.commitId === commit.id);
      // Labels are never archived here; every one has checks disabled.
      if (req.archiveFilter === ListLabelsRequest_ArchiveFilter.ARCHIVED_ONLY) labels = [];
      if (
        req.commitCheckStatuses.length > 0 &&
        !req.commitCheckStatuses.includes(CommitCheckStatus.DISABLED)
      ) {
        labels = [];
      }
      if (req.nameQuery) labels = labels.filter((l) => l.name.includes(req.nameQuery));
      const byUpdate =
        req.order === ListLabelsRequest_Order.UPDATE_TIME_DESC ||
        req.order === ListLabelsRequest_Order.UPDATE_TIME_ASC;
      const ascending =
        req.order === ListLabelsRequest_Order.CREATE_TIME_ASC ||
        req.order === ListLabelsRequest_Order.UPDATE_TIME_ASC;
      const key = (l: LabelData) => (byUpdate ? l.updateTime : l.createTime);
      labels = [...labels].sort((a, b) => key(a).localeCompare(key(b)) || a.name.localeCompare(b.name));
      if (!ascending) labels.reverse();
      const { next, items } = page(labels, req.pageSize, req.pageToken);
      await persist(state.barrier());
      return { nextPageToken: next, labels: items.map(toLabel) };
    },
    async listLabelHistory(req, ctx) {
      const user = api.caller(ctx);
      const label = labelOfRef(user, req.labelRef);
      let history = state.labelHistoryOf(label.id).map((l) => state.commitById(l.commitId)!);
      if (req.onlyCommitsWithChangedDigests) {
        history = history.filter((c, i) => i === 0 || Buffer.compare(c.digest, history[i - 1].digest) !== 0);
      }
      if (req.order !== ListLabelHistoryRequest_Order.ASC) history.reverse();
      if (req.startCommitId) {
        const start = normalizeId(req.startCommitId) ?? req.startCommitId;
        const at = history.findIndex((c) => c.id === start);
        if (at < 0) {
          throw new ConnectError(
            `commit "${req.startCommitId}" is not in the history of label "${label.name}"`,
            Code.NotFound,
          );
        }
        history = history.slice(at);
      }
      if (
        req.commitCheckStatuses.length > 0 &&
        !req.commitCheckStatuses.includes(CommitCheckStatus.DISABLED)
      ) {
        history = [];
      }
      const { next, items } = page(history, req.pageSize, req.pageToken);
      await persist(state.barrier());
      return {
        nextPageToken: next,
        values: items.map((c) => ({
          commit: toCommit(c),
          commitCheckState: { status: CommitCheckStatus.DISABLED, updateTime: ts(c.createTime) },
        })),
      };
    },
  });
}

function registerGraphService(router: ConnectRouter, api: ModuleApiContext, q: ModuleQueries): void {
  const { state } = api;
  const { closure, commitOfRef } = q;
  router.service(GraphService, {
    async getGraph(req, ctx) {
      const user = api.caller(ctx);
      checkCount(req.resourceRefs.length, "resource reference");
      const roots = req.resourceRefs.map((ref) => commitOfRef(user, ref));
      const all = new Map<string, CommitData>();
      for (const root of roots) {
        all.set(root.id, root);
        for (const dep of closure(root)) all.set(dep.id, dep);
      }
      const edges = [];
      for (const c of all.values()) {
        for (const to of c.deps) {
          edges.push({ fromNode: { commitId: c.id }, toNode: { commitId: to } });
        }
      }
      await persist(state.barrier());
      return { graph: { commits: [...all.values()].map(toCommit), edges } };
    },
  });
}

function registerDownloadService(router: ConnectRouter, api: ModuleApiContext, q: ModuleQueries): void {
  const { state } = api;
  const { commitOfRef } = q;
  router.service(DownloadService, {
    async download(req, ctx) {
      const user = api.caller(ctx);
      checkCount(req.values.length, "value");
      const contents = req.values.map((v) => {
        const commit = commitOfRef(user, v.resourceRef);
        const kinds = new Set(
          v.fileTypes.map((t) =>
            t === FileType.PROTO
              ? "proto"
              : t === FileType.DOC
                ? "doc"
                : t === FileType.LICENSE
                  ? "license"
                  : "",
          ),
        );
        let files = commit.files.filter((f) => kinds.size === 0 || kinds.has(moduleFileKind(f.path) ?? ""));
        if (v.paths.length > 0) {
          const wanted = v.paths.map((p) => p.replace(/\/+$/, ""));
          for (const p of wanted) {
            if (!v.pathsAllowNotExist && !files.some((f) => f.path === p || f.path.startsWith(`${p}/`))) {
              throw new ConnectError(`path "${p}" matches no file of commit ${commit.id}`, Code.NotFound);
            }
          }
          files = files.filter((f) => wanted.some((p) => f.path === p || f.path.startsWith(`${p}/`)));
        }
        return { commit: toCommit(commit), files: files.map((f) => ({ path: f.path, content: f.content })) };
      });
      await persist(state.barrier());
      return { contents };
    },
  });
}

function registerUploadService(router: ConnectRouter, api: ModuleApiContext, q: ModuleQueries): void {
  const { state, access } = api;
  const { now, closure, readable, moduleOfRef } = q;
  router.service(UploadService, {
    async upload(req, ctx) {
      const user = api.caller(ctx);
      if (req.contents.length === 0)
        throw new ConnectError("give at least one content", Code.InvalidArgument);
      const contents = req.contents.map((c) => {
        const module = moduleOfRef(c.moduleRef);
        const role = access.roleOn(user, module);
        if (!role) {
          throw new ConnectError(
            `user ${user.name} may not push to ${moduleName(module)}: pushing needs the member or Admin role; add "${user.name}" to its "members" in the registry config`,
            Code.PermissionDenied,
          );
        }
        return { module, files: checkFiles(moduleName(module), c.files), content: c };
      });
      const names = new Set<string>();
      for (const c of contents) {
        if (names.has(c.module.id)) {
          throw new ConnectError(
            `module ${moduleName(c.module)} appears twice in one push`,
            Code.InvalidArgument,
          );
        }
        names.add(c.module.id);
      }
      const depCommits = req.depCommitIds.map((raw) => {
        const commit = state.commitById(normalizeId(raw) ?? raw);
        if (!commit) throw new ConnectError(`dependency commit "${raw}" was not found`, Code.NotFound);
        readable(user, state.moduleById(commit.moduleId)!);
        return commit;
      });
      let plan: ReturnType<typeof planUpload>;
      try {
        plan = planUpload(contents, depCommits, closure);
      } catch (err) {
        if (err instanceof UploadPlanError) throw new ConnectError(err.message, Code.InvalidArgument);
        throw err;
      }
      const time = now().toISOString();
      const changes: Change[] = [];
      const results: CommitData[] = new Array(contents.length);
      const fresh: number[] = [];
      const moved: LabelData[][] = contents.map(() => []);
      for (const i of plan.order) {
        const { module, files, content } = contents[i];
        const direct = [...plan.contentDeps[i].map((j) => results[j].id), ...plan.commitDeps[i]];
        const deps = new Map<string, CommitData>();
        for (const id of direct) {
          const c = results.find((r) => r?.id === id) ?? state.commitById(id)!;
          deps.set(c.id, c);
          for (const d of closure(c)) deps.set(d.id, d);
        }
        const digest = b5Digest(
          files,
          [...deps.values()].map((d) => d.digest),
        );
        let commit = state.commitByDigest(module.id, digest);
        if (!commit) {
          commit = {
            id: newId(),
            moduleId: module.id,
            ownerId: module.ownerId,
            createTime: time,
            digest,
            files,
            deps: direct,
            createdBy: user.name,
            sourceControlUrl: content.sourceControlUrl,
          };
          changes.push({ t: "commit", commit });
          fresh.push(i);
        }
        results[i] = commit;
        for (const name of labelNames(state, module, content.scopedLabelRefs)) {
          const existing = state.label(module.id, name);
          if (existing?.commitId === commit.id) continue;
          const label: LabelData = {
            id: existing?.id ?? newId(),
            moduleId: module.id,
            name,
            commitId: commit.id,
            createTime: existing?.createTime ?? time,
            updateTime: time,
            updatedBy: user.name,
          };
          changes.push({ t: "label", label });
          moved[i].push(label);
        }
      }
      await persist(state.commit(changes));
      for (const i of fresh) api.onPush(contents[i].module, results[i], moved[i], user);
      return { commits: results.map(toCommit) };
    },
  });
}

/** The labels a content moves: those it names (by name or id), else the module's default label. */
function labelNames(state: RegistryState, module: ModuleData, refs: readonly ScopedLabelRef[]): string[] {
  if (refs.length === 0) return [module.defaultLabel];
  const names = new Set<string>();
  for (const ref of refs) {
    switch (ref.value.case) {
      case "name": {
        const name = ref.value.value;
        if (!name || name.length > 250 || /\s/.test(name)) {
          throw new ConnectError(
            `label name "${name}" is not valid (1 to 250 characters, no spaces)`,
            Code.InvalidArgument,
          );
        }
        names.add(name);
        break;
      }
      case "id": {
        const label = state.labelById(normalizeId(ref.value.value) ?? ref.value.value);
        if (!label || label.moduleId !== module.id) {
          throw new ConnectError(
            `label with id "${ref.value.value}" was not found in ${moduleName(module)}`,
            Code.NotFound,
          );
        }
        names.add(label.name);
        break;
      }
      default:
        throw new ConnectError("a label reference needs an id or a name", Code.InvalidArgument);
    }
  }
  return [...names];
}

/**
 * Checks the files of an uploaded module: relative paths without "." or ".." parts, no duplicates, at
 * least one .proto file, only module files. Of several doc files only the one that counts is kept.
 */
function checkFiles(module: string, files: readonly { path: string; content: Uint8Array }[]): ModuleFile[] {
  const seen = new Set<string>();
  for (const f of files) {
    const p = f.path;
    if (
      !p ||
      p.length > 4096 ||
      p.startsWith("/") ||
      p.includes("\\") ||
      p.split("/").some((part) => part === "" || part === "." || part === "..")
    ) {
      throw new ConnectError(
        `${module}: file path "${p}" is not valid (relative, "/"-separated, without "." or ".." parts)`,
        Code.InvalidArgument,
      );
    }
    if (seen.has(p)) throw new ConnectError(`${module}: file "${p}" appears twice`, Code.InvalidArgument);
    seen.add(p);
    if (!moduleFileKind(p)) {
      throw new ConnectError(
        `${module}: "${p}" is not a module file (.proto files, LICENSE, and one of buf.md, README.md, README.markdown)`,
        Code.InvalidArgument,
      );
    }
  }
  if (!files.some((f) => moduleFileKind(f.path) === "proto")) {
    throw new ConnectError(`${module}: the upload has no .proto file`, Code.InvalidArgument);
  }
  return selectModuleFiles(files).map((f) => ({ path: f.path, content: Buffer.from(f.content) }));
}
