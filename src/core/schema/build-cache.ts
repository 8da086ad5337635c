// Caches workspace builds by a hash of their inputs — every .proto file and buf config file under the
// hashed directories (path and content), the build options, and the compiler's identity — in memory
// and on disk, so an unchanged workspace is never compiled twice.
import { createHash, randomBytes } from "node:crypto";
import type { Dirent } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { isPrivateDir } from "../private-dir";

/** The files that decide what buf builds, besides the .proto files themselves. */
const configFiles = new Set(["buf.yaml", "buf.work.yaml", "buf.lock"]);

/**
 * The default on-disk cache directory: `<os tmpdir>/protocall-build-cache-<uid>`, one per user, so
 * that in a shared temp directory no one else's directory is taken for ours.
 */
export function defaultBuildCacheDir(): string {
  const uid = process.getuid?.();
  return join(tmpdir(), uid === undefined ? "protocall-build-cache" : `protocall-build-cache-${uid}`);
}

export interface BuildKeyInput {
  /** Directories whose .proto and buf config files are inputs (absolute). */
  readonly dirs: readonly string[];
  /** The compiler binary (absolute path); its size and modification time stand for its version. */
  readonly compiler: string;
  /** Everything else that changes the output: the directory built, options, paths. */
  readonly options: unknown;
}

/**
 * Hashes the inputs of a build. Reads every .proto and buf config file under `dirs` (skipping `.git`),
 * so the key changes whenever a file is added, removed, renamed or edited.
 */
export async function buildKey(input: BuildKeyInput): Promise<string> {
  const hash = createHash("sha256");
  hash.update("protocall-build-v1\0");
  const compiler = await stat(input.compiler).catch(() => undefined);
  hash.update(`${input.compiler}\0${compiler?.size ?? -1}\0${compiler?.mtimeMs ?? -1}\0`);
  hash.update(`${JSON.stringify(input.options)}\0`);
  for (const dir of [...new Set(input.dirs)].sort()) {
    hash.update(`dir\0${dir}\0`);
    const files = await listInputFiles(dir);
    for (const file of files) {
      const content = await readFile(join(dir, file)).catch(() => undefined);
      if (content === undefined) continue;
      hash.update(`${file}\0${content.length}\0`);
      hash.update(content);
    }
  }
  return hash.digest("hex");
}

/** Relative paths (forward slashes, sorted) of the .proto and buf config files under `dir`. */
async function listInputFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  async function walk(abs: string): Promise<void> {
    const st = await stat(abs).catch(() => undefined);
    if (!st) return;
    const id = `${st.dev}:${st.ino}`;
    if (seen.has(id)) return; // a symlink cycle
    seen.add(id);
    let entries: Dirent[];
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(abs, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        const target = await stat(path).catch(() => undefined);
        isDir = target?.isDirectory() ?? false;
        isFile = target?.isFile() ?? false;
      }
      if (isDir) {
        if (entry.name !== ".git") await walk(path);
      } else if (isFile && (entry.name.endsWith(".proto") || configFiles.has(entry.name))) {
        out.push(relative(dir, path).split(sep).join("/"));
      }
    }
  }
  await walk(dir);
  return out.sort();
}

/** Builds kept in memory, most recently used last; bounded so a long-running editor does not grow. */
const memory = new Map<string, Uint8Array>();
const memoryLimit = 32;
/** Builds kept on disk; the least recently used beyond this are removed. */
const diskLimit = 64;

export class BuildCache {
  /** @param dir the on-disk cache directory, or false for memory only. */
  constructor(readonly dir: string | false = defaultBuildCacheDir()) {}

  /** The cached build for `key`, from memory first, then disk. */
  async get(key: string): Promise<Uint8Array | undefined> {
    const hit = memory.get(key);
    if (hit) {
      memory.delete(key);
      memory.set(key, hit);
      return hit;
    }
    if (!this.dir || !(await isPrivateDir(this.dir))) return undefined;
    try {
      const file = join(this.dir, `${key}.binpb`);
      const bytes = new Uint8Array(await readFile(file));
      const now = new Date();
      await utimes(file, now, now).catch(() => undefined); // marks it used, for pruning
      remember(key, bytes);
      return bytes;
    } catch {
      return undefined;
    }
  }

  /**
   * Stores a build in memory and, atomically (write then rename), on disk unless the directory is not
   * private (see isPrivateDir). Disk failures are ignored.
   */
  async set(key: string, bytes: Uint8Array): Promise<void> {
    remember(key, bytes);
    if (!this.dir) return;
    const target = join(this.dir, `${key}.binpb`);
    const temp = `${target}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      if (!(await isPrivateDir(this.dir))) return;
      await writeFile(temp, bytes);
      await rename(temp, target);
    } catch {
      await rm(temp, { force: true }).catch(() => undefined);
      return;
    }
    await this.prune();
  }

  /** Removes the oldest cached builds beyond the disk limit. */
  private async prune(): Promise<void> {
    if (!this.dir) return;
    const dir = this.dir;
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) =>
      /^[0-9a-f]{64}\.binpb$/.test(n),
    );
    if (names.length <= diskLimit) return;
    const dated = await Promise.all(
      names.map(async (name) => ({
        name,
        mtime: (await stat(join(dir, name)).catch(() => undefined))?.mtimeMs ?? 0,
      })),
    );
    dated.sort((a, b) => b.mtime - a.mtime);
    await Promise.all(
      dated.slice(diskLimit).map((e) => rm(join(dir, e.name), { force: true }).catch(() => undefined)),
    );
  }
}

function remember(key: string, bytes: Uint8Array): void {
  memory.delete(key);
  memory.set(key, bytes);
  while (memory.size > memoryLimit) {
    const oldest = memory.keys().next().value;
    if (oldest === undefined) break;
    memory.delete(oldest);
  }
}

/** Empties the in-memory cache (the on-disk cache is left alone). */
export function clearBuildMemoryCache(): void {
  memory.clear();
}
