// The registry a command talks to (`--remote`, `--cacert`) and its API token, for `protocall webhook`
// and the client commands of `protocall registry`: one reading of --remote and one message when the
// token is missing.
import { ProtocallError } from "../../core/errors";
import { resolveToken } from "../../core/webhooks/token";
import { defineFlags } from "../args";
import type { CliContext } from "../context";
import { homeDirectory } from "../io";

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

/** The registry's base URL and the API token for it; fails naming the places a token is read from. */
export function openRemote(values: { remote: string }, ctx: CliContext): { baseUrl: string; token: string } {
  const baseUrl = remoteBaseUrl(values.remote);
  const url = new URL(baseUrl);
  const token = resolveToken(ctx.env, url.host, homeDirectory(ctx));
  if (!token) {
    throw new ProtocallError(
      `no API token for ${url.host}: set PROTOCALL_TOKEN (or BUF_TOKEN), or add "machine ${url.host} password <token>" to ~/.netrc`,
    );
  }
  return { baseUrl, token: token.token };
}
