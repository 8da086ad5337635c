// Registry access: for one remote (`host[:port]`), the token a client sends (token.ts, buf's rules)
// and the certificates it trusts (trust.ts, buf's rule), decided here once for every consumer — the
// webhook commands and the Webhooks view, `protocall registry push|deliveries`, the editor's local
// registry, registry modules (`--schema REMOTE/owner/module`, `protocall build`, the language server,
// the editor's Send). Calls then go through transport.ts (the Connect transport of the module API and
// the emulator's RegistryService) or, for the webhook client's JSON posts, http-post with this trust.
// Light on purpose (no HTTP client here): the webhook commands load it at start.
import { type ProxyConfig, proxyConfig } from "../invoke/proxy-choice";
import { type RegistryToken, registryToken } from "./token";
import { registryTrust } from "./trust";

export interface RemoteAccessOptions {
  /** Tokens (PROTOCALL_TOKEN, BUF_TOKEN, NETRC, HOME) and trust (SSL_CERT_FILE, SSL_CERT_DIR, NODE_EXTRA_CA_CERTS). */
  readonly env: NodeJS.ProcessEnv;
  /** The home directory for ~/.netrc (default: HOME from env, else the OS's). */
  readonly home?: string;
  /** Tokens the editor holds, by remote: asked before the environment. */
  readonly tokens?: Readonly<Record<string, string>>;
  /** CAs (PEM) the editor trusts, by remote (a registry's `caFile`, the local registry's own). */
  readonly cas?: Readonly<Record<string, string>>;
  /** An extra PEM file of trusted CAs (`--cacert`), relative to cwd. */
  readonly caFile?: string;
  /** What names caFile in messages (default `--cacert`). */
  readonly caFlag?: string;
  readonly cwd?: string;
  /** More trusted CAs in PEM (the certificates Protocall's own servers generated on this machine). */
  readonly extraCas?: readonly string[];
  /** Skip TLS verification (`-k`). */
  readonly insecure?: boolean;
  /**
   * False when the registry is reached over plain http (a local emulator): no certificates are then
   * read, unless caFile names one (so a wrong --cacert is still reported). Default true.
   */
  readonly secure?: boolean;
  /** An explicit proxy (`--proxy`, the editor's `http.proxy`) instead of HTTPS_PROXY / HTTP_PROXY. */
  readonly proxy?: string;
}

/** How a client reaches one remote. */
export interface RemoteAccess {
  /** `host[:port]` */
  readonly remote: string;
  readonly token?: RegistryToken;
  /** The trusted CAs in PEM; undefined: Node's defaults. */
  readonly ca?: readonly string[];
  readonly insecure: boolean;
  /** Where calls to the remote find their proxy (the environment's variables, NO_PROXY included). */
  readonly proxy: ProxyConfig;
}

/**
 * The token and trust for `remote`. Throws ProtocallError for an unreadable CA file or a malformed
 * PROTOCALL_TOKEN / BUF_TOKEN list.
 */
export function remoteAccess(remote: string, o: RemoteAccessOptions): RemoteAccess {
  const token = registryToken(remote, { env: o.env, tokens: o.tokens, home: o.home });
  const ca =
    o.secure === false && !o.caFile
      ? undefined
      : registryTrust({
          env: o.env,
          caFile: o.caFile,
          caFlag: o.caFlag,
          cwd: o.cwd,
          extraCa: o.cas ? casFor(o.cas, remote) : undefined,
          extraCas: o.extraCas,
        });
  return { remote, token, ca, insecure: o.insecure === true, proxy: proxyConfig(o.env, o.proxy) };
}

/** The request headers that carry the access's token (none without one). */
export function authorizationHeaders(access: RemoteAccess): Record<string, string> {
  return access.token ? { authorization: `Bearer ${access.token.token}` } : {};
}

/** The CA the editor holds for `remote`, compared as tokens are (as written, then ignoring case). */
function casFor(cas: Readonly<Record<string, string>>, remote: string): string | undefined {
  if (cas[remote] !== undefined) return cas[remote];
  const lower = remote.toLowerCase();
  return Object.entries(cas).find(([r]) => r.toLowerCase() === lower)?.[1];
}
