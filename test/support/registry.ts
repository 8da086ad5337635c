// A registry emulator for tests that use a real registry client (the buf CLI, or Protocall's own):
// `protocall registry serve`'s server, started in this process or (`cli: true`) as the real command,
// over https with a test CA made for the run, named `localhost:PORT` (the remote buf expects: a host
// name, here with a port), plus the environment a client needs to trust and reach it (SSL_CERT_FILE,
// BUF_TOKEN, a private HOME and buf cache), with functions that write module workspaces and run buf.
//
//   const registry = await startTestRegistry({ config: { users: [...], repositories: [...] } });
//   await writeWorkspace(dir, { "buf.yaml": registry.bufYaml([{ path: "a", name: "acme/a" }]), ... });
//   const r = await registry.buf(["push", "--create", "--create-visibility", "private"], { cwd: dir, token: "alice-token" });
//   ...
//   await registry.close();
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseRegistryConfig, type RegistryConfig } from "../../src/core/registry-emulator/config";
import {
  type RegistryEmulator,
  type RegistryEmulatorOptions,
  startRegistryEmulator,
} from "../../src/core/registry-emulator/server";
import { type CliServer, startCliServer } from "../core/webhooks/support";
import { bufPath } from "./buf";
import { type RunOptions, type RunResult, runProcess } from "./cli";
import { createTestPki, type TestPki } from "./tls";

/** Users alice (Admin of acme/petapis), bob (member), carol (no role); owner acme may hold new modules. */
export const testRegistryConfig = {
  users: [
    { name: "alice", token: "alice-token" },
    { name: "bob", token: "bob-token" },
    { name: "carol", token: "carol-token" },
  ],
  repositories: [{ owner: "acme", name: "petapis", admins: ["alice"], members: ["bob"] }],
  organizations: [{ name: "acme", admins: ["alice"], members: ["bob"] }],
};

export interface TestRegistryOptions extends Partial<Omit<RegistryEmulatorOptions, "config" | "tls">> {
  /** The registry configuration as JSON (default: testRegistryConfig). */
  readonly config?: unknown;
  /** Reuse a PKI (default: a new one). */
  readonly pki?: TestPki;
  /**
   * Run `protocall registry serve --verbose` (dist/cli.js) instead of the server in this process.
   * Passes --config, --cert/--key, --state, --batch-interval, --batch-size and --trust-ca from the options.
   */
  readonly cli?: boolean;
}

export interface BufRunOptions extends RunOptions {
  /** The token buf sends (BUF_TOKEN); none when undefined. */
  readonly token?: string;
  /** buf's cache directory (default: one shared by this registry's runs). */
  readonly cacheDir?: string;
}

export interface TestRegistry {
  /** The server in this process (undefined with `cli`). */
  readonly emulator?: RegistryEmulator;
  /** The `protocall registry serve --verbose` process (with `cli`), with its output lines. */
  readonly process?: CliServer;
  /** https://127.0.0.1:PORT */
  readonly url: string;
  readonly port: number;
  /** `localhost:PORT`: the registry part of module names and of BUF_TOKEN's `token@remote` form. */
  readonly remote: string;
  readonly pki: TestPki;
  readonly config: RegistryConfig;
  /** A HOME for clients (netrc, caches): empty, private to this registry. */
  readonly home: string;
  /** Environment for a client process: trust the test CA, private HOME and buf cache, the token. */
  env(token?: string, cacheDir?: string): Record<string, string | undefined>;
  /** Runs the real buf with `env(token)`. */
  buf(args: string[], options?: BufRunOptions): Promise<RunResult>;
  /** A buf.yaml (v2) naming modules on this registry: `name` is `owner/module`. */
  bufYaml(modules: readonly { path: string; name: string }[], deps?: readonly string[]): string;
  /** A new, empty buf cache directory (a client that has never downloaded anything). */
  freshCache(): string;
  close(): Promise<void>;
}

export async function startTestRegistry(options: TestRegistryOptions = {}): Promise<TestRegistry> {
  const pki = options.pki ?? (await createTestPki(["localhost"]));
  const configJson = options.config ?? testRegistryConfig;
  const config = parseRegistryConfig(configJson);
  let emulator: RegistryEmulator | undefined;
  let server: CliServer | undefined;
  if (options.cli) {
    const configPath = join(mkdtempSync(join(tmpdir(), "protocall-registry-config-")), "config.json");
    writeFileSync(configPath, JSON.stringify(configJson));
    const args = ["registry", "serve", "--verbose", "--config", configPath];
    args.push("--cert", pki.server.certPath, "--key", pki.server.keyPath);
    if (options.statePath) args.push("--state", options.statePath);
    if (options.batchIntervalMs) args.push("--batch-interval", `${options.batchIntervalMs}ms`);
    if (options.batchSize) args.push("--batch-size", String(options.batchSize));
    if (options.trustCa) {
      const caPath = join(dirname(configPath), "trust-ca.pem");
      writeFileSync(caPath, options.trustCa);
      args.push("--trust-ca", caPath);
    }
    server = await startCliServer(args);
  } else {
    emulator = await startRegistryEmulator({
      ...options,
      config,
      host: "127.0.0.1",
      tls: { cert: pki.server.cert, key: pki.server.key },
    });
  }
  const url = emulator?.url ?? server!.url;
  const port = Number(new URL(url).port);
  const remote = `localhost:${port}`;
  const home = mkdtempSync(join(tmpdir(), "protocall-registry-home-"));
  const sharedCache = mkdtempSync(join(tmpdir(), "protocall-buf-cache-"));
  const env = (token?: string, cacheDir = sharedCache) => ({
    SSL_CERT_FILE: pki.ca.certPath,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    BUF_CACHE_DIR: cacheDir,
    BUF_TOKEN: token,
    NETRC: undefined,
    PROTOCALL_TOKEN: undefined,
  });
  return {
    emulator,
    process: server,
    url,
    port,
    remote,
    pki,
    config,
    home,
    env,
    buf: (args, run = {}) =>
      runProcess(bufPath, args, {
        timeoutMs: 60_000,
        ...run,
        env: { ...env(run.token, run.cacheDir), ...run.env },
      }),
    bufYaml(modules, deps = []) {
      const lines = ["version: v2", "modules:"];
      for (const m of modules) lines.push(`  - path: ${m.path}`, `    name: ${remote}/${m.name}`);
      if (deps.length) {
        lines.push("deps:");
        for (const d of deps) lines.push(`  - ${d.startsWith(remote) ? d : `${remote}/${d}`}`);
      }
      return `${lines.join("\n")}\n`;
    },
    freshCache: () => mkdtempSync(join(tmpdir(), "protocall-buf-cache-")),
    async close() {
      await emulator?.close();
      await server?.stop();
    },
  };
}

/** Writes files (path relative to `dir` → text) and returns `dir`. */
export function writeWorkspace(dir: string, files: Record<string, string>): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** A new temporary directory holding `files`. */
export function tempWorkspace(files: Record<string, string>): string {
  return writeWorkspace(mkdtempSync(join(tmpdir(), "protocall-ws-")), files);
}
