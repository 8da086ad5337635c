// `--proxy URL` for the commands that connect outside the call pipeline (the registry's webhook and
// client APIs, webhook test posts, the listener's forwards and replays): the flag as `protocall curl`
// has it, and the one proxy choice (core/invoke/proxy-choice.ts) applied to a target with it, so
// every command reads HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY and the flag the same way.
import { chooseProxy, normalizeProxyUrl, type ProxyChoice } from "../../core/invoke/proxy-choice";
import { defineFlags } from "../args";
import type { CliContext } from "../context";

export const proxyFlag = defineFlags({
  proxy: {
    kind: "string",
    value: "URL",
    help: "HTTP proxy, http://[user:password@]host:port (CONNECT tunnel; TLS runs end to end). Replaces HTTPS_PROXY, HTTP_PROXY and ALL_PROXY; NO_PROXY, localhost and loopback addresses still go direct",
  },
});

/** Fails early (before any connection) when --proxy is not a proxy URL. */
export function checkProxyFlag(proxy: string | undefined): void {
  if (proxy !== undefined) normalizeProxyUrl(proxy, "--proxy");
}

/** The proxy a connection to `target` uses: --proxy, else the environment's; undefined = direct. */
export function proxyTo(
  target: string | URL,
  proxy: string | undefined,
  ctx: CliContext,
): ProxyChoice | undefined {
  return chooseProxy(typeof target === "string" ? new URL(target) : target, proxy, ctx.env);
}
