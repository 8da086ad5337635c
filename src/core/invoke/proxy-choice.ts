// Which HTTP proxy, if any, a connection to a URL goes through. The rules are Go's
// http.ProxyFromEnvironment, which `buf curl` uses, so the same environment proxies the same calls:
//  - https URLs take HTTPS_PROXY, http URLs HTTP_PROXY (upper case first, then lower case); ALL_PROXY
//    (or all_proxy) is used when neither is set (curl reads it; Go does not);
//  - `localhost` and loopback IP literals are never proxied, whatever the variables say;
//  - NO_PROXY (or no_proxy): `*`, or a comma-separated list of host names (`example.com` matches it
//    and its subdomains, `.example.com` and `*.example.com` only the subdomains), IP addresses and
//    CIDR ranges, each optionally with `:port`;
//  - a proxy value without a scheme is taken as `http://`; its default port is 80 (443 for https).
// `--proxy URL` (and `# @proxy`, the editor's `http.proxy`) replaces the *_PROXY variables; the
// NO_PROXY and loopback rules still apply.
import { BlockList, isIP } from "node:net";
import { ProtocallError } from "../errors";
import { redactSecrets } from "./redact";

/** The proxy of a connection: its URL (credentials included) and where it was configured. */
export interface ProxyChoice {
  /** `http://user:password@host:port` (normalized: scheme, host and port always present). */
  url: string;
  /** Where it was set: `--proxy`, `HTTPS_PROXY`, `http_proxy`, … (for verbose output and errors). */
  from: string;
  /**
   * False: an `https://` proxy's own certificate is not verified (PROTOCALL_PROXY_STRICT_SSL=false,
   * the editor's `http.proxyStrictSSL`: for proxies that present a company CA). The server's TLS,
   * end to end through the tunnel, is verified as always.
   */
  strictSSL?: false;
}

/** The proxy a connection to `target` uses, or undefined when it goes direct. */
export function chooseProxy(
  target: URL,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): ProxyChoice | undefined {
  const secure = target.protocol === "https:";
  const picked = flag !== undefined && flag !== "" ? { value: flag, from: "--proxy" } : fromEnv(secure, env);
  if (!picked) return undefined;
  const hostname = target.hostname.startsWith("[") ? target.hostname.slice(1, -1) : target.hostname;
  const port = target.port || (secure ? "443" : "80");
  if (!useProxy(hostname.toLowerCase(), port, env.NO_PROXY || env.no_proxy || "")) return undefined;
  const choice: ProxyChoice = { url: normalizeProxyUrl(picked.value, picked.from), from: picked.from };
  if (/^(false|0|no)$/i.test(env.PROTOCALL_PROXY_STRICT_SSL?.trim() ?? "")) choice.strictSSL = false;
  return choice;
}

function fromEnv(secure: boolean, env: NodeJS.ProcessEnv): { value: string; from: string } | undefined {
  const names = secure
    ? ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
    : ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];
  // Go ignores HTTP_PROXY in a CGI environment (where a request header could set it).
  for (const name of names) {
    if (name.toLowerCase() === "http_proxy" && env.REQUEST_METHOD) continue;
    const value = env[name];
    if (value) return { value, from: name };
  }
  return undefined;
}

/** Checks and completes a proxy URL: `host:3128` → `http://host:3128`. */
export function normalizeProxyUrl(value: string, from: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new ProtocallError(
      `${from} ${redactSecrets(value)}: not a proxy URL; give http://[user:password@]host:port`,
    );
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new ProtocallError(
      `${from} ${redactSecrets(value)}: ${u.protocol.slice(0, -1)} proxies are not supported; give an http:// or https:// proxy (one that accepts CONNECT)`,
    );
  }
  if (!u.hostname) {
    throw new ProtocallError(
      `${from} ${redactSecrets(value)}: the proxy URL has no host; give http://host:port`,
    );
  }
  const port = u.port || (u.protocol === "https:" ? "443" : "80");
  const userinfo = u.username ? `${u.username}${u.password ? `:${u.password}` : ""}@` : "";
  return `${u.protocol}//${userinfo}${u.hostname}:${port}`;
}

