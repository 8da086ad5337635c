// The one Connect transport registry calls go through (the module API, as buf 1.75 calls it, and the
// registry emulator's RegistryService): HTTP/1.1, `Authorization: Bearer <token>` when the access
// has a token and nothing otherwise, the access's trust, and keep-alive connections shared by calls.
import http from "node:http";
import https from "node:https";
import type { JsonReadOptions, JsonWriteOptions } from "@bufbuild/protobuf";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
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
    nodeOptions: { agent: agentFor(baseUrl, access) },
    readMaxBytes: o.readMaxBytes,
    jsonOptions: o.jsonOptions,
  });
}

// Keep-alive pools, one per scheme and trust, at most 64 connections per registry (more calls wait
// their turn): a listing of many pages or a burst of calls reuses connections instead of opening one
// per call. A pool with a trusted list is kept with that list (one per access), so its key is the
// list itself, not its ~200 KB of text.
const plain = new http.Agent({ keepAlive: true, maxSockets: 64 });
const byTrust = new WeakMap<readonly string[], https.Agent>();
const byDefault = new Map<boolean, https.Agent>();

function agentFor(baseUrl: string, access: RemoteAccess): http.Agent {
  if (!baseUrl.startsWith("https:")) return plain;
  if (access.insecure) return create(byDefault, true, () => newAgent(access));
  if (!access.ca) return create(byDefault, false, () => newAgent(access));
  let agent = byTrust.get(access.ca);
  if (!agent) {
    agent = newAgent(access);
    byTrust.set(access.ca, agent);
  }
  return agent;
}

function create(map: Map<boolean, https.Agent>, key: boolean, make: () => https.Agent): https.Agent {
  let agent = map.get(key);
  if (!agent) {
    agent = make();
    map.set(key, agent);
  }
  return agent;
}

function newAgent(access: RemoteAccess): https.Agent {
  return new https.Agent({
    keepAlive: true,
    maxSockets: 64,
    ...(access.ca && !access.insecure ? { ca: [...access.ca] } : {}),
    rejectUnauthorized: !access.insecure,
  });
}
