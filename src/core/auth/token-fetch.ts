// The HTTP under openid-client: its requests (discovery, token, device authorization) go through
// http-post.ts, so they take the same proxy as calls (proxy-choice.ts: --proxy, HTTPS_PROXY,
// NO_PROXY) and the registry trust rule (registry/trust.ts: system roots or SSL_CERT_FILE, plus
// --cacert; -k turns verification off), instead of Node's fetch, which knows neither.
import { chooseProxy } from "../invoke/proxy-choice";
import { registryTrust } from "../registry/trust";
import { post } from "../webhooks/http-post";

export interface TokenHttpSettings {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The call's --proxy. */
  proxy?: string;
  /** The call's --cacert (trusted in addition to the system's roots). */
  cacert?: string;
  /** The call's -k. */
  insecure?: boolean;
}

/** What openid-client passes to its `customFetch`. */
interface FetchOptions {
  method: string;
  headers: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

/** A fetch function for openid-client's `customFetch` that honours the call's proxy and trust. */
export function tokenFetch(s: TokenHttpSettings): (url: string, options: FetchOptions) => Promise<Response> {
  const trusted = s.insecure ? undefined : registryTrust({ env: s.env, caFile: s.cacert, cwd: s.cwd });
  return async (url, options) => {
    const target = new URL(url);
    const body = options.body === undefined || options.body === null ? "" : String(options.body);
    const res = await post(target, Buffer.from(body, "utf8"), options.headers, {
      method: options.method === "GET" ? "GET" : "POST",
      trusted,
      insecure: s.insecure,
      proxy: chooseProxy(target, s.proxy, s.env),
      signal: options.signal,
      timeoutMs: 30_000,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    const status = res.status;
    // A Response cannot carry a body with these statuses.
    const empty = status === 204 || status === 304 || (status >= 100 && status < 200);
    return new Response(empty ? null : new Uint8Array(res.body), { status, headers });
  };
}
