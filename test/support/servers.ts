// Servers the tests share: the demo server in its configurations, the @grpc/grpc-js reflection server,
// and the demo schema as a directory and as a descriptor set.
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DemoServer, type DemoServerOptions, startDemoServer } from "../../src/demo/server";
import { runBuf } from "./buf";
import { repoRoot } from "./cli";
import type { TestPki } from "./tls";

export { startGrpcJsReflectionServer } from "./grpc-js-reflection-server";
export type { DemoServer, DemoServerOptions };
export { startDemoServer };

/** The example workspace (a buf module with the demo API): a `--schema` directory. */
export const examplesDir = join(repoRoot, "examples");

let descriptorSet: Promise<string> | undefined;

/** Builds the example workspace into a descriptor set file (once per process) and returns its path. */
export function demoDescriptorSet(): Promise<string> {
  descriptorSet ??= (async () => {
    const out = join(mkdtempSync(join(tmpdir(), "protocall-demo-schema-")), "demo.binpb");
    const r = await runBuf(["build", examplesDir, "-o", out], { timeoutMs: 60_000 });
    if (r.code !== 0 || !existsSync(out)) throw new Error(`buf build ${examplesDir} failed: ${r.stderr}`);
    return out;
  })();
  return descriptorSet;
}

/** The demo server over TLS with the test PKI's server certificate (ALPN h2 and http/1.1). */
export function startTlsDemoServer(
  pki: TestPki,
  options: Omit<DemoServerOptions, "tls"> & { requestClientCert?: boolean } = {},
): Promise<DemoServer> {
  const { requestClientCert, ...rest } = options;
  return startDemoServer({
    ...rest,
    tls: { cert: pki.server.cert, key: pki.server.key, ca: pki.ca.cert, requestClientCert },
  });
}

export interface DemoServers {
  /** HTTP/1.1 and h2c on one port, reflection v1 and v1alpha. */
  plain: DemoServer;
  /** h2c only, reflection v1alpha only (tests the fallback from v1). */
  v1alphaOnly: DemoServer;
  /** HTTP/1.1 only, no reflection. */
  http1: DemoServer;
  /** Closes all of them. */
  close(): Promise<void>;
}

/** Starts the common plain-text demo servers at once. */
export async function startDemoServers(): Promise<DemoServers> {
  const [plain, v1alphaOnly, http1] = await Promise.all([
    startDemoServer(),
    startDemoServer({ http: "h2c", reflection: ["v1alpha"] }),
    startDemoServer({ http: "1.1", reflection: false }),
  ]);
  return {
    plain,
    v1alphaOnly,
    http1,
    async close() {
      await Promise.all([plain.close(), v1alphaOnly.close(), http1.close()]);
    },
  };
}

export interface SilentServer {
  /** `127.0.0.1:<port>` */
  host: string;
  close(): Promise<void>;
}

/** A TCP server that accepts connections and reads them but never answers (not even a TLS handshake). */
export async function startSilentServer(): Promise<SilentServer> {
  const { createServer } = await import("node:net");
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    host: `127.0.0.1:${(server.address() as { port: number }).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