/** Go's httpproxy useProxy: whether `host:port` is reached through the proxy. */
function useProxy(host: string, port: string, noProxy: string): boolean {
  if (host === "localhost") return false;
  const ipVersion = isIP(host);
  if (ipVersion !== 0 && isLoopback(host, ipVersion)) return false;
  for (const raw of noProxy.split(",")) {
    let entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return false;
    if (entry.includes("/")) {
      if (ipVersion !== 0 && inCidr(host, ipVersion, entry)) return false;
      continue;
    }
    let entryPort = "";
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (bracketed) {
      entry = bracketed[1] ?? "";
      entryPort = bracketed[2] ?? "";
    } else if (isIP(entry) === 0) {
      const at = entry.lastIndexOf(":");
      if (at > 0) {
        entryPort = entry.slice(at + 1);
        entry = entry.slice(0, at);
      }
    }
    if (isIP(entry) !== 0) {
      if (entry === host && (entryPort === "" || entryPort === port)) return false;
      continue;
    }
    if (entryPort !== "" && entryPort !== port) continue;
    if (entry.startsWith("*.")) entry = entry.slice(1);
    if (entry.startsWith(".")) {
      if (host.endsWith(entry)) return false;
    } else if (host === entry || host.endsWith(`.${entry}`)) return false;
  }
  return true;
}

function isLoopback(ip: string, version: number): boolean {
  if (version === 4) return ip.startsWith("127.");
  const lower = ip.toLowerCase();
  return lower === "::1" || lower === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(lower);
}

function inCidr(ip: string, version: number, cidr: string): boolean {
  const [net, bits] = cidr.split("/");
  const prefix = Number(bits);
  const netVersion = isIP(net ?? "");
  if (netVersion === 0 || !Number.isInteger(prefix)) return false;
  const list = new BlockList();
  try {
    list.addSubnet(net as string, prefix, netVersion === 4 ? "ipv4" : "ipv6");
  } catch {
    return false;
  }
  return list.check(ip, version === 4 ? "ipv4" : "ipv6");
}

/** The proxy URL as verbose output and errors show it (its password hidden). */
export function shownProxy(url: string): string {
  return redactSecrets(url);
}

/** The variables a proxy is chosen from (the rest of the environment is not kept). */
const PROXY_VARIABLES = [
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "ALL_PROXY",
  "all_proxy",
  "NO_PROXY",
  "no_proxy",
  "REQUEST_METHOD",
  "PROTOCALL_PROXY_STRICT_SSL",
] as const;

/**
 * What proxies are chosen from for connections made later (registry calls, webhook posts, forwards):
 * a `--proxy` value (or the editor's `http.proxy`) and the environment's proxy variables.
 */
export interface ProxyConfig {
  readonly flag?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The proxy configuration of an environment (and an explicit proxy, if any). */
export function proxyConfig(env: NodeJS.ProcessEnv, flag?: string): ProxyConfig {
  const kept: Record<string, string | undefined> = {};
  for (const name of PROXY_VARIABLES) if (env[name] !== undefined) kept[name] = env[name];
  return { flag, env: kept };
}

/** chooseProxy for a configuration (undefined configuration: direct). */
export function proxyFor(target: URL, config: ProxyConfig | undefined): ProxyChoice | undefined {
  return config ? chooseProxy(target, config.flag, config.env) : undefined;
}

/** The editor's proxy settings (VS Code's `http.proxy` and `http.noProxy`). */
export interface EditorProxySettings {
  /** `http.proxy`; empty or undefined: the environment's variables apply. */
  readonly proxy?: string;
  /** `http.noProxy`: hosts that go direct, in NO_PROXY's forms. */
  readonly noProxy?: readonly string[];
  /** `http.proxyStrictSSL`: false skips verifying an https proxy's own certificate. */
  readonly strictSSL?: boolean;
}

/**
 * An environment with an explicit proxy applied: the proxy (`--proxy` for what a call opens besides
 * its connection, such as a registry module's registry; the editor's `http.proxy`) replaces the
 * *_PROXY variables and a non-empty no-proxy list (`http.noProxy`) replaces NO_PROXY, so every
 * consumer chooses proxies by the one rule (chooseProxy).
 */
export function withProxyOverride(env: NodeJS.ProcessEnv, settings: EditorProxySettings): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  const proxy = settings.proxy?.trim();
  if (proxy) {
    for (const name of ["https_proxy", "http_proxy", "all_proxy", "ALL_PROXY"]) delete out[name];
    out.HTTPS_PROXY = proxy;
    out.HTTP_PROXY = proxy;
  }
  const noProxy = (settings.noProxy ?? []).map((s) => s.trim()).filter((s) => s !== "");
  if (noProxy.length > 0) {
    delete out.no_proxy;
    out.NO_PROXY = noProxy.join(",");
  }
  if (settings.strictSSL === false) out.PROTOCALL_PROXY_STRICT_SSL = "false";
  return out;
}
