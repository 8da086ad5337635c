// A reflection source for the language server: a transport built from a request's (or a server
// entry's) curl options, and the core reflection client on it. Closing the source closes the
// transport too.
import type { CurlOptions } from "../core/invoke/options";
import { chooseHttpMode, createCurlTransport } from "../core/invoke/transport";
import { createVerboseLog } from "../core/invoke/verbose";
import { createReflectionSource } from "../core/schema/reflection-client";
import type { FileSource } from "../core/schema/types";

export interface ReflectionTarget {
  /** Protocol, HTTP/2, TLS and Unix-socket options. */
  options: CurlOptions;
  /** The server's base URL. */
  base: string;
  authority?: string;
  /** Headers sent with the reflection calls. */
  headers: [string, string][];
  /** Relative certificate paths resolve against it. */
  baseDir: string;
  connectTimeoutMs: number;
  /** Milliseconds one reflection look-up may take. */
  timeoutMs: number;
}

export async function openReflectionSource(t: ReflectionTarget): Promise<FileSource> {
  const o = t.options;
  const { mode } = chooseHttpMode(o, t.base.startsWith("https:"), true);
  const transport = await createCurlTransport({
    baseUrl: t.base,
    protocol: o.protocol,
    mode,
    authority: t.authority,
    unixSocket: o.unixSocket,
    connectTimeoutMs: t.connectTimeoutMs,
    cacert: o.cacert,
    cert: o.cert,
    key: o.key,
    insecure: o.insecure,
    servername: o.servername,
    cwd: t.baseDir,
    log: createVerboseLog(false, () => {}),
  });
  const source = createReflectionSource({
    transport: transport.transport,
    headers: t.headers,
    version: o.reflectProtocol ?? "auto",
    label: `reflection at ${t.base}`,
    timeoutMs: t.timeoutMs,
  });
  const close = source.close.bind(source);
  source.close = async () => {
    await close().catch(() => {});
    transport.close();
  };
  return source;
}
