// The one Connect transport registry calls go through (the module API, as buf 1.75 calls it, and the
// registry emulator's RegistryService): HTTP/1.1, `Authorization: Bearer <token>` when the access
// has a token and nothing otherwise, and the access's trust.
import type https from "node:https";
import type { JsonReadOptions, JsonWriteOptions } from "@bufbuild/protobuf";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { proxiedAgent } from "../invoke/proxy-agent";
import { proxyFor } from "../invoke/proxy-choice";
import { authorizationHeaders, type RemoteAccess } from "./access";

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
  const baseUrl = o.baseUrl ?? `https://${access.remote}`;
  return createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    useBinaryFormat: o.binary ?? true,
    interceptors: [auth],
    // Node's shared pool keeps connections alive (per trust); a pool of our own measured slower for
    // a CLI call (a registry module's --list-methods: about 25 ms).
    nodeOptions: nodeOptions(access, new URL(baseUrl)),
    readMaxBytes: o.readMaxBytes,
    jsonOptions: o.jsonOptions,
  });
}

/** The access's trust, and through its proxy (HTTPS_PROXY, NO_PROXY, ...) an agent that tunnels. */
function nodeOptions(access: RemoteAccess, url: URL): https.RequestOptions | undefined {
  const trust = tlsOptions(access);
  const proxy = proxyFor(url, access.proxy);
  if (!proxy) return trust;
  return { agent: proxiedAgent(url, proxy, trust ?? {}) };
}

function tlsOptions(access: RemoteAccess): https.AgentOptions | undefined {
  if (access.insecure) return { rejectUnauthorized: false };
  return access.ca ? { ca: [...access.ca] } : undefined;
}
