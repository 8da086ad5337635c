// The API token a registry client sends, found as the buf CLI finds it, so one set-up serves both:
//  1. a token the editor holds for the registry (signed in for the Webhooks view);
//  2. PROTOCALL_TOKEN, then BUF_TOKEN, each either one token for every registry (`tok`) or a list
//     (`tok1@remote1,tok2@remote2`, the remote with its port when it has one) from which only the
//     entry for this remote applies;
//  3. the password of the netrc entry (~/.netrc, or the file $NETRC names) whose machine is the
//     remote, port included, as `buf registry login` writes it; then the bare host name. The `default`
//     entry is not used (buf skips it too).
// Where the token came from decides how a refused token is explained (see registry-errors.ts).
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseNetrc } from "../invoke/netrc";

export type TokenOrigin = "editor" | "PROTOCALL_TOKEN" | "BUF_TOKEN" | "netrc";

/** What the editor holds for the registries it is signed in to, by remote (`host[:port]`). */
export interface RegistryAccess {
  /** API tokens: before PROTOCALL_TOKEN, BUF_TOKEN and the netrc. */
  readonly tokens: Readonly<Record<string, string>>;
  /** Extra trusted CAs in PEM (a registry's `caFile`, the local registry's own certificate). */
  readonly cas: Readonly<Record<string, string>>;
}

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

/** The token for `remote` (`host[:port]`), or undefined when none is set up. */
export function registryToken(remote: string, lookup: TokenLookup): RegistryToken | undefined {
  const r = remote.toLowerCase();
  const fromEditor = lookup.tokens?.[r] ?? lookup.tokens?.[remote];
  if (fromEditor) return { token: fromEditor, origin: "editor" };
  for (const name of ["PROTOCALL_TOKEN", "BUF_TOKEN"] as const) {
    const value = lookup.env[name];
    if (!value) continue;
    const token = tokenFor(value, r);
    if (token) return { token, origin: name };
  }
  const home = lookup.home ?? (lookup.env.HOME || homedir());
  const file = lookup.env.NETRC || join(home, process.platform === "win32" ? "_netrc" : ".netrc");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const entries = parseNetrc(text);
  const bare = r.replace(/:\d+$/, "");
  for (const machine of bare === r ? [r] : [r, bare]) {
    const entry = entries.find((e) => e.machine?.toLowerCase() === machine);
    if (entry?.password) return { token: entry.password, origin: "netrc", file };
  }
  return undefined;
}

/** The token a BUF_TOKEN-style value holds for `remote`: the value itself, or its `tok@remote` entry. */
export function tokenFor(value: string, remote: string): string | undefined {
  const parts = value.split(",").map((p) => p.trim());
  if (parts.length === 1 && !parts[0].includes("@")) return parts[0] || undefined;
  for (const part of parts) {
    const at = part.lastIndexOf("@");
    if (at <= 0) continue;
    if (part.slice(at + 1).toLowerCase() === remote) return part.slice(0, at);
  }
  return undefined;
}
