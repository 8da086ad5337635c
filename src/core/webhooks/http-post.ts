// One HTTP POST (or GET) with a buffered body and a buffered response, over http or https, with the trust
// settings the webhook features need (system roots plus an extra CA, or no verification at all).
// Used by the registry client, the emulator's deliveries, the listener's forwarding and replays, and
// the OAuth2 token requests (src/core/auth/token-fetch.ts).
import http from "node:http";
import https from "node:https";
import { rootCertificates } from "node:tls";
import type { ProxyChoice } from "../invoke/proxy-choice";

/** The proxy agent module, loaded by the first proxied post only (it loads Connect's error type). */
let proxyAgents: typeof import("../invoke/proxy-agent") | undefined;

export interface PostOptions {
  /** PEM of extra CA certificates, trusted in addition to the system roots. */
  readonly ca?: string;
  /**
   * The trusted CAs in PEM, exactly (the registry trust rule's list, src/core/registry/trust.ts),
   * instead of Node's roots plus `ca`.
   */
  readonly trusted?: readonly string[];
  /** Skip TLS verification (`-k`). */
  readonly insecure?: boolean;
  /** Gives up after this many milliseconds (default 30 s). */
  readonly timeoutMs?: number;
  /** Largest response body kept, in bytes (default 4 MiB); the rest is dropped. */
  readonly maxResponseBytes?: number;
  /** Aborts the request (it then rejects). */
  readonly signal?: AbortSignal;
  /** The proxy to tunnel through (proxy-choice.ts); undefined = direct. */
  readonly proxy?: ProxyChoice;
  /** The request method (default POST; GET for an OpenID provider's discovery document). */
  readonly method?: "GET" | "POST";
}

export interface PostResult {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  readonly latencyMs: number;
}

// Keep-alive pools, at most 64 connections per destination (more requests wait their turn), so that
// forwarding thousands of events per second cannot exhaust sockets.
const agents = new Map<string, http.Agent>();

// A trusted list is keyed by identity (one list per registry access), not by its ~200 KB of text.
const listIds = new WeakMap<readonly string[], number>();
let lists = 0;

function listId(list: readonly string[] | undefined): string {
  if (!list) return "";
  let id = listIds.get(list);
  if (id === undefined) {
    id = ++lists;
    listIds.set(list, id);
  }
  return String(id);
}

function agentFor(url: URL, options: PostOptions): http.Agent {
  const key = `${url.protocol}|${options.insecure ? 1 : 0}|${options.ca ?? ""}|${listId(options.trusted)}|${options.proxy?.url ?? ""}`;
  let agent = agents.get(key);
  if (!agent) {
    const trust: https.AgentOptions = {
      rejectUnauthorized: !options.insecure,
      ca: options.trusted ? [...options.trusted] : options.ca ? [...rootCertificates, options.ca] : undefined,
    };
    agent =
      options.proxy && proxyAgents
        ? proxyAgents.proxiedAgent(url, options.proxy, trust)
        : url.protocol === "https:"
          ? new https.Agent({ keepAlive: true, maxSockets: 64, ...trust })
          : new http.Agent({ keepAlive: true, maxSockets: 64 });
    agents.set(key, agent);
  }
  return agent;
}

/** POSTs `body` to `url`. Rejects with the network error (refused, TLS, timeout); never on a status. */
export function post(
  url: string | URL,
  body: Uint8Array,
  headers: Record<string, string>,
  options: PostOptions = {},
): Promise<PostResult> {
  if (options.proxy && !proxyAgents) {
    return import("../invoke/proxy-agent").then((m) => {
      proxyAgents = m;
      return post(url, body, headers, options);
    });
  }
  const target = typeof url === "string" ? new URL(url) : url;
  if (target.protocol !== "http:" && target.protocol !== "https:") {
    return Promise.reject(new Error(`unsupported URL scheme ${target.protocol} (use http or https)`));
  }
  const lib = target.protocol === "https:" ? https : http;
  const maxBytes = options.maxResponseBytes ?? 4 * 1024 * 1024;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = lib.request(
      target,
      {
        method: options.method ?? "POST",
        agent: agentFor(target, options),
        headers: { ...headers, "content-length": String(body.byteLength) },
        timeout: options.timeoutMs ?? 30_000,
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          if (size < maxBytes) chunks.push(chunk.subarray(0, maxBytes - size));
          size += chunk.length;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            latencyMs: performance.now() - started,
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no response within ${options.timeoutMs ?? 30_000} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** Closes the pooled keep-alive connections (tests and short-lived commands call it when done). */
export function closePostConnections(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}
