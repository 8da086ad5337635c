#!/usr/bin/env node
// `npm start`: builds Protocall, starts the demo server (demo.v1 with server reflection: unary, the
// three streaming shapes, and Fail with error details) on http://127.0.0.1:8080, a local registry
// emulator with examples/registry/config.json, and a real VS Code (code-server, installed on first
// use into .tools/) with the extension on the examples/ workspace, its settings pointing the Services
// view at the demo server and the Webhooks view at the registry, and a mock server of the demo API
// answering from examples/mocks (`protocall mock`), also in the Services view. Prints the URL to open, and runs
// until Ctrl+C, then stops everything it started.
// Usage: npm start [-- --cli | --port N | --editor-port N | --no-build]
//   --cli             the command-line demo instead (scripts/demo.mjs; same as `npm run demo`)
//   --port N          demo server port (default 8080; a free one when 8080 is taken)
//   --editor-port N   code-server port (default 8090; a free one when 8090 is taken)
//   --no-build        use dist/ as it is
// Run with `node --import tsx scripts/start.mjs` (npm start does): it uses test/support/code-server.ts.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}
const demoPortWanted = flag("--port", 8080);
const editorPortWanted = flag("--editor-port", 8090);
const build = !argv.includes("--no-build");

/** `port` if it is free on 127.0.0.1, else 0 (any free port). */
function freeOr(port) {
  if (port === 0) return Promise.resolve(0);
  return new Promise((r) => {
    const s = net.createServer();
    s.once("error", () => r(0));
    s.listen(port, "127.0.0.1", () => s.close(() => r(port)));
  });
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
let workspaceCopy;
let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  process.stdout.write("\nStopping...\n");
  await closeEditor?.().catch(() => {});
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  if (workspaceCopy) rmSync(workspaceCopy, { recursive: true, force: true });
  process.exit(code);
}
// Before code-server.ts's own handlers, which kill code-server and exit at once: stop the others first.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.prependListener(signal, () => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
    if (workspaceCopy) rmSync(workspaceCopy, { recursive: true, force: true });
    void stop(0);
  });
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
  if (!codeServerInstalled()) {
    process.stdout.write("Installing code-server (VS Code in the browser) into .tools/, once...\n");
    const r = spawnSync("bash", [join(root, "scripts/install-code-server.sh")], {
      cwd: root,
      stdio: "inherit",
    });
    if (r.status !== 0)
      throw new Error("the code-server install failed (bash scripts/install-code-server.sh)");
  }

  const demoPort = await freeOr(demoPortWanted);
  const demo = await startChild(
    [join(root, "dist/demo-server.js"), "--port", String(demoPort)],
    "the demo server",
  );
  children.push(demo.child);
  const demoUrl = demo.line;
  const registry = await startChild(
    [join(root, "dist/cli.js"), "registry", "serve", "--config", join(root, "examples/registry/config.json")],
    "the registry emulator",
  );
  children.push(registry.child);
  const registryUrl = registry.line;
  const mock = await startChild(
    [
      join(root, "dist/cli.js"),
      "mock",
      join(root, "examples/mocks"),
      "--schema",
      join(root, "examples"),
      "--quiet",
    ],
    "the mock server",
  );
  children.push(mock.child);
  const mockUrl = mock.line;

  // The request files name http://127.0.0.1:8080: with the demo elsewhere, open a copy that names its port.
  let workspace = join(root, "examples");
  if (demoUrl !== "http://127.0.0.1:8080") {
    workspaceCopy = mkdtempSync(join(tmpdir(), "protocall-start-"));
    workspace = join(workspaceCopy, "examples");
    cpSync(join(root, "examples"), workspace, { recursive: true });
    const requests = join(workspace, "requests");
    for (const name of existsSync(requests) ? readdirSync(requests) : []) {
      if (!name.endsWith(".rpc")) continue;
      const rpc = join(requests, name);
      writeFileSync(rpc, readFileSync(rpc, "utf8").replaceAll("http://127.0.0.1:8080", demoUrl));
    }
  }

  const editor = await startCodeServer({
    workspace,
    port: await freeOr(editorPortWanted),
    settings: {
      "protocall.servers": [
        { name: "demo server", url: demoUrl },
        { name: "mock server", url: mockUrl },
      ],
      "protocall.registries": [{ name: "local registry", url: registryUrl }],
    },
  });
  closeEditor = editor.close;

  process.stdout.write(
    [
      "",
      `Demo server (reflection on):  ${demoUrl}`,
      `Registry emulator:            ${registryUrl}   (sign in with the token alice-token; repository acme/petapis)`,
      `Mock server:                  ${mockUrl}   (protocall mock examples/mocks: the stubs answer, other methods generate)`,
      `Workspace:                    ${workspace}`,
      "",
      "Open Protocall in VS Code:",
      `  ${editor.url}`,
      "",
      "Open requests/demo.rpc and click ▶ Send above a request; requests/assertions.rpc tests itself",
      "(# @assert, # @capture): run it from the Testing view. The Protocall icon in the activity bar",
      "shows the Services, Webhooks and Deliveries views. Ctrl+C stops everything.",
      "",
    ].join("\n"),
  );
  await new Promise(() => {}); // until a signal
}

main().catch((err) => {
  process.stderr.write(`start: ${err instanceof Error ? err.message : String(err)}\n`);
  void stop(1);
});
