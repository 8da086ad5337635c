// The registry API token: PROTOCALL_TOKEN, then BUF_TOKEN, then the netrc password for the registry
// host (~/.netrc, or the file named by $NETRC). Never a command-line flag, so it stays out of shell
// history and process lists.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface TokenSource {
  readonly token: string;
  /** Where it came from, for messages: "PROTOCALL_TOKEN", "BUF_TOKEN" or the netrc file path. */
  readonly from: string;
}

/** Finds the token for `host` (a host name, with or without port). */
export function resolveToken(
  env: NodeJS.ProcessEnv,
  host: string,
  home = homedir(),
): TokenSource | undefined {
  if (env.PROTOCALL_TOKEN) return { token: env.PROTOCALL_TOKEN, from: "PROTOCALL_TOKEN" };
  if (env.BUF_TOKEN) return { token: tokenFromBufToken(env.BUF_TOKEN, host), from: "BUF_TOKEN" };
  const file = env.NETRC || join(home, ".netrc");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const bare = host.replace(/:\d+$/, "");
  const password =
    netrcPassword(text, host, false) ?? netrcPassword(text, bare, false) ?? netrcPassword(text, bare, true);
  return password === undefined ? undefined : { token: password, from: file };
}

/** BUF_TOKEN may hold `token1@host1,token2@host2`; a plain value applies to every host. */
function tokenFromBufToken(value: string, host: string): string {
  if (!value.includes("@")) return value;
  const bare = host.replace(/:\d+$/, "");
  for (const part of value.split(",")) {
    const at = part.lastIndexOf("@");
    if (at < 0) continue;
    const h = part.slice(at + 1).trim();
    if (h === host || h === bare) return part.slice(0, at).trim();
  }
  return value;
}

/** The password of the `machine` entry for `host` (or else of `default`, if allowed) in netrc text. */
export function netrcPassword(text: string, host: string, useDefault = true): string | undefined {
  const tokens = text
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .split(/\s+/)
    .filter(Boolean);
  let current: string | undefined;
  let fallback: string | undefined;
  let found: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === "machine") {
      current = tokens[++i];
    } else if (t === "default") {
      current = "\u0000default";
    } else if (t === "macdef") {
      // A macro runs to the next blank line; a token split cannot see it, so stop here.
      break;
    } else if (t === "password") {
      const value = tokens[++i];
      if (current === host && found === undefined) found = value;
      if (current === "\u0000default" && fallback === undefined) fallback = value;
    }
  }
  return found ?? (useDefault ? fallback : undefined);
}
