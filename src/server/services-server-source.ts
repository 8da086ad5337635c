// A server of the Services view as a schema source: server reflection at its URL with its headers
// and TLS options, opened as `protocall curl` opens a target (reflection-source.ts), once per server
// entry and kept in the schema store until "Refresh".

import { reflectionTarget } from "../core/analysis/reflection-source";
import type { Opened, SchemaStore } from "../core/analysis/schema-store";
import { errorMessage, ProtocallError } from "../core/errors";
import { type CurlOptions, defaultCurlOptions } from "../core/invoke/options";
import type { ServiceServer } from "./protocol";

/** The server's base URL without a trailing slash; throws a ProtocallError saying how to fix a bad one. */
export function serverBaseUrl(server: ServiceServer): string {
  const raw = typeof server.url === "string" ? server.url.trim() : "";
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ProtocallError(
      `the server URL "${raw}" is not a URL; write it as http://host:port or https://host (protocall.servers)`,
    );
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new ProtocallError(
      `the server URL "${raw}" must start with http:// or https:// (protocall.servers)`,
    );
  }
  return raw.replace(/\/+$/, "");
}

/** The curl options a server entry stands for (URL, protocol, headers, TLS). */
export function serverCurlOptions(server: ServiceServer): CurlOptions {
  const o = defaultCurlOptions();
  o.url = serverBaseUrl(server);
  if (server.protocol) o.protocol = server.protocol;
  o.headers = (server.headers ?? []).filter((h) => typeof h === "string");
  o.http2PriorKnowledge = server.http2PriorKnowledge === true;
  if (server.insecure) o.insecure = true;
  if (server.cacert) o.cacert = server.cacert;
  if (server.cert) o.cert = server.cert;
  if (server.key) o.key = server.key;
  if (server.servername) o.servername = server.servername;
  if (server.reflectProtocol) o.reflectProtocol = server.reflectProtocol;
  return o;
}

/** Opens (or reuses) the reflection source of a server entry. Relative TLS paths resolve against `baseDir`. */
export async function openServerSource(
  store: SchemaStore,
  server: ServiceServer,
  baseDir: string,
): Promise<Opened> {
  try {
    const o = serverCurlOptions(server);
    const target = await reflectionTarget(o, o.url as string, baseDir, {
      timeoutMs: store.currentSettings.reflectionTimeoutMs,
    });
    return await store.reflection(`view\u0000${target.key}`, target.open);
  } catch (err) {
    return { problem: errorMessage(err) };
  }
}
