// Finds what to build in a folder: buf workspaces and modules (buf.yaml, buf.work.yaml), and plain
// folders of .proto files, and the root a single .proto file builds within.
import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";

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

/**
 * When `dir` holds a buf.work.yaml or a v2 buf.yaml (a workspace spanning modules), the module
 * directories it lists (`directories:` items, `- path:` entries; `.` when a v2 file lists none).
 * Undefined when `dir` is no such workspace. List items are read loosely (an `excludes:` item counts
 * too), which at worst treats a directory as a member when it is not.
 */
async function workspaceMembers(dir: string): Promise<string[] | undefined> {
  const work = await readFile(join(dir, "buf.work.yaml"), "utf8").catch(() => undefined);
  if (work !== undefined) return listItems(work);
  const yaml = await readFile(join(dir, "buf.yaml"), "utf8").catch(() => undefined);
  if (yaml === undefined || !/^version:\s*["']?v2["']?\s*(#.*)?$/m.test(yaml)) return undefined;
  const items = listItems(yaml);
  return /^modules:/m.test(yaml) && items.length > 0 ? items : ["."];
}

function listItems(text: string): string[] {
  const items: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*-\s*(?:path:\s*)?["']?([^"'#\s]+)["']?/.exec(line);
    if (m) items.push(m[1].replace(/^\.\//, "").replace(/\/+$/, "") || ".");
  }
  return items;
}

/** True when `dir` is a workspace whose modules include `target` (a directory at or below `dir`). */
async function workspaceIncludes(dir: string, target: string): Promise<boolean> {
  const members = await workspaceMembers(dir);
  if (!members) return false;
  if (target === dir) return true;
  const rel = toSlash(relative(dir, target));
  return members.some((m) => m === "." || rel === m || rel.startsWith(`${m}/`) || m.startsWith(`${rel}/`));
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
 * enclosing buf.work.yaml or v2 buf.yaml workspace, else the nearest v1 buf.yaml module, else the
 * file's own folder (as `buf build <file>.proto` does).
 */
export async function findBuildRoot(file: string): Promise<{ root: string; path: string }> {
  const abs = resolve(file);
  let nearestModule: string | undefined;
  let dir = dirname(abs);
  for (;;) {
    if (await workspaceIncludes(dir, dirname(abs))) return { root: dir, path: toSlash(relative(dir, abs)) };
    if (nearestModule === undefined && (await isFile(join(dir, "buf.yaml")))) nearestModule = dir;
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
