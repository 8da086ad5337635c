// Server reflection for the language server (a request's URL) and the Services view (a server entry):
// the options are opened through the call pipeline's first step (describeTarget), so reflection
// reaches the server exactly as a call would (headers, `-u` / netrc credentials, the User-Agent,
// keepalive, TLS, Unix socket), and the cache key is the settings object the source is made from.

import { homedir } from "node:os";
import { Readable } from "node:stream";
import { version } from "../../../package.json";
import { bearerTokens } from "../auth/bearer-tokens";
import { ProtocallError } from "../errors";
import type { CurlOptions } from "../invoke/options";
import { settingsKey } from "../invoke/settings-key";
import {
  type ConnectionSettings,
  describeTarget,
  openReflection,
  type ReflectionSettings,
} from "../invoke/target";
import type { FileSource } from "../schema/types";

export interface ReflectionTarget {
  /** What the source is made from: the connection and the reflection settings of a call. */
  settings: { connection: ConnectionSettings; reflection: ReflectionSettings };
  /** Names the source in the schema store: its settings, serialized. */
  key: string;
  open(): Promise<FileSource>;
}

/**
 * The reflection of `base` with the options of a request or server entry. Reflection sends the
 * `@reflect-header` values when there are any, otherwise the request's own headers, so a server that
 * asks for credentials on every call also lets the editor read its schema. Connecting takes the
 * request's --connect-timeout (default 3 s), and it and one answer at most `timeoutMs`. Throws
 * ProtocallError for options that cannot work (bad headers, credentials that need a prompt, TLS
 * flags on an http URL).
 */
export async function reflectionTarget(
  o: CurlOptions,
  base: string,
  baseDir: string,
  limits: { timeoutMs: number },
): Promise<ReflectionTarget> {
  const options: CurlOptions = {
    ...o,
    // A base URL, as the list flags take it; nothing of the call but its connection and headers.
    url: base,
    listServices: true,
    listMethods: false,
    data: undefined,
    output: undefined,
    reflect: true,
    reflectHeaders: o.reflectHeaders.length > 0 ? o.reflectHeaders : ["*"],
    connectTimeout: Math.min(o.connectTimeout ?? 3, limits.timeoutMs / 1000),
    verbose: false,
  };
  const io = {
    cwd: baseDir,
    env: process.env,
    stdin: Readable.from([]),
    stdinIsTTY: false,
    homedir: homedir(),
    // A request's --auth token for its reflection (no sign-in prompts here: a grant that needs a
    // person fails with a clear error until a call has signed in in this process).
    tokens: bearerTokens(),
  };
  const target = await describeTarget(options, io, `protocall/${version}`);
  const { connection } = target;
  const { reflection } = target.schema;
  if (!connection || !reflection) throw new ProtocallError(`cannot reflect ${base}: give an http(s) URL`);
  return {
    settings: { connection, reflection },
    key: settingsKey({ connection, reflection }),
    open: () => openReflection(connection, reflection, { timeoutMs: limits.timeoutMs }),
  };
}
