#!/usr/bin/env node
// The Services view with the google-proto-files schema (~83 MB descriptor set, ~1,860 services)
// configured in `protocall.schemas`: the time from the view's first request to the language server
// (`protocall/serviceSources`) until its services are listed (the source's packages with their
// service counts: `protocall/serviceChildren`), over a real stdio LSP connection to
// `node dist/server.js --stdio`, as the extension makes them. Each run starts a fresh server process
// (cold: nothing cached). Then, on the last run: expanding a package (its services with their
// comments and definitions) and a service (its methods). The peer, in the same run:
// `buf curl --schema <set> --list-services`. Target: listed ≤ 1 s.
//
// When code-server is installed (.tools/, see scripts/install-code-server.sh), the same is timed in
// the real editor as well: a fresh code-server with `protocall.schemas` set to the set, from the
// click on the Protocall activity-bar item (the view opens: the extension activates, the language
// server starts, the schema is opened) until the view shows the set's packages, the window having
// settled for BENCH_SERVICES_SETTLE_MS (default 5000) first. BENCH_SERVICES_EDITOR=0 skips it.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bufBinary, ensureLargeSchemaSet } from "./lib/large-set.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "package.json"));
const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = require("vscode-jsonrpc/node");
const runs = Math.max(1, Number(process.env.BENCH_SERVICES_RUNS ?? 5));
const targetMs = 1000;
/** How long a fresh editor window is left to settle before the view is opened. */
const settleMs = Number(process.env.BENCH_SERVICES_SETTLE_MS ?? 5000);

function run(command, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    const err = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
  });
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function timed(fn) {
  const start = performance.now();
  const result = await fn();
  return { ms: performance.now() - start, result };
}

/** One cold run: a fresh server; returns the timings and the figures of what was listed. */
async function viewRun(set, dir, details) {
  const child = spawn(process.execPath, [join(root, "dist/server.js"), "--stdio"], {
    cwd: dir,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  connection.listen();
  const request = (method, params) =>
    Promise.race([
      connection.sendRequest(method, params),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`${method}: no answer in 120 s`)), 120_000),
      ),
    ]);
  try {
    const started = performance.now();
    await request("initialize", {
      processId: process.pid,
      rootUri: pathToFileURL(dir).href,
      workspaceFolders: [{ uri: pathToFileURL(dir).href, name: "bench" }],
      initializationOptions: { schemas: [set], workspaceBuild: true, reflection: false },
      capabilities: {},
    });
    connection.sendNotification("initialized", {});
    const initializeMs = performance.now() - started;

    const opened = performance.now();
    const { sources } = await request("protocall/serviceSources", { servers: [] });
    const source = sources.find((s) => s.kind === "setting");
    if (!source || source.error) throw new Error(`the schema source failed: ${JSON.stringify(sources)}`);
    const sourcesMs = performance.now() - opened;
    const packages = await request("protocall/serviceChildren", { source: source.id });
    if (packages.error) throw new Error(packages.error);
    const listedMs = performance.now() - opened;
    const services = packages.children.reduce((n, p) => n + p.serviceCount, 0);
    const result = { initializeMs, sourcesMs, listedMs, packages: packages.children.length, services };
    if (details) {
      const pkg = packages.children.find((p) => p.name === "google.pubsub.v1") ?? packages.children[0];
      const expand = await timed(() =>
        request("protocall/serviceChildren", {
          source: source.id,
          parent: { kind: "package", name: pkg.name },
        }),
      );
      const service = expand.result.children[0];
      const methods = await timed(() =>
        request("protocall/serviceChildren", {
          source: source.id,
          parent: { kind: "service", name: service.name },
        }),
      );
      if (expand.result.error || methods.result.error)
        throw new Error(expand.result.error ?? methods.result.error);
      result.packageMs = expand.ms;
      result.packageName = pkg.name;
      result.packageServices = expand.result.children.length;
      result.serviceMs = methods.ms;
      result.serviceName = service.name;
      result.methods = methods.result.children.length;
      result.commented = methods.result.children.filter((m) => m.comment).length;
    }
    return result;
  } finally {
    await Promise.race([
      connection.sendRequest("shutdown").catch(() => {}),
      new Promise((r) => setTimeout(r, 3000)),
    ]);
    connection.sendNotification("exit");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)));
    clearTimeout(timer);
    connection.dispose();
  }
}

