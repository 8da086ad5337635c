// A server of the Services view as a schema source: server reflection at its URL with its headers
// and TLS options, exactly as `protocall curl` reflects (same transport, same header reading), opened
// once per server entry and kept in the schema store until "Refresh".
import { homedir } from "node:os";
import { Readable } from "node:stream";
import { errorMessage, ProtocallError } from "../core/errors";
import { readCurlHeaders } from "../core/invoke/headers";
import { type CurlOptions, defaultCurlOptions } from "../core/invoke/options";
import type { FileSource } from "../core/schema/types";
import type { ServiceServer } from "./protocol";
import { openReflectionSource } from "./reflection-source";
import type { Opened, SchemaStore } from "./schema-store";

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
export function openServerSource(
  store: SchemaStore,
  server: ServiceServer,
  baseDir: string,
): Promise<Opened> {
  let o: CurlOptions;
  try {
    o = serverCurlOptions(server);
  } catch (err) {
    return Promise.resolve({ problem: errorMessage(err) });
  }
  const base = o.url as string;
  const key = `view\u0000${JSON.stringify([base, o.protocol, o.headers, o.http2PriorKnowledge, o.insecure, o.cacert, o.cert, o.key, o.servername, o.reflectProtocol, baseDir])}`;
  return store.reflection(key, async (): Promise<FileSource> => {
    const settings = store.currentSettings;
    const h = await readCurlHeaders(o, {
      cwd: baseDir,
      env: process.env,
      stdin: Readable.from([]),
      stdinIsTTY: false,
      homedir: homedir(),
    });
    return openReflectionSource({
      options: o,
      base,
      authority: h.authority,
      headers: h.headers,
      baseDir,
      connectTimeoutMs: Math.min(3000, settings.reflectionTimeoutMs),
      timeoutMs: settings.reflectionTimeoutMs,
    });
  });
}
