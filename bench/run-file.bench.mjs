#!/usr/bin/env node
// `protocall run` of a request file with N unary requests (default 1,000), each with an assertion on
// its response, against N `buf curl` processes making the same calls, in the same run, against the
// same demo server (its own process, schema by server reflection for both). protocall's run is one
// process (median of BENCH_RUNS fresh runs); buf's side is N sequential processes, measured once.
// The figure that matters is the ratio of wall times (target ≤ 0.05). The load average is printed
// with the figures: the machine may be shared.
// Environment: BENCH_REQUESTS (default 1000), BENCH_RUNS (default 3).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { bufBinary } from "./lib/large-set.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const count = Math.max(1, Number(process.env.BENCH_REQUESTS ?? 1000));
const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const cli = join(root, "bin/protocall.js");

function run(command, args) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    const err = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
        ms: performance.now() - start,
      }),
    );
  });
}

function startServer(script) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    createInterface({ input: child.stdout }).once("line", (url) => resolve({ child, url: url.trim() }));
    child.once("exit", (code) => reject(new Error(`demo server exited (${code})`)));
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

const dir = mkdtempSync(join(tmpdir(), "protocall-bench-run-"));
let server;
try {
  const b = await run(process.execPath, [join(root, "esbuild.mjs")]);
  if (b.code !== 0) throw new Error(`build failed:\n${b.stderr}`);
  const serverScript = join(dir, "demo-server.js");
  await esbuild.build({
    entryPoints: [join(root, "src/demo/main.ts")],
    outfile: serverScript,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    logLevel: "warning",
  });
  server = await startServer(serverScript);
  const url = server.url;

  const file = join(dir, "requests.rpc");
  const lines = [`@host = ${url}`, ""];
  for (let i = 0; i < count; i++) {
    lines.push(
      `### Greet ${i}`,
      `# @assert message.greeting == "Hello, n${i}!"`,
      "{{host}}/demo.v1.GreetService/Greet",
      "",
      `{"name": "n${i}"}`,
      "",
    );
  }
  writeFileSync(file, lines.join("\n"));

  const loadBefore = load();
  // protocall run: warm-up once, then `runs` fresh processes.
  const ours = [];
  for (let i = -1; i < runs; i++) {
    const r = await run(process.execPath, [cli, "run", file]);
    if (r.code !== 0 || !r.stderr.includes(`${count} requests: ${count} passed`)) {
      throw new Error(`protocall run failed (exit ${r.code}):\n${r.stderr.slice(-2000)}`);
    }
    if (i >= 0) ours.push(r.ms);
  }
  // buf curl: one process per request, as a shell loop or a CI script would run them.
  const buf = bufBinary();
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const r = await run(buf, ["curl", "-d", `{"name": "n${i}"}`, `${url}/demo.v1.GreetService/Greet`]);
    if (r.code !== 0 || !r.stdout.includes(`Hello, n${i}!`)) {
      throw new Error(`buf curl failed (exit ${r.code}):\n${r.stderr}`);
    }
  }
  const theirs = performance.now() - started;
  const loadAfter = load();

  const oursMs = median(ours);
  console.log(`${count} unary requests against the demo server (schema by reflection), same run\n`);
  console.log("| tool | wall time | per request | ratio to buf |");
  console.log("|---|---:|---:|---:|");
  console.log(
    `| protocall run (1 process, median of ${runs}) | ${(oursMs / 1000).toFixed(2)} s | ${(oursMs / count).toFixed(2)} ms | ${(oursMs / theirs).toFixed(4)} |`,
  );
  console.log(
    `| buf curl (${count} processes) | ${(theirs / 1000).toFixed(2)} s | ${(theirs / count).toFixed(2)} ms | 1 |`,
  );
  console.log(`\nprotocall runs: ${ours.map((x) => (x / 1000).toFixed(2)).join(", ")} s`);
  console.log(`load average (1, 5, 15 min): before ${loadBefore}, after ${loadAfter}`);
  console.log(`target: ratio ≤ 0.05: ${oursMs / theirs <= 0.05 ? "met" : "NOT met"}`);
} finally {
  server?.child.kill();
  rmSync(dir, { recursive: true, force: true });
}