/** Opens the view in a fresh code-server `runs` times; returns the milliseconds until packages show. */
async function editorRuns(set, count) {
  // The editor-test helpers are TypeScript: loaded through tsx's CommonJS loader (their paths are
  // computed from __dirname).
  const tsx = require("tsx/cjs/api");
  const here = fileURLToPath(import.meta.url);
  const cs = tsx.require(join(root, "test/support/code-server.ts"), here);
  const wbMod = tsx.require(join(root, "test/support/workbench.ts"), here);
  if (!cs.codeServerInstalled()) return undefined;
  const times = [];
  for (let i = 0; i < count; i++) {
    const workspace = join(mkdtempSync(join(tmpdir(), "protocall-services-editor-")), "bench");
    mkdirSync(workspace);
    const server = await cs.startCodeServer({
      workspace,
      settings: { "protocall.schemas": [set], "protocall.workspaceBuild": false },
    });
    let wb;
    try {
      wb = await wbMod.openWorkbench(server.url, workspace, join(root, "test-results/bench-services-view"));
      const { page } = wb;
      const item = page.locator(".activitybar .action-item a[aria-label^='Protocall']").first();
      await item.waitFor({ state: "visible", timeout: 60_000 });
      const pane = wbMod.viewPane(page, "Services");
      const packageRow = pane
        .locator(".monaco-list-row")
        .filter({ has: page.locator(".label-name", { hasText: /^google\.[a-z]/ }) })
        .first();
      // A settled window: the extension host has started (a fresh window starts it while loading).
      await new Promise((r) => setTimeout(r, settleMs));
      const start = performance.now();
      await item.click();
      await packageRow.waitFor({ state: "visible", timeout: 120_000 });
      times.push(performance.now() - start);
      await wb.screenshot(`listed-${i + 1}`);
    } finally {
      await wb?.close();
      await server.close();
      rmSync(dirname(workspace), { recursive: true, force: true });
    }
  }
  return times;
}

async function main() {
  const set = await ensureLargeSchemaSet();
  const build = await run(process.execPath, ["esbuild.mjs"], 120_000);
  if (build.code !== 0) throw new Error(`esbuild failed:\n${build.stderr}`);
  const dir = mkdtempSync(join(tmpdir(), "protocall-services-bench-"));
  try {
    const views = [];
    const bufs = [];
    let bufServices;
    for (let i = 0; i < runs; i++) {
      views.push(await viewRun(set, dir, i === runs - 1));
      const b = await timed(() => run(bufBinary(), ["curl", "--schema", set, "--list-services"], 120_000));
      if (b.result.code !== 0) throw new Error(`buf curl failed:\n${b.result.stderr}`);
      bufServices = b.result.stdout.split("\n").filter((l) => l.trim() !== "").length;
      bufs.push(b.ms);
    }
    const editor =
      process.env.BENCH_SERVICES_EDITOR === "0" || !existsSync(join(root, ".tools/code-server"))
        ? undefined
        : await editorRuns(set, Math.min(runs, 3));
    const last = views[views.length - 1];
    if (last.services !== bufServices) {
      throw new Error(`the view lists ${last.services} services, buf curl ${bufServices}`);
    }
    const listed = median(views.map((v) => v.listedMs));
    const f = (ms) => `${ms.toFixed(0)} ms`;
    console.log(
      `Schema: google-proto-files descriptor set, ${last.packages} packages, ${last.services} services.`,
    );
    console.log(
      `Runs: ${runs}, each a fresh language server. Load ${loadavg()[0].toFixed(2)} on ${availableParallelism()} cores.\n`,
    );
    console.log("| step | median | min | max |");
    console.log("|---|---:|---:|---:|");
    const row = (label, values) =>
      console.log(
        `| ${label} | ${f(median(values))} | ${f(Math.min(...values))} | ${f(Math.max(...values))} |`,
      );
    row(
      "server start (spawn + initialize)",
      views.map((v) => v.initializeMs),
    );
    row(
      "view opens: `serviceSources` (schema opened and indexed)",
      views.map((v) => v.sourcesMs),
    );
    row(
      "**view opens → services listed** (`serviceSources` + packages)",
      views.map((v) => v.listedMs),
    );
    row("`buf curl --schema <set> --list-services` (whole process)", bufs);
    if (editor)
      row("**in the editor: click on the Protocall container → packages shown** (fresh code-server)", editor);
    console.log(
      `| expand package ${last.packageName} (${last.packageServices} services, comments, definitions) | ${f(last.packageMs)} | | |`,
    );
    console.log(
      `| expand service ${last.serviceName} (${last.methods} methods, ${last.commented} with comments) | ${f(last.serviceMs)} | | |`,
    );
    const inEditor = editor ? median(editor) : undefined;
    const met = listed <= targetMs && (inEditor === undefined || inEditor <= targetMs);
    console.log(
      `\nTarget: services listed ≤ ${targetMs} ms after the view opens: ${met ? "met" : "MISSED"} (over LSP ${f(listed)}${inEditor === undefined ? ", editor not measured: code-server is not installed" : `; in the editor ${f(inEditor)}`}; buf curl ${f(median(bufs))}).`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
