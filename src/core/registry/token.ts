// The API token a registry client sends to a remote (`host[:port]`), found as the buf CLI 1.75 finds
// it, so one set-up serves both (each rule below was observed against the real buf, see
// test/core/registry/token-buf.test.ts):
//  1. a token the editor holds for the remote (signed in from the Webhooks view);
//  2. PROTOCALL_TOKEN, then BUF_TOKEN, each in BUF_TOKEN's two forms: one token for every remote
//     (`tok`), or a list `tok1@remote1,tok2@remote2` (the remote with its port when it has one) of
//     which only this remote's entry applies; a list without one for this remote gives no token and
//     the next place is asked. Entries are taken as written (buf trims nothing); an entry without a
//     token or a remote, or a remote named twice, is an error, as in buf;
//  3. the netrc file ($NETRC, else ~/.netrc as `buf registry login` writes it): the `machine` entry
//     of the remote (port included), else the `default` entry.
// Remotes are compared as written first (buf compares exactly), then without regard to case: host
// names are case-insensitive, and a remote written `Buf.Example.com` is the same registry.
// Where the token came from decides how a refused token is explained (see registry-errors.ts).
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ProtocallError } from "../errors";
import { findNetrcEntry, parseNetrc } from "../invoke/netrc";

export type TokenOrigin = "editor" | "PROTOCALL_TOKEN" | "BUF_TOKEN" | "netrc";

export interface RegistryToken {
  readonly token: string;
  readonly origin: TokenOrigin;
  /** The netrc file it was read from (origin "netrc"). */
  readonly file?: string;
}

export interface TokenLookup {
  readonly env: NodeJS.ProcessEnv;
  /** Tokens the editor holds, by remote (`host[:port]`). */
  readonly tokens?: Readonly<Record<string, string>>;
  /** The home directory for ~/.netrc (default: HOME from env, else the OS's). */
  readonly home?: string;
}

/** The variables that hold tokens, in the order they are asked. */
export const tokenVariables = ["PROTOCALL_TOKEN", "BUF_TOKEN"] as const;

/**
 * The token for `remote` (`host[:port]`), or undefined when none is set up. Throws ProtocallError
 * for a PROTOCALL_TOKEN or BUF_TOKEN list that is not valid.
 */
export function registryToken(remote: string, lookup: TokenLookup): RegistryToken | undefined {
  const fromEditor = lookup.tokens ? byRemote(Object.entries(lookup.tokens), remote) : undefined;
  if (fromEditor) return { token: fromEditor, origin: "editor" };
  for (const name of tokenVariables) {
    const value = lookup.env[name];
    if (!value) continue;
    const token = tokenFor(value, remote, name);
    if (token !== undefined) return { token, origin: name };
  }
  const file = netrcPath(lookup.env, lookup.home);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const entry = findNetrcEntry(parseNetrc(text), remote);
  return entry?.password ? { token: entry.password, origin: "netrc", file } : undefined;
}

/** The netrc file a registry token is read from: $NETRC, else the home directory's. */
export function netrcPath(env: NodeJS.ProcessEnv, home?: string): string {
  if (env.NETRC) return env.NETRC;
  return join(home ?? (env.HOME || homedir()), process.platform === "win32" ? "_netrc" : ".netrc");
}

/**
 * The token a BUF_TOKEN-style value holds for `remote`: the value itself when it is one token, else
 * its `tok@remote` entry (undefined without one). `name` names the variable in errors.
 */
export function tokenFor(value: string, remote: string, name = "BUF_TOKEN"): string | undefined {
  if (!value.includes("@") && !value.includes(",")) return value;
  return byRemote(parseTokenList(value, name), remote);
}

/** The `[remote, token]` entries of a `tok1@remote1,tok2@remote2` list; throws for a malformed one. */
export function parseTokenList(value: string, name = "BUF_TOKEN"): [string, string][] {
  const out: [string, string][] = [];
  const seen = new Set<string>();
  const form = `write one token, or TOKEN@REMOTE entries separated by commas (such as tok1@buf.example.com,tok2@localhost:8443)`;
  for (const part of value.split(",")) {
    const at = part.lastIndexOf("@");
    const token = at < 0 ? "" : part.slice(0, at);
    const remote = at < 0 ? "" : part.slice(at + 1);
    if (token === "" || remote === "") {
      throw new ProtocallError(
        `${name} is not valid: the entry "${part}" needs a token and a remote, TOKEN@REMOTE; ${form}`,
      );
    }
    if (seen.has(remote)) {
      throw new ProtocallError(
        `${name} is not valid: it names the remote ${remote} twice; keep one entry for it`,
      );
    }
    seen.add(remote);
    out.push([remote, token]);
  }
  return out;
}

/** The value of the entry for `remote`: written the same, else the same but for case. */
function byRemote(entries: readonly (readonly [string, string])[], remote: string): string | undefined {
  const exact = entries.find(([r]) => r === remote);
  if (exact) return exact[1];
  const lower = remote.toLowerCase();
  return entries.find(([r]) => r.toLowerCase() === lower)?.[1];
}
