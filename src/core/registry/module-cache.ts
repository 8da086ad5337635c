// The on-disk cache of registry modules, keyed by commit id (a commit never changes): each commit's
// downloaded, verified files, and for a commit that was asked for by name, its compiled schema (the
// module and its dependencies as one FileDescriptorSet with source info), which later calls open
// lazily like any descriptor-set file.
//
//   <cache>/modules/v1/<remote>/<commit id>/module.json   names, digest, dependency commits
//                                          /files.binpb   the files (DownloadResponse.Content)
//                                          /schema.binpb  the compiled schema (roots only)
//
// <cache> is $PROTOCALL_CACHE_DIR, else the user's cache directory ($XDG_CACHE_HOME/protocall,
// ~/.cache/protocall, ~/Library/Caches/protocall, %LOCALAPPDATA%\protocall\cache). Writes are atomic
// and safe between processes: a commit's directory is written under a temporary name and renamed
// into place (a process that loses the race drops its copy, which is identical), the schema is
// written to a temporary file and renamed. A directory that other users can write is not used (as
// the build cache: what it holds could be anything), nor is anything cached until it was verified.
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { isPrivateDir } from "../private-dir";
import { formatB5, type ModuleFile } from "./b5-digest";

/** Protocall's cache directory for this user (see the header for the order). */
export function protocallCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PROTOCALL_CACHE_DIR) return env.PROTOCALL_CACHE_DIR;
  const home = env.HOME || homedir();
  if (process.platform === "win32") {
    return join(env.LOCALAPPDATA || join(home, "AppData", "Local"), "protocall", "cache");
  }
  if (process.platform === "darwin" && !env.XDG_CACHE_HOME)
    return join(home, "Library", "Caches", "protocall");
  return join(env.XDG_CACHE_HOME || join(home, ".cache"), "protocall");
}

/** What the cache knows about a commit besides its files. */
export interface CachedModule {
  readonly owner: string;
  readonly module: string;
  readonly commitId: string;
  /** `b5:<hex>` */
  readonly digest: string;
  /** Dependency commits, direct and transitive, each once. */
  readonly dependencies: readonly string[];
}

export class ModuleCache {
  private readonly root: string | false;
  private usable: Promise<boolean> | undefined;

  /** @param cacheDir Protocall's cache directory, or false for none (nothing is read or written). */
  constructor(cacheDir: string | false) {
    this.root = cacheDir === false ? false : join(cacheDir, "modules", "v1");
  }

  /** The directory of a commit, or undefined without a cache. */
  commitDir(remote: string, commitId: string): string | undefined {
    if (!this.root || !/^[0-9a-f]{32}$/.test(commitId)) return undefined;
    return join(this.root, remote.toLowerCase().replace(/[^a-z0-9.-]/g, "_"), commitId);
  }

  /** The cached facts of a commit, or undefined. */
  async meta(remote: string, commitId: string): Promise<CachedModule | undefined> {
    const dir = this.commitDir(remote, commitId);
    if (!dir || !(await this.ready())) return undefined;
    try {
      const m = JSON.parse(await readFile(join(dir, "module.json"), "utf8")) as CachedModule;
      return m.commitId === commitId && typeof m.digest === "string" ? m : undefined;
    } catch {
      return undefined;
    }
  }

  /** The cached files of a commit, or undefined. */
  async files(remote: string, commitId: string): Promise<ModuleFile[] | undefined> {
    const dir = this.commitDir(remote, commitId);
    if (!dir || !(await this.ready())) return undefined;
    try {
      // Loaded here: a look-up whose compiled schema is cached never reads module files.
      const { DownloadResponse_ContentSchema } = await import(
        "../../gen/buf/registry/module/v1/download_service_pb"
      );
      const content = fromBinary(DownloadResponse_ContentSchema, await readFile(join(dir, "files.binpb")));
      return content.files.map((f) => ({ path: f.path, content: f.content }));
    } catch {
      return undefined;
    }
  }

  /** The path of a commit's compiled schema when it is cached, else undefined. */
  async schemaPath(remote: string, commitId: string): Promise<string | undefined> {
    const dir = this.commitDir(remote, commitId);
    if (!dir || !(await this.ready())) return undefined;
    const path = join(dir, "schema.binpb");
    const st = await stat(path).catch(() => undefined);
    return st?.isFile() && st.size > 0 ? path : undefined;
  }

  /** Stores a verified commit (its directory appears complete or not at all). Disk failures are ignored. */
  async storeModule(
    remote: string,
    meta: Omit<CachedModule, "digest"> & { digest: Uint8Array },
    files: readonly ModuleFile[],
  ): Promise<void> {
    const dir = this.commitDir(remote, meta.commitId);
    if (!dir || !(await this.ensure())) return;
    if (await stat(join(dir, "module.json")).catch(() => undefined)) return;
    const temp = `${dir}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      const { DownloadResponse_ContentSchema } = await import(
        "../../gen/buf/registry/module/v1/download_service_pb"
      );
      await mkdir(temp, { recursive: true, mode: 0o700 });
      const content = create(DownloadResponse_ContentSchema, {
        files: files.map((f) => ({ path: f.path, content: f.content })),
      });
      await writeFile(join(temp, "files.binpb"), toBinary(DownloadResponse_ContentSchema, content));
      const json: CachedModule = { ...meta, digest: formatB5(meta.digest) };
      await writeFile(join(temp, "module.json"), `${JSON.stringify(json, null, 2)}\n`);
      await rename(temp, dir);
    } catch {
      // Another process stored the same commit first (the rename found the directory), or the disk
      // failed: either way the cache holds a complete copy or none.
    } finally {
      await rm(temp, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** Stores a commit's compiled schema (after its module). Returns its path, or undefined if not stored. */
  async storeSchema(remote: string, commitId: string, bytes: Uint8Array): Promise<string | undefined> {
    const dir = this.commitDir(remote, commitId);
    if (!dir || !(await this.ensure())) return undefined;
    const path = join(dir, "schema.binpb");
    const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(temp, bytes);
      await rename(temp, path);
      return path;
    } catch {
      await rm(temp, { force: true }).catch(() => undefined);
      return undefined;
    }
  }

  /** Whether the cache directory exists and is private (checked once). */
  private ready(): Promise<boolean> {
    if (!this.root) return Promise.resolve(false);
    this.usable ??= isPrivateDir(this.root);
    return this.usable;
  }

  /** Creates the cache directory (private) when missing; whether it can be used. */
  private async ensure(): Promise<boolean> {
    if (!this.root) return false;
    if (await this.ready()) return true;
    try {
      await mkdir(this.root, { recursive: true, mode: 0o700 });
    } catch {
      return false;
    }
    this.usable = isPrivateDir(this.root);
    return this.usable;
  }
}
