#!/usr/bin/env node
// Memory on a fast server stream: protocall curl and the real buf curl, in the same run, against the
// same server (test/support/fast-stream-server.ts in its own process), read 100 MB of small gRPC
// messages (~14 million 7-byte envelopes of demo.v1.CountResponse) written as fast as the server can,
// with the output to -o /dev/null. The figure is each tool's peak RSS (VmHWM, polled from /proc), with
// wall time beside it; the goal is a flat, bounded peak (≤ 150 MB) whatever the stream's length.
// Usage: node bench/stream-memory.bench.mjs [--mb N] [--runs N]   (builds dist/cli.js first)
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { bufBinary } from "./lib/large-set.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const MB = arg("--mb", 100);
const RUNS = Math.max(1, arg("--runs", 1));
const GOAL_MB = 150;

/** Runs a command; resolves with its exit code, stderr, wall time and peak RSS in MB. */
function peakRun(command, args) {
  return new Promise((resolvePeak, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
    let peakKb = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
      } catch {}
    }, 5);
    const err = [];
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(poll);
      resolvePeak({
        code,
        stderr: Buffer.concat(err).toString(),
        ms: performance.now() - start,
        peakMb: peakKb / 1024,
      });
    });
  });
}

function startServer(script, bytes) {
  return new Promise((resolveServer, reject) => {
    const child = spawn(process.execPath, [script, String(bytes)], { stdio: ["ignore", "pipe", "inherit"] });
    createInterface({ input: child.stdout }).once("line", (url) => resolveServer({ child, url: url.trim() }));
    child.once("exit", (code) => reject(new Error(`stream server exited (${code})`)));
  });
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "protocall-stream-memory-"));
  let server;
  try {
    const build = spawnSync(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: "inherit" });
    if (build.status !== 0) throw new Error("build failed");
    const serverScript = join(dir, "fast-stream-server.js");
    await esbuild.build({
      entryPoints: [join(root, "test/support/fast-stream-server.ts")],
      outfile: serverScript,
      bundle: true,
      platform: "node",
      target: "node20",
      format: "cjs",
      logLevel: "warning",
    });
    const set = join(dir, "demo.binpb");
    const b = spawnSync(bufBinary(), ["build", join(root, "examples"), "-o", set], { encoding: "utf8" });
    if (b.status !== 0) throw new Error(`buf build examples failed:\n${b.stderr}`);
    server = await startServer(serverScript, MB * 1_000_000);
    const args = [
      "curl",
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "--schema",
      set,
      "-d",
      '{"count": 1}',
      "-o",
      "/dev/null",
      `${server.url}/demo.v1.DemoService/Count`,
    ];
    const rows = { protocall: [], buf: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const [name, command, argv] of [
        ["protocall", process.execPath, [join(root, "dist/cli.js"), ...args]],
        ["buf", bufBinary(), args],
      ]) {
        process.stderr.write(`${name} run ${i + 1}/${RUNS}…\n`);
        const r = await peakRun(command, argv);
        if (r.code !== 0) throw new Error(`${name} exited ${r.code}:\n${r.stderr}`);
        rows[name].push(r);
      }
    }
    const worst = (list, key) => Math.max(...list.map((r) => r[key]));
    console.log(`Server stream: ${MB} MB of small gRPC messages, -o /dev/null, ${RUNS} run(s) each`);
    console.log("");
    console.log("| tool | peak RSS (MB, worst run) | wall time (s, worst run) |");
    console.log("|---|---:|---:|");
    for (const [name, list] of Object.entries(rows)) {
      console.log(
        `| ${name} | ${worst(list, "peakMb").toFixed(0)} | ${(worst(list, "ms") / 1000).toFixed(1)} |`,
      );
    }
    const ours = worst(rows.protocall, "peakMb");
    console.log("");
    console.log(
      `protocall's peak ${ours <= GOAL_MB ? "meets" : "misses"} the goal of ≤ ${GOAL_MB} MB; load average ${loadavg()[0].toFixed(2)}`,
    );
  } finally {
    server?.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
