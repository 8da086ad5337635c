// Credentials and user agent of `protocall curl`. Precedence: an Authorization header given with -H
// beats --auth (an OAuth2 bearer token, src/core/auth/), which beats --user, which beats netrc
// (--netrc / --netrc-file). A User-Agent header beats -A.
// A netrc that cannot be read or has no entry for the host (and no default entry) means no
// credentials, as in buf curl: the call goes on, and a verbose line says why.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ProtocallError } from "../errors";
import { toWireValue } from "../header-line";
import { type HeaderList, hasHeader } from "./headers";
import type { InputIo } from "./io";
import { findNetrcEntry, parseNetrc } from "./netrc";
import type { CurlOptions } from "./options";
import { parseCurlUrl } from "./url";

// One answer per options object, so the RPC headers and the reflection headers share one password
// prompt and one netrc read.
const resolved = new WeakMap<CurlOptions, Promise<Authorization>>();

interface Authorization {
  readonly value?: string;
  /** Why netrc gave none, for the verbose output (`* ` line). */
  readonly note?: string;
}

/**
 * Adds `User-Agent` (from -A, unless a User-Agent header is present) and `Authorization` (from
 * --user or netrc, unless an Authorization header is present) to `headers`, in place.
 * Call it for the RPC headers and again for the reflection headers: the password prompt and netrc
 * lookup happen once. Returns the verbose note when netrc gave no credentials.
 */
export async function applyCredentials(
  headers: HeaderList,
  o: CurlOptions,
  io: InputIo,
): Promise<string | undefined> {
  if (o.userAgent !== undefined && !hasHeader(headers, "user-agent")) {
    headers.push(["User-Agent", toWireValue(o.userAgent)]);
  }
  if (hasHeader(headers, "authorization")) return undefined;
  if (o.auth !== undefined && o.auth !== "") {
    // Asked on every call (not kept with the options): the token source renews an expiring token.
    if (!io.tokens)
      throw new ProtocallError(
        "--auth: OAuth2 tokens cannot be fetched here; send an Authorization header instead",
      );
    const { token, notes } = await io.tokens.bearer(o, io);
    headers.push(["Authorization", `Bearer ${token}`]);
    return notes.length > 0 ? notes.join("\n") : undefined;
  }
  let p = resolved.get(o);
  if (!p) {
    p = resolveAuthorization(o, io);
    resolved.set(o, p);
  }
  const authorization = await p;
  if (authorization.value !== undefined) headers.push(["Authorization", authorization.value]);
  return authorization.note;
}

/** The Authorization value from --user or netrc (none when neither is given or netrc has none). */
async function resolveAuthorization(o: CurlOptions, io: InputIo): Promise<Authorization> {
  if (o.user !== undefined && o.user !== "") {
    const colon = o.user.indexOf(":");
    if (colon >= 0) return { value: basic(o.user.slice(0, colon), o.user.slice(colon + 1)) };
    const password = await askPassword(o.user, io);
    return { value: basic(o.user, password) };
  }
  if (o.netrc || o.netrcFile !== undefined) return fromNetrc(o, io);
  return {};
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

async function fromNetrc(o: CurlOptions, io: InputIo): Promise<Authorization> {
  let path: string;
  let shown: string;
  let flag: string;
  if (o.netrcFile !== undefined) {
    path = resolve(io.cwd, o.netrcFile);
    shown = o.netrcFile;
    flag = "--netrc-file";
  } else {
    path = io.env.NETRC ? resolve(io.cwd, io.env.NETRC) : join(io.homedir, ".netrc");
    shown = path;
    flag = "--netrc";
  }
  const host = parseCurlUrl(o).host;
  if (host === undefined) return {};
  // buf's words for a file it cannot read, or without an entry: the call goes on without credentials.
  const none = { note: `Couldn't find host ${host} in the file "${shown}"; using no credentials` };
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return none;
  }
  const entry = findNetrcEntry(parseNetrc(text), host);
  if (!entry) return none;
  const login = entry.login ?? "";
  if (login.includes(":")) {
    throw new ProtocallError(
      `${flag}: ${path}:${entry.line}: the login "${login}" contains a colon, which basic authentication cannot carry; change the login`,
    );
  }
  return { value: basic(login, entry.password ?? "") };
}
