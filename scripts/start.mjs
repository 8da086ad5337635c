#!/usr/bin/env node
// `npm start`: builds Protocall and starts, ready to use together:
//   - the demo server (demo.v1 with server reflection: unary, the three streaming shapes, and Fail with
//     error details) on http://127.0.0.1:8080;
//   - a registry emulator with examples/registry/config.json on https://127.0.0.1:8443, with a
//     certificate made for this run that the editor (the registry's caFile), `protocall registry
//     push` (--cacert) and the real buf (SSL_CERT_FILE) trust, and trusting the certificate of the
//     editor's local listener (made before the editor first runs), so a webhook created in the editor
//     on that listener receives every push;
//   - a real VS Code (code-server, installed on first use into .tools/, without Chromium: the user's
//     own browser opens it) with the extension on the examples/ workspace, its settings pointing the
//     Services view at the demo server and the Webhooks view at the registry.
// Prints the URL to open and the commands that push to the registry, and runs until Ctrl+C (or
// SIGTERM), then stops everything it started and removes its temporary folders (the editor's too).
// A port that is taken is named, with the port used instead; when the demo server is not on 8080 the
// editor opens a copy of examples/ whose request files name its port (the copy's place is printed).
// Usage: npm start [-- --cli | --port N | --registry-port N | --editor-port N | --no-build]
//   --cli               the command-line demo instead (scripts/demo.mjs; same as `npm run demo`)
//   --port N            demo server port (default 8080; 0: any free port)
//   --registry-port N   registry emulator port (default 8443; 0: any free port)
//   --editor-port N     code-server port (default 8090; 0: any free port)
//   --no-build          use dist/ as it is
// Run with `node --import tsx scripts/start.mjs` (npm start does): it uses test/support/code-server.ts
// and the core's certificate generation.
import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);

if (argv.includes("--cli")) {
  const r = spawnSync(
    process.execPath,
    [join(root, "scripts/demo.mjs"), ...argv.filter((a) => a !== "--cli")],
    {
      stdio: "inherit",
    },
  );
  process.exit(r.status ?? 1);
}

function flag(name, fallback) {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    process.stderr.write(`start: ${name} needs a port number from 0 to 65535 (0: any free port)\n`);
    process.exit(2);
  }
  return value;
}
const demoPortWanted = flag("--port", 8080);
const registryPortWanted = flag("--registry-port", 8443);
const editorPortWanted = flag("--editor-port", 8090);
const build = !argv.includes("--no-build");

/** `port` if it is free on 127.0.0.1, else a free one, saying which port was busy. */
async function portFor(port, what, option) {
  const tryListen = (p) =>
    new Promise((r) => {
      const s = net.createServer();
      s.once("error", () => r(undefined));
      s.listen(p, "127.0.0.1", () => {
        const got = s.address().port;
        s.close(() => r(got));
      });
    });
  if (port !== 0) {
    const got = await tryListen(port);
    if (got !== undefined) return got;
  }
  const free = await tryListen(0);
  if (port !== 0) {
    process.stdout.write(
      `Port ${port} is busy (another program listens on it): the ${what} uses port ${free} instead (choose one with ${option} N).\n`,
    );
  }
  return free;
}

/** Spawns `args` with node and resolves with the child and the first line it prints. */
function startChild(args, what) {
  return new Promise((resolveStart, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    createInterface({ input: child.stdout }).once("line", (line) =>
      resolveStart({ child, line: line.trim() }),
    );
    child.once("exit", (code) => reject(new Error(`${what} exited (${code}): ${stderr.trim()}`)));
  });
}

const children = [];
let closeEditor;
/** This run's folder: the registry's certificate, buf's workspace, the copy of examples/ if any. */
const runDir = mkdtempSync(join(tmpdir(), "protocall-start-"));
let stopping = false;

/** Stops the children, the editor (its process group and temp folder) and removes this run's folder. */
async function stop(code) {
  if (stopping) return;
  stopping = true;
  process.stdout.write("\nStopping...\n");
  const exits = children
    .filter((c) => c.exitCode === null && c.signalCode === null)
    .map((c) => new Promise((r) => c.once("exit", r)));
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  await closeEditor?.().catch(() => {});
  await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 5000).unref())]);
  rmSync(runDir, { recursive: true, force: true });
  process.exit(code);
}

const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
const onSignal = () => void stop(0);
for (const signal of signals) process.prependListener(signal, onSignal);

/**
 * test/support/code-server.ts adds signal handlers that kill code-server and exit at once, before its
 * folder is removed; `stop` does all of that in order, so those are taken off once it has added them.
 */
function keepOnlyOurSignalHandlers() {
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (listener !== onSignal) process.removeListener(signal, listener);
    }
  }
}

