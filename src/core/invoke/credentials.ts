// Credentials and user agent of `protocall curl`. Precedence: an Authorization header given with -H
// beats --user, which beats netrc (--netrc / --netrc-file). A User-Agent header beats -A.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ProtocallError } from "../errors";
import { toWireValue } from "./header-line";
import { type HeaderList, hasHeader } from "./headers";
import type { InputIo } from "./io";
import { findNetrcEntry, parseNetrc } from "./netrc";
import type { CurlOptions } from "./options";
import { parseCurlUrl } from "./url";

// One answer per options object, so the RPC headers and the reflection headers share one password
// prompt and one netrc read.
const resolved = new WeakMap<CurlOptions, Promise<string | undefined>>();

/**
 * Adds `User-Agent` (from -A, unless a User-Agent header is present) and `Authorization` (from
 * --user or netrc, unless an Authorization header is present) to `headers`, in place.
 * Call it for the RPC headers and again for the reflection headers: the password prompt and netrc
 * lookup happen once.
 */
export async function applyCredentials(headers: HeaderList, o: CurlOptions, io: InputIo): Promise<void> {
  if (o.userAgent !== undefined && !hasHeader(headers, "user-agent")) {
    headers.push(["User-Agent", toWireValue(o.userAgent)]);
  }
  if (hasHeader(headers, "authorization")) return;
  let p = resolved.get(o);
  if (!p) {
    p = resolveAuthorization(o, io);
    resolved.set(o, p);
  }
  const authorization = await p;
  if (authorization !== undefined) headers.push(["Authorization", authorization]);
}

/** The Authorization value from --user or netrc, or undefined when neither is given. */
export async function resolveAuthorization(o: CurlOptions, io: InputIo): Promise<string | undefined> {
  if (o.user !== undefined && o.user !== "") {
    const colon = o.user.indexOf(":");
    if (colon >= 0) return basic(o.user.slice(0, colon), o.user.slice(colon + 1));
    const password = await askPassword(o.user, io);
    return basic(o.user, password);
  }
  if (o.netrc || o.netrcFile !== undefined) return fromNetrc(o, io);
  return undefined;
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;
}

async function askPassword(user: string, io: InputIo): Promise<string> {
  if (!io.stdinIsTTY || !io.promptPassword) {
    throw new ProtocallError(
      `cannot prompt for the password of --user ${user}: standard input is not a terminal; give --user ${user}:PASSWORD, or use --netrc`,
    );
  }
  return io.promptPassword(`Enter host password for user '${user}': `);
}

async function fromNetrc(o: CurlOptions, io: InputIo): Promise<string | undefined> {
  let path: string;
  let flag: string;
  if (o.netrcFile !== undefined) {
    path = resolve(io.cwd, o.netrcFile);
    flag = "--netrc-file";
  } else {
    path = io.env.NETRC ? resolve(io.cwd, io.env.NETRC) : join(io.homedir, ".netrc");
    flag = "--netrc";
  }
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ProtocallError(
      `${flag}: cannot read ${path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (err as Error).message}; create it with a line "machine HOST login NAME password SECRET", or use --user`,
    );
  }
  const host = parseCurlUrl(o).host;
  if (host === undefined) return undefined;
  const entry = findNetrcEntry(parseNetrc(text), host);
  if (!entry) {
    throw new ProtocallError(
      `${flag}: ${path} has no entry for host "${host}" and no default entry; add "machine ${host} login NAME password SECRET" (the host includes the port when the URL has one)`,
    );
  }
  const login = entry.login ?? "";
  if (login.includes(":")) {
    throw new ProtocallError(
      `${flag}: ${path}:${entry.line}: the login "${login}" contains a colon, which basic authentication cannot carry; change the login`,
    );
  }
  return basic(login, entry.password ?? "");
}
