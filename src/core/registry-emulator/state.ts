// The emulator's state: modules (the repositories of the webhook API), their commits with content,
// labels, webhooks, and the content-less commits of `protocall registry push`. Held in memory with the
// indexes the RPCs need, and made durable through the journal (journal.ts): a change is applied in
// memory and appended to the journal, and the caller answers only once the append is on disk. If a
// write fails, the state is rebuilt from the file, so memory never keeps what the disk lost.
//
// Without a state file everything stays in memory. A state file of the older JSON form (one object
// rewritten per change) is migrated to the journal when opened.
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ModuleFile } from "../registry/b5-digest";
import { Journal, type JournalRecord, scanJournal } from "./journal";

export interface StoredWebhook {
  webhookId: string;
  /** WebhookEvent number. */
  event: number;
  owner: string;
  repository: string;
  callbackUrl: string;
  createTime: string;
  updateTime: string;
}

export interface ModuleData {
  readonly id: string;
  readonly ownerId: string;
  readonly owner: string;
  readonly name: string;
  readonly visibility: "public" | "private";
  readonly state: "active" | "deprecated";
  readonly description: string;
  readonly url: string;
  readonly defaultLabel: string;
  readonly createTime: string;
  readonly updateTime: string;
  /** The user who created it through the module API (an Admin of it); empty for configured ones. */
  readonly createdBy: string;
}

export interface CommitData {
  readonly id: string;
  readonly moduleId: string;
  readonly ownerId: string;
  readonly createTime: string;
  /** The b5 digest (64 bytes). */
  readonly digest: Uint8Array;
  readonly files: readonly ModuleFile[];
  /** Commit ids of its direct dependencies. */
  readonly deps: readonly string[];
  /** Name of the user who pushed it. */
  readonly createdBy: string;
  readonly sourceControlUrl: string;
}

export interface LabelData {
  readonly id: string;
  readonly moduleId: string;
  readonly name: string;
  readonly commitId: string;
  readonly createTime: string;
  readonly updateTime: string;
  readonly updatedBy: string;
}

/** One change, as applied in memory and written to the journal. */
export type Change =
  | { readonly t: "module"; readonly module: ModuleData }
  | { readonly t: "commit"; readonly commit: CommitData }
  | { readonly t: "label"; readonly label: LabelData }
  | { readonly t: "webhook"; readonly webhook: StoredWebhook }
  | { readonly t: "webhook-deleted"; readonly webhookId: string }
  /** A content-less commit of `protocall registry push` (RepositoryCommit as protobuf JSON). */
  | { readonly t: "alpha-commit"; readonly moduleId: string; readonly commit: unknown };

/** A new id: a UUID written as 32 lowercase hex digits, as the registry writes ids. */
export function newId(): string {
  return randomUUID().replaceAll("-", "");
}

