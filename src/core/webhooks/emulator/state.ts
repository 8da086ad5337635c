// The emulator's persistent state: webhooks and the commits of each repository. Kept in memory and
// written to the --state file after each change with an atomic replace (temporary file, fsync, rename).
import { randomUUID } from "node:crypto";
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { errorMessage, ProtocallError } from "../../errors";

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

export interface StoredRepository {
  id: string;
  ownerId: string;
  createTime: string;
  updateTime: string;
  /** RepositoryCommit messages as protobuf JSON, oldest first. */
  commits: unknown[];
}

export interface StateData {
  version: 1;
  webhooks: StoredWebhook[];
  repositories: Record<string, StoredRepository>;
}

export class RegistryState {
  private constructor(
    readonly data: StateData,
    private readonly file: string | undefined,
  ) {}

  /** Loads the state file, or starts empty when it does not exist yet (or no file is given). */
  static open(file: string | undefined): RegistryState {
    const empty: StateData = { version: 1, webhooks: [], repositories: {} };
    if (!file) return new RegistryState(empty, undefined);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return new RegistryState(empty, file);
      throw new ProtocallError(`cannot read registry state ${file}: ${errorMessage(err)}`);
    }
    try {
      const data = JSON.parse(text) as StateData;
      if (data.version !== 1 || !Array.isArray(data.webhooks) || typeof data.repositories !== "object") {
        throw new Error("unexpected content");
      }
      return new RegistryState(data, file);
    } catch (err) {
      throw new ProtocallError(
        `registry state ${file} is not a state file written by protocall (${errorMessage(err)}): move it away or pass another --state`,
      );
    }
  }

  repository(owner: string, name: string): StoredRepository {
    const key = `${owner}/${name}`;
    let repo = this.data.repositories[key];
    if (!repo) {
      const now = new Date().toISOString();
      repo = {
        id: randomUUID().replaceAll("-", ""),
        ownerId: randomUUID().replaceAll("-", ""),
        createTime: now,
        updateTime: now,
        commits: [],
      };
      this.data.repositories[key] = repo;
    }
    return repo;
  }

  private scheduled = false;

  /**
   * Schedules a durable write. Changes made in the same turn of the event loop share one write
   * (a burst of pushes costs one fsync, not one each).
   */
  save(): void {
    if (!this.file || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes the state now if a write is pending; a crash leaves the old or the new file, never a mix. */
  flush(): void {
    if (!this.file || !this.scheduled) return;
    this.scheduled = false;
    const tmp = `${this.file}.${process.pid}.tmp`;
    const fd = openSync(tmp, "w");
    try {
      writeSync(fd, JSON.stringify(this.data));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
    try {
      const dir = openSync(dirname(this.file), "r");
      fsyncSync(dir);
      closeSync(dir);
    } catch {
      // Some platforms cannot fsync a directory; the rename is still atomic.
    }
  }
}
