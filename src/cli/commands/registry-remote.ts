// The registry a command talks to (`--remote`, `--cacert`, `-k`, `--proxy`) with its API token and trust, for
// `protocall webhook` and the client commands of `protocall registry`: one reading of --remote, the
// one registry access module (src/core/registry/access.ts) for the token and trust, and one message
// when the token is missing.
import { ProtocallError } from "../../core/errors";
import { type RemoteAccess, remoteAccess } from "../../core/registry/access";
import { defineFlags } from "../args";
import type { CliContext } from "../context";
import { homeDirectory } from "../io";
import { checkProxyFlag, proxyFlag } from "./proxy-flag";
import { trustOptions } from "./trust";

export const remoteFlags = defineFlags({
  remote: {
    kind: "string",
    value: "HOST",
    required: true,
    help: "the registry instance domain (https://HOST); a full URL such as http://127.0.0.1:8080 is accepted too",
  },
  cacert: {
    kind: "string",
    value: "FILE",
    help: "also trust this CA certificate (PEM) for the registry's TLS",
  },
  ...proxyFlag,
});

/** `--remote HOST` means https://HOST; a full http(s) URL is used as given. */
export function remoteBaseUrl(remote: string): string {
  const text = remote.includes("://") ? remote : `https://${remote}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ProtocallError(
      `invalid value "${remote}" for --remote: it is not a host name or URL; write a host such as buf.example.com or a URL such as http://127.0.0.1:8080`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ProtocallError(
      `invalid value "${remote}" for --remote: it must be a host name or an http(s) URL, not ${url.protocol.replace(/:$/, "")}`,
    );
  }
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
}

/**
 * The registry's base URL and the access to it (token and trust); fails naming the places a token is
 * read from when there is none.
 */
export function openRemote(
  values: { remote: string; cacert?: string; insecure?: boolean; proxy?: string },
  ctx: CliContext,
): { baseUrl: string; access: RemoteAccess } {
  const baseUrl = remoteBaseUrl(values.remote);
  checkProxyFlag(values.proxy);
  const remote = new URL(baseUrl).host;
  const access = remoteAccess(remote, {
    ...trustOptions(ctx, values.cacert),
    home: homeDirectory(ctx),
    insecure: values.insecure,
    secure: baseUrl.startsWith("https:"),
    proxy: values.proxy,
  });
  if (!access.token) {
    throw new ProtocallError(
      `no API token for ${remote}: set PROTOCALL_TOKEN (or BUF_TOKEN) to the token, or to TOKEN@${remote} among other TOKEN@REMOTE entries, or add "machine ${remote} password <token>" to ~/.netrc`,
    );
  }
  return { baseUrl, access };
}
