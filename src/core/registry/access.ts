// Registry access: for one remote (`host[:port]`), the token a client sends (token.ts, buf's rules)
// and the certificates it trusts (trust.ts, buf's rule), decided here once for every consumer — the
// webhook commands, `protocall registry push|deliveries`, registry modules (`--schema
// REMOTE/owner/module`, `protocall build`), the language server and the editor — and the one HTTP
// client they call a registry through: a Connect transport over HTTP/1.1, as buf calls a registry,
// with `Authorization: Bearer <token>` when there is a token and nothing otherwise.
import type { JsonReadOptions, JsonWriteOptions } from "@bufbuild/protobuf";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
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
}

/** How a client reaches one remote. */
export interface RemoteAccess {
  /** `host[:port]` */
  readonly remote: string;
  readonly token?: RegistryToken;
  /** The trusted CAs in PEM; undefined: Node's defaults. */
  readonly ca?: readonly string[];
  readonly insecure: boolean;
}

/**
 * The token and trust for `remote`. Throws ProtocallError for an unreadable CA file or a malformed
 * PROTOCALL_TOKEN / BUF_TOKEN list.
 */
export function remoteAccess(remote: string, o: RemoteAccessOptions): RemoteAccess {
  const token = registryToken(remote, { env: o.env, tokens: o.tokens, home: o.home });
  const ca = registryTrust({
    env: o.env,
    caFile: o.caFile,
    caFlag: o.caFlag,
    cwd: o.cwd,
    extraCa: o.cas ? casFor(o.cas, remote) : undefined,
    extraCas: o.extraCas,
  });
  return { remote, token, ca, insecure: o.insecure === true };
}

/** The request headers that carry the access's token (none without one). */
export function authorizationHeaders(access: RemoteAccess): Record<string, string> {
  return access.token ? { authorization: `Bearer ${access.token.token}` } : {};
}

export interface RegistryTransportOptions {
  /** The registry's base URL (default `https://<remote>`). */
  readonly baseUrl?: string;
  /** Binary messages (the module API, as buf sends them) or JSON (default binary). */
  readonly binary?: boolean;
  /** The largest response body read. */
  readonly readMaxBytes?: number;
  /** How JSON messages are written and read (with binary false). */
  readonly jsonOptions?: Partial<JsonReadOptions & JsonWriteOptions>;
}

/** The transport every registry call goes through: the access's token and trust, HTTP/1.1. */
export function registryTransport(access: RemoteAccess, o: RegistryTransportOptions = {}): Transport {
  const headers = authorizationHeaders(access);
  const auth: Interceptor = (next) => (req) => {
    for (const [name, value] of Object.entries(headers)) req.header.set(name, value);
    return next(req);
  };
  const tls = {
    ...(access.ca ? { ca: [...access.ca] } : {}),
    ...(access.insecure ? { rejectUnauthorized: false } : {}),
  };
  return createConnectTransport({
    baseUrl: o.baseUrl ?? `https://${access.remote}`,
    httpVersion: "1.1",
    useBinaryFormat: o.binary ?? true,
    interceptors: [auth],
    nodeOptions: Object.keys(tls).length > 0 ? tls : undefined,
    readMaxBytes: o.readMaxBytes,
    jsonOptions: o.jsonOptions,
  });
}

/** The CA the editor holds for `remote`, compared as tokens are (as written, then ignoring case). */
function casFor(cas: Readonly<Record<string, string>>, remote: string): string | undefined {
  if (cas[remote] !== undefined) return cas[remote];
  const lower = remote.toLowerCase();
  return Object.entries(cas).find(([r]) => r.toLowerCase() === lower)?.[1];
}
