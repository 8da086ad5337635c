// The local files a `.rpc` request reads or writes: its body's includes (`< ./file.json`), `@data`,
// `@header` / `@reflect-header` files and `@output`. Includes are read here, bounded and only when
// they are regular files (a device such as /dev/zero or a FIFO would never end or never start);
// `@data` files are streamed when the request is sent. The editor checks every path against the
// workspace before it sends (it asks before reading or writing outside it); the CLI reads and writes
// where the request file says, as curl does.
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import type { CurlOptions } from "../invoke/options";

/** An included file may hold at most this many bytes (send larger data with `@data`, which streams). */
export const INCLUDE_LIMIT_BYTES = 64 * 1024 * 1024;

export interface LocalFile {
  /** Absolute path. */
  path: string;
  access: "read" | "write";
  /** What names it: `<` (an include), `@data`, `@header`, `@reflect-header`, `@output`. */
  via: string;
}

/** Why a path cannot be read as a request's data, or undefined when it is a regular file. */
function notAFile(mode: number): string | undefined {
  switch (mode & constants.S_IFMT) {
    case constants.S_IFREG:
      return undefined;
    case constants.S_IFDIR:
      return "it is a directory";
    case constants.S_IFIFO:
      return "it is a FIFO (named pipe), not a file";
    case constants.S_IFCHR:
    case constants.S_IFBLK:
      return "it is a device, not a file";
    case constants.S_IFSOCK:
      return "it is a socket, not a file";
    default:
      return "it is not a regular file";
  }
}

/**
 * Why an existing path is not a file a request may read (a device, FIFO, socket or directory), or
 * undefined (a regular file, or nothing there yet: reading it then says so).
 */
export function specialFile(path: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return undefined;
  }
  return notAFile(mode);
}

/**
 * Reads an included file as UTF-8. Throws an Error whose message says why not: missing, not a
 * regular file (devices, FIFOs and sockets are refused without reading), or over `limit` bytes
 * (nothing past the limit is read, even from a file that grows). `firstRead`: the first buffer's
 * least size (a file whose size reads as 0, as /proc's do, or that grows, is read on past it).
 */
export function readIncludedFile(path: string, limit = INCLUDE_LIMIT_BYTES, firstRead = 64 * 1024): string {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer (Windows has no such flag).
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stat = fstatSync(fd);
    const why = notAFile(stat.mode);
    if (why) throw new Error(why);
    const tooBig = () =>
      new Error(
        `it holds more than ${limit / (1024 * 1024)} MiB, the most an include may hold; send a larger body with @data ${path} (read as it is sent)`,
      );
    if (stat.size > limit) throw tooBig();
    let buffer = Buffer.allocUnsafe(Math.min(limit + 1, Math.max(stat.size + 1, firstRead)));
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        // The file grew since it was measured: read on, up to one byte past the limit.
        if (buffer.length > limit) break;
        const grown = Buffer.allocUnsafe(Math.min(limit + 1, buffer.length * 2));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > limit) throw tooBig();
    return buffer.toString("utf8", 0, length);
  } finally {
    closeSync(fd);
  }
}

/** The files the request's options name (includes are listed by the conversion that reads them). */
export function optionFiles(o: CurlOptions): LocalFile[] {
  const files: LocalFile[] = [];
  const named = (value: string | undefined, via: string) => {
    if (value?.startsWith("@") && value !== "@-" && value !== "@") {
      files.push({ path: value.slice(1), access: "read", via });
    }
  };
  named(o.data, "@data");
  for (const h of o.headers) named(h, "@header");
  for (const h of o.reflectHeaders) named(h, "@reflect-header");
  if (o.output) files.push({ path: o.output, access: "write", via: "@output" });
  if (o.streamFile) {
    const eq = o.streamFile.indexOf("=");
    if (eq > 0) files.push({ path: o.streamFile.slice(eq + 1), access: "read", via: "@stream-file" });
  }
  return files;
}

/** The path with symbolic links resolved (of its directory, for a file not written yet). */
function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/**
 * Whether an absolute path is inside one of the directories (or is one of them), symbolic links
 * resolved: a link in the workspace to a file outside it is outside.
 */
export function isInside(path: string, roots: readonly string[]): boolean {
  const real = canonical(path);
  return roots.some((root) => {
    const rel = relative(canonical(root), real);
    return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
  });
}

/** The files outside every root, each once. */
export function filesOutside(files: readonly LocalFile[], roots: readonly string[]): LocalFile[] {
  const seen = new Set<string>();
  return files.filter((f) => {
    const key = `${f.access} ${f.path}`;
    if (seen.has(key) || isInside(f.path, roots)) return false;
    seen.add(key);
    return true;
  });
}
