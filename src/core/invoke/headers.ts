// Reads the request headers of `protocall curl`: `-H name: value`, `-H @file`, `-H @-`, the
// reflection headers (`--reflect-header`, with `*` for all of -H), and the combined file that holds
// headers, a blank line, then the request data when -H and -d name the same file.
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { ProtocallError } from "../errors";
import { isIgnoredHeader, parseHeaderLine, toWireValue } from "../header-line";
import { ByteLines } from "./byte-lines";
import type { InputIo } from "./io";
import type { CurlOptions } from "./options";

export type HeaderList = [string, string][];

export interface CurlHeaders {
  /**
   * Headers for the RPC, in the order given (Host removed: see `authority`). Values are ready for
   * Node's HTTP stacks: non-ASCII text is given as its UTF-8 bytes, one character per byte.
   */
  headers: HeaderList;
  /** Headers for reflection requests (`*` expanded to the RPC headers). */
  reflectHeaders: HeaderList;
  /**
   * When -H and -d name the same file (or both stdin): the body after the blank line, with the
   * line of the file it starts on (so request data errors give the file's line numbers).
   */
  dataFromHeaderFile?: AsyncIterable<Uint8Array> & { firstLine?: number };
  /** From a `Host` header: the HTTP authority, and the default TLS server name. */
  authority?: string;
  /** Headers given but not sent, as buf does (Content-Length, Connection, ...): for verbose output. */
  ignored: string[];
}

/** The name used in messages for a `@path` source. */
export function sourceLabel(path: string): string {
  return path === "-" ? "stdin" : path;
}

/** Opens `@path` (`-` = stdin) as a byte stream; a missing file is a ProtocallError. */
export async function openSource(
  path: string,
  io: InputIo,
  flag: string,
): Promise<AsyncIterable<Uint8Array | string>> {
  if (path === "-") return io.stdin as AsyncIterable<Uint8Array | string>;
  const full = resolve(io.cwd, path);
  const cannot = (why: string) =>
    new ProtocallError(
      `${flag} @${path}: cannot read ${full}: ${why}; check the path (relative paths start at ${io.cwd})`,
    );
  try {
    if ((await stat(full)).isDirectory()) throw cannot("it is a directory");
  } catch (err) {
    if (err instanceof ProtocallError) throw err;
    const e = err as NodeJS.ErrnoException;
    throw cannot(e.code === "ENOENT" ? "no such file" : e.message);
  }
  const stream = createReadStream(full, { highWaterMark: 256 * 1024 });
  await new Promise<void>((ok, fail) => {
    stream.once("open", () => ok());
    stream.once("error", (err: NodeJS.ErrnoException) => fail(cannot(err.message)));
  });
  return stream;
}

export async function readCurlHeaders(o: CurlOptions, io: InputIo): Promise<CurlHeaders> {
  const dataFile = o.data?.startsWith("@") ? o.data.slice(1) : undefined;
  const fileCache = new Map<string, HeaderList>();
  let dataFromHeaderFile: AsyncIterable<Uint8Array> | undefined;

  const readFile = async (path: string, flag: string): Promise<HeaderList> => {
    const cached = fileCache.get(path);
    if (cached) return cached;
    const combined = flag === "--header" && path === dataFile;
    const source = await openSource(path, io, flag);
    const lines = new ByteLines(source);
    const label = sourceLabel(path);
    const list: HeaderList = [];
    let lineNo = 0;
    let separated = false;
    for (;;) {
      let raw = await lines.line();
      if (raw === undefined) break;
      lineNo++;
      if (lineNo === 1 && raw.startsWith("\uFEFF")) raw = raw.slice(1); // byte order mark
      // In a combined file only an empty line (CRLF accepted) ends the headers; a line of spaces is
      // skipped like any blank line, as buf does.
      if (combined && (raw === "" || raw === "\r")) {
        separated = true;
        break;
      }
      const line = raw.trim();
      if (line === "") continue;
      if (line.startsWith("#")) continue;
      if (combined && (line.startsWith("{") || line.startsWith("["))) {
        throw new ProtocallError(
          `${label}:${lineNo}: request data found before the blank line that must end the headers: when -H and -d both name ${path === "-" ? "stdin" : `the file ${path}`}, it holds the headers, a blank line, then the data`,
        );
      }
      list.push(parseHeaderLine(line, `${label}:${lineNo}`));
    }
    if (combined) {
      if (!separated) {
        throw new ProtocallError(
          `${label}: no blank line after the headers: when -H and -d both name ${path === "-" ? "stdin" : `the file ${path}`}, it must hold the headers, a blank line, then the request data`,
        );
      }
      dataFromHeaderFile = Object.assign(lines.rest(), { firstLine: lineNo + 1 });
    } else {
      await lines.close();
    }
    fileCache.set(path, list);
    return list;
  };

  const collect = async (values: string[], flag: string, rpcHeaders?: HeaderList) => {
    const list: HeaderList = [];
    for (const v of values) {
      if (v === "") continue;
      if (v === "*" && rpcHeaders) list.push(...rpcHeaders);
      else if (v.startsWith("@")) list.push(...(await readFile(v.slice(1), flag)).map(wire));
      else list.push(wire(parseHeaderLine(v, `${flag} value`)));
    }
    return list;
  };

  const ignored: string[] = [];
  const keep = (list: HeaderList) =>
    list.filter((h) => {
      if (!isIgnoredHeader(h[0])) return true;
      if (!ignored.includes(h[0])) ignored.push(h[0]);
      return false;
    });
  const all = keep(await collect(o.headers, "--header"));
  let authority: string | undefined;
  const headers: HeaderList = [];
  for (const h of all) {
    if (h[0].toLowerCase() === "host") authority = h[1];
    else headers.push(h);
  }
  const reflectHeaders = keep(await collect(o.reflectHeaders, "--reflect-header", headers));
  if (reflectHeaders.some((h) => h[0].toLowerCase() === "host")) {
    throw new ProtocallError(
      "--reflect-header: a Host header cannot be set for reflection alone; reflection uses the same server, so set Host with -H",
    );
  }
  return { headers, reflectHeaders, dataFromHeaderFile, authority, ignored };
}

function wire([name, value]: [string, string]): [string, string] {
  return [name, toWireValue(value)];
}

/** Whether the list has a header of this name (case-insensitive). */
export function hasHeader(headers: HeaderList, name: string): boolean {
  const n = name.toLowerCase();
  return headers.some((h) => h[0].toLowerCase() === n);
}
