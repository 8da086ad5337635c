#!/usr/bin/env node
// `protocall load` against `h2load` (nghttp2's C HTTP/2 load generator), in one run, against the same
// demo server (its own process), on the same Connect unary JSON POST over h2c
// (demo.v1.GreetService/Greet):
//   throughput   requests per second at the same concurrency (protocall --concurrency C over one
//                connection; h2load -c 1 -m C), for BENCH_SECONDS each
//   fixed rate   p50 latency at 1,000 requests per second (protocall --rate 1000; h2load --rps 1000,
//                its p50 from its per-request --log-file)
// The targets: protocall's rps at least 0.6 of h2load's; its p50 at 1,000/s within 0.5 ms of h2load's.
// h2load comes from Debian's nghttp2-client (`apt-get install nghttp2-client`); without it the bench
// says so and exits 1. Environment: BENCH_SECONDS (default 10), BENCH_CONCURRENCY (default 32).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const seconds = Math.max(2, Number(process.env.BENCH_SECONDS ?? 10));
const concurrency = Math.max(1, Number(process.env.BENCH_CONCURRENCY ?? 32));

if (spawnSync("h2load", ["--version"]).status !== 0) {
  console.error(
    "h2load is not installed: install Debian's nghttp2-client (apt-get install nghttp2-client) and run again",
  );
  process.exit(1);
}

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    const err = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("close", (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
    );
  });
}

const dir = mkdtempSync(join(tmpdir(), "protocall-load-bench-"));
let server;
try {
  const built = await run(process.execPath, [join(root, "esbuild.mjs")]);
  if (built.code !== 0) throw new Error(`build failed:\n${built.stderr}`);
  const script = join(dir, "demo-server.js");
  await esbuild.build({
    entryPoints: [join(root, "src/demo/main.ts")],
    outfile: script,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    logLevel: "warning",
  });
  server = spawn(process.execPath, [script, "--port", "0", "--http", "h2c"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const base = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once("line", (line) => resolve(line.trim()));
    server.once("exit", (code) => reject(new Error(`demo server exited (${code})`)));
  });
  const url = `${base}/demo.v1.GreetService/Greet`;
  const body = join(dir, "body.json");
  writeFileSync(body, '{"name": "bench"}');
  const cli = join(root, "bin/protocall.js");

  const protocall = async (shape) => {
    const report = join(dir, `p${Math.random()}.json`);
    const r = await run(process.execPath, [
      cli,
      "load",
      url,
      "--http2-prior-knowledge",
      "-d",
      '{"name": "bench"}',
      ...shape,
      "--warmup",
      "2s",
      "--duration",
      `${seconds}s`,
      "--reporter",
      `json=${report}`,
    ]);
    if (r.code !== 0) throw new Error(`protocall load failed (${r.code}):\n${r.stderr}`);
    const t = JSON.parse(readFileSync(report, "utf8"));
    return {
      rps: t.total.rps,
      p50: t.total.latency.p50,
      p99: t.total.latency.p99,
      failed: t.total.failed,
      behind: t.behind,
    };
  };
  const h2load = async (shape) => {
    const log = join(dir, `h${Math.random()}.log`);
    const r = await run("h2load", [
      ...shape,
      "--warm-up-time=2",
      "-D",
      String(seconds),
      "-d",
      body,
      "-H",
      "content-type: application/json",
      "--log-file",
      log,
      url,
    ]);
    if (r.code !== 0) throw new Error(`h2load failed (${r.code}):\n${r.stdout}${r.stderr}`);
    const rps = Number(/finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(r.stdout)?.[1]);
    const lines = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split("\t"));
    const ok = lines.filter((l) => l[1] === "200");
    const us = ok.map((l) => Number(l[2])).sort((a, b) => a - b);
    const pct = (p) => us[Math.max(0, Math.ceil((p / 100) * us.length) - 1)] / 1000;
    return { rps, p50: pct(50), p99: pct(99), failed: lines.length - ok.length };
  };

  console.error(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} on ${cpus().length} cores`,
  );
  const pt = await protocall(["--concurrency", String(concurrency)]);
  const ht = await h2load(["-c", "1", "-m", String(concurrency)]);
  const pr = await protocall(["--rate", "1000"]);
  const hr = await h2load(["-c", "1", "-m", "16", "--rps", "1000"]);
  const row = (name, p, h, ratio) => `| ${name} | ${p} | ${h} | ${ratio} |`;
  console.log(
    `Connect unary JSON POST over h2c, one connection, ${seconds} s each (load average at start ${loadavg()[0].toFixed(1)}, ${cpus().length} cores)\n`,
  );
  console.log("| measure | protocall load | h2load | protocall vs h2load (target) |");
  console.log("|---|---|---|---|");
  console.log(
    row(
      `requests/s at concurrency ${concurrency}`,
      pt.rps.toFixed(0),
      ht.rps.toFixed(0),
      `${(pt.rps / ht.rps).toFixed(2)}× (≥ 0.6×)`,
    ),
  );
  console.log(
    row(
      "p50 at 1,000 requests/s",
      `${pr.p50.toFixed(2)} ms`,
      `${hr.p50.toFixed(2)} ms`,
      `${pr.p50 - hr.p50 >= 0 ? "+" : ""}${(pr.p50 - hr.p50).toFixed(2)} ms (≤ +0.5 ms)`,
    ),
  );
  console.log(row("p99 at 1,000 requests/s", `${pr.p99.toFixed(2)} ms`, `${hr.p99.toFixed(2)} ms`, ""));
  console.log(row("achieved rate at 1,000/s", pr.rps.toFixed(0), hr.rps.toFixed(0), ""));
  console.log(row("failed requests", String(pt.failed + pr.failed), String(ht.failed + hr.failed), ""));
  if (pr.behind) console.log(`\nprotocall at 1,000/s: ${pr.behind}`);
} finally {
  server?.kill();
  rmSync(dir, { recursive: true, force: true });
}