/** The id of the owner (user or organization) `name`: derived from the name, so stable without state. */
export function ownerIdFor(name: string): string {
  const h = createHash("sha256").update(`protocall-registry-owner\0${name}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50; // UUID version 5 (name-based) and the RFC 4122 variant
  h[8] = (h[8] & 0x3f) | 0x80;
  return h.subarray(0, 16).toString("hex");
}

/** Writes a commit id in the registry's form (dashless, lowercase); undefined if it is not a UUID. */
export function normalizeId(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  if (/^[0-9a-f]{32}$/.test(t)) return t;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(t)) return t.replaceAll("-", "");
  return undefined;
}

function toRecord(change: Change): JournalRecord {
  if (change.t !== "commit") return { json: change };
  const { files, digest, ...rest } = change.commit;
  return {
    json: {
      t: "commit",
      commit: {
        ...rest,
        digest: Buffer.from(digest).toString("hex"),
        files: files.map((f) => ({ path: f.path, size: f.content.length })),
      },
    },
    blob: Buffer.concat(files.map((f) => f.content)),
  };
}

function fromRecord(record: JournalRecord): Change {
  const json = record.json as { t: string; commit?: Record<string, unknown> };
  if (json.t !== "commit") return json as Change;
  const c = json.commit as { digest: string; files: { path: string; size: number }[] } & Record<
    string,
    unknown
  >;
  const blob = record.blob ?? new Uint8Array(0);
  let at = 0;
  const files = c.files.map((f) => {
    const content = blob.subarray(at, at + f.size);
    at += f.size;
    return { path: f.path, content };
  });
  return {
    t: "commit",
    commit: { ...(c as unknown as CommitData), digest: Buffer.from(c.digest, "hex"), files },
  };
}

/** The older state file: one JSON object with webhooks and per-repository commit lists. */
interface StateDataV1 {
  version: 1;
  webhooks: StoredWebhook[];
  repositories: Record<string, { id: string; createTime: string; updateTime: string; commits: unknown[] }>;
}

function migrateV1(data: Buffer): JournalRecord[] | undefined {
  if (data[0] !== 0x7b) return undefined; // "{": the older JSON form
  let old: StateDataV1;
  try {
    old = JSON.parse(data.toString("utf8")) as StateDataV1;
  } catch {
    return undefined;
  }
  if (old.version !== 1 || !Array.isArray(old.webhooks) || typeof old.repositories !== "object") {
    return undefined;
  }
  const changes: Change[] = [];
  for (const [key, repo] of Object.entries(old.repositories)) {
    const slash = key.indexOf("/");
    const owner = key.slice(0, slash);
    const module: ModuleData = {
      id: repo.id,
      ownerId: ownerIdFor(owner),
      owner,
      name: key.slice(slash + 1),
      visibility: "private",
      state: "active",
      description: "",
      url: "",
      defaultLabel: "main",
      createTime: repo.createTime,
      updateTime: repo.updateTime,
      createdBy: "",
    };
    changes.push({ t: "module", module });
    for (const commit of repo.commits) changes.push({ t: "alpha-commit", moduleId: repo.id, commit });
  }
  for (const webhook of old.webhooks) changes.push({ t: "webhook", webhook });
  return changes.map(toRecord);
}

export class RegistryState {
  readonly webhooks: StoredWebhook[] = [];
  private readonly modulesById = new Map<string, ModuleData>();
  private readonly modulesByName = new Map<string, ModuleData>();
  private readonly commitsById = new Map<string, CommitData>();
  private readonly commitsByModule = new Map<string, CommitData[]>();
  /** Per module: digest (hex) → commit, and commit id → position in the module's history (from 1). */
  private readonly commitsByDigest = new Map<string, Map<string, CommitData>>();
  private readonly positions = new Map<string, number>();
  private readonly labelsByModule = new Map<string, Map<string, LabelData>>();
  private readonly labelsById = new Map<string, LabelData>();
  /** Per label id: each commit it pointed at, oldest first (a move to the same commit is not new). */
  private readonly labelHistory = new Map<string, LabelData[]>();
  private readonly alphaCommits = new Map<string, unknown[]>();
  private recordCount = 0;

  private constructor(private journal: Journal | undefined) {}

  /** Opens the state file (created when missing), or an in-memory state when no file is given. */
  static async open(file: string | undefined): Promise<RegistryState> {
    if (!file) return new RegistryState(undefined);
    const state = new RegistryState(undefined);
    const { journal, records } = await Journal.open(
      file,
      () => {
        // A failed write: memory holds changes the disk does not; the journal has been cut back to
        // its last good record, so rebuild from it.
        state.reload(file);
      },
      migrateV1,
    );
    state.journal = journal;
    state.load(records);
    if (state.recordCount > 2 * state.liveCount() + 1000) {
      await journal.rewrite(state.snapshot());
      state.recordCount = state.liveCount();
    }
    return state;
  }

  private reload(file: string): void {
    this.clear();
    try {
      this.load(scanJournal(readFileSync(file)).records);
    } catch {
      // The file cannot be read either: the state stays empty, and every later write fails too.
    }
  }

  private clear(): void {
    this.webhooks.length = 0;
    for (const m of [
      this.modulesById,
      this.modulesByName,
      this.commitsById,
      this.commitsByModule,
      this.commitsByDigest,
      this.positions,
      this.labelsByModule,
      this.labelsById,
      this.labelHistory,
      this.alphaCommits,
    ] as Map<unknown, unknown>[])
      m.clear();
    this.recordCount = 0;
  }

  private load(records: readonly JournalRecord[]): void {
    for (const r of records) this.apply(fromRecord(r));
  }

  private liveCount(): number {
    let alpha = 0;
    for (const list of this.alphaCommits.values()) alpha += list.length;
    let labels = 0;
    for (const history of this.labelHistory.values()) labels += history.length;
    return this.modulesById.size + this.commitsById.size + labels + this.webhooks.length + alpha;
  }

  /** Every live object as records, for compaction. */
  private snapshot(): JournalRecord[] {
    const changes: Change[] = [];
    for (const module of this.modulesById.values()) changes.push({ t: "module", module });
    for (const commit of this.commitsById.values()) changes.push({ t: "commit", commit });
    // Every commit a label pointed at, in order, so its history survives compaction.
    for (const history of this.labelHistory.values()) {
      for (const label of history) changes.push({ t: "label", label });
    }
    for (const webhook of this.webhooks) changes.push({ t: "webhook", webhook });
    for (const [moduleId, list] of this.alphaCommits)
      for (const commit of list) changes.push({ t: "alpha-commit", moduleId, commit });
    return changes.map(toRecord);
  }

  private apply(change: Change): void {
    this.recordCount++;
    switch (change.t) {
      case "module": {
        const m = change.module;
        this.modulesById.set(m.id, m);
        this.modulesByName.set(`${m.owner}/${m.name}`, m);
        break;
      }
      case "commit": {
        const c = change.commit;
        if (this.commitsById.has(c.id)) break;
        this.commitsById.set(c.id, c);
        let list = this.commitsByModule.get(c.moduleId);
        if (!list) this.commitsByModule.set(c.moduleId, (list = []));
        list.push(c);
        this.positions.set(c.id, list.length);
        let digests = this.commitsByDigest.get(c.moduleId);
        if (!digests) this.commitsByDigest.set(c.moduleId, (digests = new Map()));
        const hex = Buffer.from(c.digest).toString("hex");
        if (!digests.has(hex)) digests.set(hex, c);
        break;
      }
      case "label": {
        const l = change.label;
        let labels = this.labelsByModule.get(l.moduleId);
        if (!labels) this.labelsByModule.set(l.moduleId, (labels = new Map()));
        labels.set(l.name, l);
        this.labelsById.set(l.id, l);
        const history = this.labelHistory.get(l.id);
        if (!history) this.labelHistory.set(l.id, [l]);
        else if (history[history.length - 1].commitId !== l.commitId) history.push(l);
        else history[history.length - 1] = l; // the same commit again: the latest record stands
        break;
      }
      case "webhook":
        this.webhooks.push(change.webhook);
        break;
      case "webhook-deleted": {
        const i = this.webhooks.findIndex((w) => w.webhookId === change.webhookId);
        if (i >= 0) this.webhooks.splice(i, 1);
        break;
      }
      case "alpha-commit": {
        const list = this.alphaCommits.get(change.moduleId);
        if (list) list.push(change.commit);
        else this.alphaCommits.set(change.moduleId, [change.commit]);
        break;
      }
    }
  }

  /**
   * Applies changes in memory at once and writes them; resolves once they are on disk. A caller
   * acknowledges nothing before that. Without a state file it resolves at once.
   */
  commit(changes: readonly Change[]): Promise<void> {
    for (const c of changes) this.apply(c);
    if (!this.journal) return Promise.resolve();
    return this.journal.append(changes.map(toRecord));
  }

  /** Resolves once every change made so far is on disk (a read answers after it, never before). */
  barrier(): Promise<void> {
    return this.journal ? this.journal.barrier() : Promise.resolve();
  }

  /** Number of disk syncs so far (for tests and benchmarks). */
  syncCount(): number {
    return this.journal?.syncCount ?? 0;
  }

  async close(): Promise<void> {
    await this.journal?.close();
  }

  module(owner: string, name: string): ModuleData | undefined {
    return this.modulesByName.get(`${owner}/${name}`);
  }

  moduleById(id: string): ModuleData | undefined {
    return this.modulesById.get(id);
  }

  modules(): IterableIterator<ModuleData> {
    return this.modulesById.values();
  }

  commitById(id: string): CommitData | undefined {
    return this.commitsById.get(id);
  }

  /** A module's commits, oldest first. */
  commitsOf(moduleId: string): readonly CommitData[] {
    return this.commitsByModule.get(moduleId) ?? [];
  }

  /** The module's first commit with this digest (a push of unchanged content returns it). */
  commitByDigest(moduleId: string, digest: Uint8Array): CommitData | undefined {
    return this.commitsByDigest.get(moduleId)?.get(Buffer.from(digest).toString("hex"));
  }

  /** A commit's position in its module's history, 1 for the first. */
  position(commitId: string): number {
    return this.positions.get(commitId) ?? 0;
  }

  label(moduleId: string, name: string): LabelData | undefined {
    return this.labelsByModule.get(moduleId)?.get(name);
  }

  labelById(id: string): LabelData | undefined {
    return this.labelsById.get(id);
  }

  /** The label as it was each time it moved to another commit, oldest first. */
  labelHistoryOf(labelId: string): readonly LabelData[] {
    return this.labelHistory.get(labelId) ?? [];
  }

  labelsOf(moduleId: string): readonly LabelData[] {
    return [...(this.labelsByModule.get(moduleId)?.values() ?? [])];
  }

  /** The content-less commits recorded by `protocall registry push` (protobuf JSON), oldest first. */
  alphaCommitsOf(moduleId: string): readonly unknown[] {
    return this.alphaCommits.get(moduleId) ?? [];
  }
}
