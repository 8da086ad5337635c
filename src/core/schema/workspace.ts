// Finds what to build in a folder: buf workspaces and modules (buf.yaml, buf.work.yaml), and plain
// folders of .proto files, and the root a single .proto file builds within. The configuration files
// are read by buf-config.ts (a YAML parser, errors with file:line).
import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { readBufWorkYaml, readBufYaml } from "./buf-config";

/** Directories never searched for .proto files: dependencies and hidden folders (.git, .vscode…). */
function skipDir(name: string): boolean {
  return name === "node_modules" || name.startsWith(".");
}

const maxDepth = 32;

async function readDir(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

/** True when `dir` holds a v1 (or v1beta1) buf.yaml: a module on its own. A v2 file is a workspace. */
async function isV1Module(dir: string): Promise<boolean> {
  const yaml = await readBufYaml(dir);
  return yaml !== undefined && yaml.version !== "v2";
}

/** A module directory of a workspace and the directories excluded from it (relative, slash-separated). */
interface Member {
  readonly path: string;
  readonly excludes: readonly string[];
}

/**
 * When `dir` holds a buf.work.yaml or a v2 buf.yaml (a workspace spanning modules), its module
 * directories (buf.work.yaml `directories`, v2 `modules`; `.` when a v2 file lists none). Undefined
 * when `dir` is no such workspace. Throws ProtocallError (file:line) for a file buf would refuse.
 */
async function workspaceMembers(dir: string): Promise<readonly Member[] | undefined> {
  const work = await readBufWorkYaml(dir);
  if (work) return work.directories.map((path) => ({ path, excludes: [] }));
  const yaml = await readBufYaml(dir);
  return yaml?.version === "v2" ? yaml.modules : undefined;
}

/** True when `rel` (slash-separated, relative) is `base` or below it; everything is below `.`. */
function within(rel: string, base: string): boolean {
  return base === "." || rel === base || rel.startsWith(`${base}/`);
}

/**
 * True when `dir` is a workspace whose modules include `target` (a directory at or below `dir`):
 * inside a module and not in one of its excludes, or a folder that holds a module.
 */
async function workspaceIncludes(dir: string, target: string): Promise<boolean> {
  const members = await workspaceMembers(dir);
  if (!members) return false;
  if (target === dir) return true;
  const rel = toSlash(relative(dir, target));
  return members.some(
    (m) =>
      (within(rel, m.path) && !m.excludes.some((e) => within(rel, e))) ||
      (m.path !== "." && m.path.startsWith(`${rel}/`)),
  );
}

/**
 * The directories to build in `folder`, sorted: every directory with a buf.yaml or buf.work.yaml
 * (not searched further: its build covers everything below it), and for .proto files outside them,
 * the root their imports are relative to. That root is found from the package name, following buf's
 * convention that `package foo.v1` lives in `<root>/foo/v1/`; otherwise it is the file's folder.
 * Roots inside another such root are dropped. node_modules and hidden folders are skipped.
 */
export async function findWorkspaceRoots(folder: string): Promise<string[]> {
  const top = resolve(folder);
  const configRoots: string[] = [];
  const looseRoots = new Set<string>();

  async function walk(dir: string, depth: number): Promise<void> {
    const entries = await readDir(dir);
    const names = new Set(entries.map((e) => e.name));
    if (names.has("buf.yaml") || names.has("buf.work.yaml")) {
      configRoots.push(dir);
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!skipDir(entry.name) && depth < maxDepth) await walk(path, depth + 1);
      } else if (entry.name.endsWith(".proto") && (entry.isFile() || entry.isSymbolicLink())) {
        looseRoots.add(await importRootOf(path, top));
      }
    }
  }
  await walk(top, 0);

  const loose = [...looseRoots].sort();
  const keptLoose = loose.filter((r) => !loose.some((other) => other !== r && isInside(r, other)));
  return [...configRoots, ...keptLoose].sort();
}

/** True when `path` is strictly inside `dir`. */
function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep) && !/^[a-zA-Z]:/.test(rel);
}

/** The directory a loose .proto file's imports are relative to (never above `top`). */
async function importRootOf(file: string, top: string): Promise<string> {
  const dir = dirname(file);
  const text = await readFile(file, "utf8").catch(() => "");
  const pkg = /^\s*package\s+([A-Za-z_][\w.]*)\s*;/m.exec(text)?.[1];
  if (!pkg) return dir;
  const suffix = pkg.split(".");
  const parts = relative(top, dir).split(sep).filter(Boolean);
  if (parts.length < suffix.length) return dir;
  const tail = parts.slice(parts.length - suffix.length);
  if (tail.join("/") !== suffix.join("/")) return dir;
  return join(top, ...parts.slice(0, parts.length - suffix.length));
}

/**
 * The directory to build a single .proto file in, and the file's path relative to it: the nearest
 * enclosing buf.work.yaml or v2 buf.yaml workspace whose modules hold the file (not in an exclude),
 * else the nearest v1 buf.yaml module, else the file's own folder (as `buf build <file>.proto` does).
 */
export async function findBuildRoot(file: string): Promise<{ root: string; path: string }> {
  const abs = resolve(file);
  let nearestModule: string | undefined;
  let dir = dirname(abs);
  for (;;) {
    if (await workspaceIncludes(dir, dirname(abs))) return { root: dir, path: toSlash(relative(dir, abs)) };
    if (nearestModule === undefined && (await isV1Module(dir))) nearestModule = dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  const root = nearestModule ?? dirname(abs);
  return { root, path: toSlash(relative(root, abs)) };
}

/**
 * The directory whose files a build of `dir` depends on: the nearest enclosing (or same) directory
 * with a buf.work.yaml or v2 buf.yaml, because buf resolves imports across its modules; else `dir`.
 */
export async function enclosingWorkspace(dir: string): Promise<string> {
  const start = resolve(dir);
  let current = start;
  for (;;) {
    if (await workspaceIncludes(current, start)) return current;
    const parent = dirname(current);
    if (parent === current) return start;
    current = parent;
  }
}

/** The .proto files under `dir` (absolute, sorted), skipping node_modules and hidden folders. */
export async function listProtoFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(d: string, depth: number): Promise<void> {
    for (const entry of await readDir(d)) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        if (!skipDir(entry.name) && depth < maxDepth) await walk(path, depth + 1);
      } else if (entry.name.endsWith(".proto") && (await isFile(path))) {
        out.push(path);
      }
    }
  }
  await walk(resolve(dir), 0);
  return out.sort();
}

function toSlash(path: string): string {
  return path.split(sep).join("/");
}