async function main() {
  if (build) {
    process.stdout.write("Building Protocall...\n");
    const b = spawnSync(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: "inherit" });
    if (b.status !== 0) throw new Error("the build failed");
  }
  await esbuild.build({
    entryPoints: { "demo-server": join(root, "src/demo/main.ts") },
    outdir: join(root, "dist"),
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    sourcemap: true,
    logLevel: "warning",
  });
  const { codeServerInstalled, startCodeServer } = await import("../test/support/code-server.ts");
  const { ensureSelfSignedCert } = await import("../src/core/webhooks/self-signed.ts");
  if (!codeServerInstalled()) {
    process.stdout.write("Installing code-server (VS Code in the browser) into .tools/, once...\n");
    const r = spawnSync("bash", [join(root, "scripts/install-code-server.sh"), "--no-chromium"], {
      cwd: root,
      stdio: "inherit",
    });
    if (r.status !== 0)
      throw new Error("the code-server install failed (bash scripts/install-code-server.sh --no-chromium)");
  }

  const demoPort = await portFor(demoPortWanted, "demo server", "--port");
  const demo = await startChild(
    [join(root, "dist/demo-server.js"), "--port", String(demoPort)],
    "the demo server",
  );
  children.push(demo.child);
  const demoUrl = demo.line;

  // The request files name http://127.0.0.1:8080: with the demo elsewhere, open a copy that names its port.
  let workspace = join(root, "examples");
  if (demoUrl !== "http://127.0.0.1:8080") {
    workspace = join(runDir, "examples");
    cpSync(join(root, "examples"), workspace, { recursive: true });
    const requests = join(workspace, "requests");
    for (const name of existsSync(requests) ? readdirSync(requests) : []) {
      if (!name.endsWith(".rpc")) continue;
      const rpc = join(requests, name);
      writeFileSync(rpc, readFileSync(rpc, "utf8").replaceAll("http://127.0.0.1:8080", demoUrl));
    }
    process.stdout.write(
      `The demo server is not on port 8080, so the editor opens a copy of examples/ whose request files name ${demoUrl}:\n  ${workspace}\n(edits there are removed when npm start stops).\n`,
    );
  }

  const registryPort = await portFor(registryPortWanted, "registry emulator", "--registry-port");
  const registryUrl = `https://127.0.0.1:${registryPort}`;
  const registryCert = await ensureSelfSignedCert(runDir, "registry");

  const editor = await startCodeServer({
    workspace,
    port: await portFor(editorPortWanted, "editor (code-server)", "--editor-port"),
    settings: {
      "protocall.servers": [{ name: "demo server", url: demoUrl }],
      "protocall.registries": [{ name: "local registry", url: registryUrl, caFile: registryCert.certPath }],
    },
  });
  closeEditor = editor.close;
  keepOnlyOurSignalHandlers();

  // The listener's certificate, where the extension keeps and reuses it (its global storage), made
  // now, before a browser opens the editor and the extension runs: the registry trusts it.
  const listenerCert = await ensureSelfSignedCert(
    join(editor.userDataDir, "User", "globalStorage", "protocall.protocall"),
    "listener",
  );
  const registry = await startChild(
    [
      join(root, "dist/cli.js"),
      "registry",
      "serve",
      "--config",
      join(root, "examples/registry/config.json"),
      "--host",
      "127.0.0.1",
      "--port",
      String(registryPort),
      "--cert",
      registryCert.certPath,
      "--key",
      registryCert.keyPath,
      "--trust-ca",
      listenerCert.certPath,
    ],
    "the registry emulator",
  );
  children.push(registry.child);

  // A buf workspace whose module is acme/petapis on this registry (buf names a registry by host:port).
  const bufWorkspace = join(runDir, "buf-push");
  mkdirSync(bufWorkspace);
  cpSync(join(root, "examples/proto"), join(bufWorkspace, "proto"), { recursive: true });
  writeFileSync(
    join(bufWorkspace, "buf.yaml"),
    `version: v2\nmodules:\n  - path: proto\n    name: localhost:${registryPort}/acme/petapis\n`,
  );
  const buf = join(root, "node_modules/.bin/buf");

  process.stdout.write(
    [
      "",
      `Demo server (reflection on):  ${demoUrl}`,
      `Registry emulator:            ${registry.line}   (sign in with the token alice-token; repository acme/petapis)`,
      `Registry certificate:         ${registryCert.certPath}`,
      `Workspace:                    ${workspace}`,
      `Temporary folders:            ${runDir} ${dirname(editor.userDataDir)}   (removed when this stops)`,
      "",
      "Open Protocall in VS Code:",
      `  ${editor.url}`,
      "",
      "Open requests/demo.rpc and click ▶ Send above a request; requests/assertions.rpc tests itself",
      "(# @assert, # @capture): run it from the Testing view. The Protocall icon in the activity bar",
      "shows the Services, Webhooks and Deliveries views: start the listener (Deliveries), sign in to",
      "the local registry with alice-token, add acme/petapis and create a webhook (its callback URL is",
      "the listener's), then push from another terminal; the push arrives in Deliveries:",
      `  PROTOCALL_TOKEN=alice-token npx protocall registry push --remote ${registry.line} --cacert ${registryCert.certPath} --owner acme --repository petapis`,
      "or with buf (a copy of examples/proto as the module localhost:PORT/acme/petapis):",
      `  cd ${bufWorkspace}`,
      `  SSL_CERT_FILE=${registryCert.certPath} BUF_TOKEN=alice-token ${buf} push`,
      "Ctrl+C stops everything.",
      "",
    ].join("\n"),
  );
  await new Promise(() => {}); // until a signal
}

main().catch((err) => {
  process.stderr.write(`start: ${err instanceof Error ? err.message : String(err)}\n`);
  void stop(1);
});
