// Third-party gRPC peers for the interop tests: the gRPC interop TestService on grpc-go (with grpc-go's
// reflection service) and on grpc Python (C-core, no reflection), and grpc-go's interop client, built
// from Debian packages by scripts/build-interop.sh (once; the script caches by a hash of its inputs). Each server
// process listens on two ephemeral loopback ports, plain text and TLS (the test PKI's server
// certificate), and stops when its stdin closes or when it is killed.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot, runProcess } from "./cli";
import type { TestPki } from "./tls";

export interface InteropBuild {
  /** The grpc-go server executable. */
  goServer: string;
  /** The grpc-go interop client executable. */
  goClient: string;
  /** The directory holding the Python modules generated from grpc/testing/*.proto. */
  pythonGenerated: string;
  /** A descriptor set of grpc/testing/{empty,messages,test}.proto, for --schema. */
  descriptorSet: string;
}

let build: Promise<InteropBuild> | undefined;

/** Builds the servers (or finds the cached build); once per process. */
export function buildInteropServers(): Promise<InteropBuild> {
  build ??= (async () => {
    const r = await runProcess("bash", [join(repoRoot, "scripts/build-interop.sh")], {
      timeoutMs: 15 * 60_000,
    });
    const dir = r.stdout.trim().split("\n").pop() ?? "";
    if (r.code !== 0 || !dir) {
      throw new Error(`scripts/build-interop.sh failed (exit ${r.code}):\n${r.stderr}${r.stdout}`);
    }
    return {
      goServer: join(dir, "grpc-go-interop-server"),
      goClient: join(dir, "grpc-go-interop-client"),
      pythonGenerated: join(dir, "python"),
      descriptorSet: join(dir, "interop.binpb"),
    };
  })();
  return build;
}

/** The cases of grpc-go's interop client that every test runs: each streaming shape, an error, metadata. */
export const goClientCases = [
  "empty_unary",
  "large_unary",
  "client_streaming",
  "server_streaming",
  "ping_pong",
  "status_code_and_message",
  "custom_metadata",
];

/** Runs grpc-go's interop client with `goClientCases` against the plain-text server on `port`. */
export async function runGoClient(build: InteropBuild, port: string) {
  return runProcess(build.goClient, ["--server_port", port, "--test_case", goClientCases.join(",")], {
    timeoutMs: 120_000,
  });
}

export type InteropServerKind = "grpc-go" | "grpc-python";

export interface InteropServer {
  kind: InteropServerKind;
  /** `http://127.0.0.1:<port>` (h2c). */
  plainUrl: string;
  /** `https://127.0.0.1:<port>`, with the PKI's server certificate (valid for localhost, 127.0.0.1). */
  tlsUrl: string;
  close(): Promise<void>;
}

/** Python's path: Debian's interpreter, whose dist-packages hold grpcio and protobuf. */
const debianPython = "/usr/bin/python3";

/** Starts one server process; resolves once it has printed its ports. */
export async function startInteropServer(kind: InteropServerKind, pki: TestPki): Promise<InteropServer> {
  const b = await buildInteropServers();
  const tlsArgs =
    kind === "grpc-go"
      ? ["-cert", pki.server.certPath, "-key", pki.server.keyPath]
      : ["--cert", pki.server.certPath, "--key", pki.server.keyPath];
  const child: ChildProcessWithoutNullStreams =
    kind === "grpc-go"
      ? spawn(b.goServer, tlsArgs)
      : spawn(debianPython, [
          join(repoRoot, "test/support/interop/grpc-python/server.py"),
          b.pythonGenerated,
          ...tlsArgs,
        ]);
  const ports = await new Promise<{ plain: number; tls: number }>((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => fail(new Error("did not print its ports within 60 s")), 60_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`the ${kind} interop server: ${e.message}\n${err}`));
    };
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.slice(0, nl)));
      } catch {
        fail(new Error(`printed ${JSON.stringify(out)} instead of its ports`));
      }
    });
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`exited with ${code} before printing its ports`)));
  });
  child.removeAllListeners("exit");
  return {
    kind,
    plainUrl: `http://127.0.0.1:${ports.plain}`,
    tlsUrl: `https://127.0.0.1:${ports.tls}`,
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}
