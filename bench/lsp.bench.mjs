#!/usr/bin/env node
// Language-server latency with the google-proto-files schema (~83 MB descriptor set, ~1,860
// services) loaded: hover and completion round trips over a real stdio LSP connection to
// `node dist/server.js --stdio`, as the editor makes them. The set is the one the large-schema
// benchmark builds (cached in node_modules/.cache/protocall-bench/); it is built here if missing.
//
// For each operation: one cold call (the first for that position: the file with source info is
// decoded, hover text rendered) and then BENCH_LSP_ITERATIONS (default 300) calls, cycled over the
// positions; percentiles are over those. The target is p99 ≤ 10 ms. The server's CPU time per call
// (from /proc) tells the work apart from waiting for a core on a busy machine.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ensureLargeSchemaSet } from "./lib/large-set.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "package.json"));
const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = require("vscode-jsonrpc/node");
const iterations = Math.max(10, Number(process.env.BENCH_LSP_ITERATIONS ?? 300));

function run(command, args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const err = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stderr.on("data", (c) => err.push(c));
    child.stdout.resume();
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr: Buffer.concat(err).toString() });
    });
  });
}

function positionOf(text, needle, delta = 0) {
  const index = text.indexOf(needle);
  if (index < 0) throw new Error(`${needle} not in the benchmark file`);
  const before = text.slice(0, index + delta);
  return { line: before.split("\n").length - 1, character: before.length - (before.lastIndexOf("\n") + 1) };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** CPU time (user + system) of a process so far, in milliseconds (Linux; undefined elsewhere). */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

async function timed(fn) {
  const start = performance.now();
  const result = await fn();
  return { ms: performance.now() - start, result };
}

async function main() {
  const set = await ensureLargeSchemaSet();
  const build = await run(process.execPath, ["esbuild.mjs"], 120_000);
  if (build.code !== 0) throw new Error(`esbuild failed:\n${build.stderr}`);
  const dir = mkdtempSync(join(tmpdir(), "protocall-lsp-bench-"));
  const child = spawn(process.execPath, [join(root, "dist/server.js"), "--stdio"], {
    cwd: dir,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  const published = new Map();
  let notify = () => {};
  connection.onNotification("textDocument/publishDiagnostics", (p) => {
    published.set(`${p.uri}@${p.version}`, p.diagnostics);
    notify();
  });
  connection.listen();
  try {
    const text = `### Publish
http://127.0.0.1:9/google.pubsub.v1.Publisher/Publish

{"topic": "projects/p/topics/t", "messages": [{"data": "", "attributes": {}, "orderingKey": ""}]}

### Sentiment
http://127.0.0.1:9/google.cloud.language.v1.LanguageService/AnalyzeSentiment

{"document": {"type": "PLAIN_TEXT", "content": "good"}, "encodingType": "UTF8"}

### Typing a key
http://127.0.0.1:9/google.cloud.language.v1.LanguageService/AnalyzeSentiment

{"document": {"type": "PLAIN_TEXT", "": ""}, "encodingType": }
`;
    const path = join(dir, "bench.rpc");
    writeFileSync(path, text);
    const uri = pathToFileURL(path).href;
    const started = performance.now();
    await connection.sendRequest("initialize", {
      processId: process.pid,
      rootUri: pathToFileURL(dir).href,
      workspaceFolders: [{ uri: pathToFileURL(dir).href, name: "bench" }],
      initializationOptions: { schemas: [set], reflection: false },
      // As VS Code declares it.
      capabilities: { textDocument: { completion: { completionList: { itemDefaults: ["editRange"] } } } },
    });
    connection.sendNotification("initialized", {});
    connection.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "rpc", version: 1, text },
    });
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no diagnostics within 120 s")), 120_000);
      notify = () => {
        if (published.has(`${uri}@1`)) {
          clearTimeout(timer);
          resolve();
        }
      };
    });
    const firstDiagnosticsMs = performance.now() - started;
    const diagnostics = published.get(`${uri}@1`);
    // The third request is being typed: its errors are expected.
    const typing = positionOf(text, "### Typing").line;
    const errors = diagnostics.filter((d) => d.severity === 1 && d.range.start.line < typing);
    if (errors.length > 0) throw new Error(`unexpected errors: ${errors.map((d) => d.message).join("; ")}`);

    const at = (needle, delta) => ({ textDocument: { uri }, position: positionOf(text, needle, delta) });
    const cases = [
      {
        label: "hover: method in the URL",
        method: "textDocument/hover",
        params: [at("Publisher/Publish", 12), at("Service/AnalyzeSentiment", 10)],
        check: (r) => r?.contents?.value?.includes("method"),
      },
      {
        label: "hover: JSON key",
        method: "textDocument/hover",
        params: [at('"topic"', 2), at('"orderingKey"', 3), at('"document"', 2), at('"encodingType"', 3)],
        check: (r) => r?.contents?.value?.includes("field"),
      },
      {
        label: "hover: enum value",
        method: "textDocument/hover",
        params: [at("PLAIN_TEXT", 2), at("UTF8", 1)],
        check: (r) => r?.contents?.value?.includes("enum value"),
      },
      {
        label: "completion: field names",
        method: "textDocument/completion",
        params: [at('"": ""}', 1), at('"attributes"', 0)],
        check: (r) => Array.isArray(r) && r.length > 0,
      },
      {
        label: "completion: enum values",
        method: "textDocument/completion",
        params: [at('"encodingType": }', 16), at('"type": "PLAIN_TEXT"', 9)],
        check: (r) => Array.isArray(r) && r.some((i) => i.label === '"UTF8"' || i.label === '"HTML"'),
      },
      {
        label: "completion: methods in the URL",
        method: "textDocument/completion",
        params: [at("Publisher/Publish", 12)],
        check: (r) => Array.isArray(r) && r.some((i) => i.label === "Publish"),
      },
      {
        label: "completion: services in the URL (all ~1,860)",
        method: "textDocument/completion",
        params: [at("google.pubsub.v1.Publisher/", 3)],
        check: (r) => r?.items?.length > 1000 && r.itemDefaults?.editRange !== undefined,
      },
    ];
    const rows = [];
    for (const c of cases) {
      const cold = [];
      for (const p of c.params) {
        const { ms, result } = await timed(() => connection.sendRequest(c.method, p));
        if (!c.check(result))
          throw new Error(`${c.label}: unexpected answer ${JSON.stringify(result)?.slice(0, 300)}`);
        cold.push(ms);
      }
      const times = [];
      const cpuBefore = cpuMs(child.pid);
      for (let i = 0; i < iterations; i++) {
        const { ms } = await timed(() => connection.sendRequest(c.method, c.params[i % c.params.length]));
        times.push(ms);
      }
      const cpuAfter = cpuMs(child.pid);
      times.sort((a, b) => a - b);
      rows.push({
        cpu: cpuBefore === undefined ? undefined : (cpuAfter - cpuBefore) / iterations,
        label: c.label,
        cold: Math.max(...cold),
        p50: percentile(times, 50),
        p90: percentile(times, 90),
        p99: percentile(times, 99),
        max: times[times.length - 1],
      });
    }
    // Diagnostics after an edit: the time from didChange to the new version's diagnostics, which
    // includes the server's 40 ms pause for typing to settle.
    const edits = [];
    for (let v = 2; v < 42; v++) {
      const edited = text.replace('"content": "good"', `"content": "good ${v}"`);
      const start = performance.now();
      const done = new Promise((resolve) => {
        notify = () => {
          if (published.has(`${uri}@${v}`)) resolve();
        };
      });
      connection.sendNotification("textDocument/didChange", {
        textDocument: { uri, version: v },
        contentChanges: [{ text: edited }],
      });
      await done;
      edits.push(performance.now() - start);
    }
    edits.sort((a, b) => a - b);
    const fmt = (x) => x.toFixed(2);
    console.log(
      `google-proto-files descriptor set (${(readFileSync(set).length / 1e6).toFixed(1)} MB) as the schema; ` +
        `first diagnostics ${firstDiagnosticsMs.toFixed(0)} ms after start (server start, index, look-ups)`,
    );
    console.log(
      `node ${process.version}, ${iterations} calls per operation over stdio; ${availableParallelism()} cores, ` +
        `load average ${loadavg()
          .map((x) => x.toFixed(1))
          .join(" ")}\n`,
    );
    console.log(
      "| operation | first call ms | p50 ms | p90 ms | p99 ms | max ms | server CPU ms per call | target p99 | result |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---|---|");
    for (const r of rows) {
      const met = r.p99 <= 10;
      console.log(
        `| ${r.label} | ${fmt(r.cold)} | ${fmt(r.p50)} | ${fmt(r.p90)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${r.cpu === undefined ? "n/a" : fmt(r.cpu)} | ≤ 10 ms | ${met ? "met" : "missed"} |`,
      );
    }
    console.log(
      `\nDiagnostics after an edit (40 edits, including the 40 ms pause for typing): p50 ${fmt(percentile(edits, 50))} ms, ` +
        `p90 ${fmt(percentile(edits, 90))} ms, max ${fmt(edits[edits.length - 1])} ms`,
    );
  } finally {
    try {
      await Promise.race([connection.sendRequest("shutdown"), new Promise((r) => setTimeout(r, 3000))]);
      connection.sendNotification("exit");
    } catch {}
    setTimeout(() => child.kill("SIGKILL"), 3000).unref();
    await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
    connection.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
