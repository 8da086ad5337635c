// Finds the .proto file on disk behind a schema file name (`demo/v1/greet.proto`): a schema names
// its files relative to their module or import root, which may be any folder below a build root
// (buf.yaml `modules: - path: proto`, buf.work.yaml directories, protoc include paths). The .proto
// files below the given folders are listed once; a name resolves to the file whose path ends with
// it, the shortest such path winning (the one nearest the folder).
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, sep } from "node:path";

/** Folders are searched this deep at most. */
const maxDepth = 16;
/** At most this many .proto files are listed per folder. */
const maxFiles = 100_000;

export class ProtoLocator {
  private readonly listings = new Map<string, Promise<string[]>>();

  /**
   * The absolute path of the file named `name` in the first folder (in order) that holds it;
   * undefined when none does. Names with `..` or absolute names never resolve.
   */
  async locate(name: string, folders: readonly string[]): Promise<string | undefined> {
    const parts = name.split("/");
    if (name === "" || name.startsWith("/") || parts.some((p) => p === ".." || p === "." || p === "")) {
      return undefined;
    }
    const tail = sep + parts.join(sep);
    for (const folder of folders) {
      let best: string | undefined;
      for (const path of await this.list(folder)) {
        if (path.endsWith(tail) && (best === undefined || path.length < best.length)) best = path;
      }
      if (best !== undefined) return best;
    }
    return undefined;
  }

  private list(folder: string): Promise<string[]> {
    let p = this.listings.get(folder);
    if (!p) {
      p = listProtoFiles(folder);
      this.listings.set(folder, p);
    }
    return p;
  }
}

/** The .proto files below `folder`, skipping node_modules and hidden folders. */
async function listProtoFiles(folder: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, depth: number): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (out.length >= maxFiles) return;
      if (e.isDirectory()) {
        if (depth < maxDepth && e.name !== "node_modules" && !e.name.startsWith(".")) {
          await walk(join(dir, e.name), depth + 1);
        }
      } else if (e.name.endsWith(".proto")) out.push(join(dir, e.name));
    }
  }
  await walk(folder, 0);
  return out;
}
