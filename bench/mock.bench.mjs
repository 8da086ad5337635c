#!/usr/bin/env node
// `protocall mock` against a bare @connectrpc/connect-node server that returns a fixed message (the
// floor), each in its own process, over h2c with gRPC unary calls from this process:
//   1. throughput: 50 calls in flight on one HTTP/2 connection for a few seconds, the two servers
//      alternating for a few rounds; the medians and their ratio (the ratio is what a shared machine
//      keeps stable). The mock answers from examples/mocks (a stub with a body to match, a template,
//      a response header), and, in a second row, with a generated message.
//   2. added latency: 1,000 calls/s at a fixed pace for a few seconds against each; p50 and p99, and
//      the mock's p99 minus the floor's.
//   3. start-up with the google-proto-files descriptor set (about 83 MB): time to the printed URL and
//      the peak resident memory of the mock process (--skip-large to leave it out).
// Usage: node bench/mock.bench.mjs [--seconds N] [--rounds N] [--skip-large]   (builds dist/cli.js when missing)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { bufBinary, ensureLargeSchemaSet } from "./lib/large-set.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "dist/cli.js");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg("--seconds", 4);
const ROUNDS = arg("--rounds", 3);
const CONCURRENCY = 50;
if (!existsSync(cli)) {
  const build = spawnSync(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(1);
}

/** Starts a server process; resolves with its URL (first stdout line), its pid and a stop function. */
function serve(command, args, options = {}) {
  const started = performance.now();
  const child = spawn(command, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], ...options });
  let err = "";
  child.stderr.on("data", (c) => {
    err += c;
  });
  return new Promise((done, fail) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (url) =>
      done({
        url: url.trim(),
        pid: child.pid,
        startMs: performance.now() - started,
        stop: () =>
          new Promise((r) => {
            child.once("exit", r);
            child.kill("SIGTERM");
          }),
      }),
    );
    child.once("exit", (code) => fail(new Error(`${args.join(" ")} exited with ${code}: ${err}`)));
  });
}

// {"name": "world"} as a gRPC message: 5-byte prefix, then field 1 (string) "world".
const body = Buffer.from([0, 0, 0, 0, 7, 0x0a, 5, ...Buffer.from("world")]);
const emptyBody = Buffer.from([0, 0, 0, 0, 0]);

function call(session, path, payload) {
  return new Promise((done, fail) => {
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
    });
    let status;
    stream.on("trailers", (t) => {
      status = t["grpc-status"];
    });
    stream.on("response", (h) => {
      if (h["grpc-status"] !== undefined) status = h["grpc-status"];
    });
    stream.on("data", () => {});
    stream.on("end", () => (status === "0" ? done() : fail(new Error(`grpc-status ${status} from ${path}`))));
    stream.on("error", fail);
    stream.end(payload);
  });
}

async function throughput(url, path, payload) {
  const session = http2.connect(url);
  const end = performance.now() + SECONDS * 1000;
  let calls = 0;
  const worker = async () => {
    while (performance.now() < end) {
      await call(session, path, payload);
      calls++;
    }
  };
  // Warm up, then measure.
  for (let i = 0; i < 200; i++) await call(session, path, payload);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const rate = calls / ((performance.now() - t0) / 1000);
  session.close();
  return rate;
}

async function latency(url, path, payload, rate = 1000) {
  const session = http2.connect(url);
  for (let i = 0; i < 200; i++) await call(session, path, payload);
  const total = rate * SECONDS;
  const times = [];
  const pending = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const s = performance.now();
    pending.push(call(session, path, payload).then(() => times.push(performance.now() - s)));
  }
  await Promise.all(pending);
  session.close();
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  return { p50: q(0.5), p99: q(0.99) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n) => Math.round(n).toLocaleString("en-US");

const work = mkdtempSync(join(tmpdir(), "protocall-mock-bench-"));
try {
  const schema = join(work, "demo.binpb");
  const built = spawnSync(bufBinary(), ["build", join(root, "examples"), "-o", schema], { cwd: root });
  if (built.status !== 0) throw new Error(`buf build failed: ${built.stderr}`);
  // Bundled as dist/cli.js is, so that both servers run plain JavaScript.
  const bareJs = join(work, "bare-greet-server.js");
  await esbuild.build({
    entryPoints: [join(root, "bench/lib/bare-greet-server.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    outfile: bareJs,
    logLevel: "error",
  });
  const bare = await serve(process.execPath, [bareJs]);
  const mock = await serve(process.execPath, [
    cli,
    "mock",
    join(root, "examples/mocks"),
    "--schema",
    schema,
    "--quiet",
  ]);
  const greet = "/demo.v1.GreetService/Greet";
  const rates = { bare: [], stub: [], generated: [] };
  for (let round = 0; round < ROUNDS; round++) {
    rates.bare.push(await throughput(bare.url, greet, body));
    rates.stub.push(await throughput(mock.url, greet, body));
    rates.generated.push(await throughput(mock.url, "/demo.v1.DemoService/Sample", emptyBody));
  }
  const floor = median(rates.bare);
  console.log(
    `Unary gRPC calls over h2c, ${CONCURRENCY} in flight on one connection, median of ${ROUNDS} rounds of ${SECONDS} s:\n`,
  );
  console.log("| server | calls/s | of the bare server |");
  console.log("|---|---:|---:|");
  console.log(`| bare connect-node, fixed message | ${fmt(floor)} | 1.00 |`);
  console.log(
    `| protocall mock, stub (examples/mocks "greet world") | ${fmt(median(rates.stub))} | ${(median(rates.stub) / floor).toFixed(2)} |`,
  );
  console.log(
    `| protocall mock, generated demo.v1.Everything | ${fmt(median(rates.generated))} | ${(median(rates.generated) / floor).toFixed(2)} |`,
  );

  const lb = await latency(bare.url, greet, body);
  const lm = await latency(mock.url, greet, body);
  console.log(`\nLatency at 1,000 calls/s for ${SECONDS} s (ms):\n`);
  console.log("| server | p50 | p99 |");
  console.log("|---|---:|---:|");
  console.log(`| bare connect-node | ${lb.p50.toFixed(2)} | ${lb.p99.toFixed(2)} |`);
  console.log(`| protocall mock, stub | ${lm.p50.toFixed(2)} | ${lm.p99.toFixed(2)} |`);
  console.log(`\np99 added by the mock: ${(lm.p99 - lb.p99).toFixed(2)} ms`);
  await Promise.all([bare.stop(), mock.stop()]);

  if (!process.argv.includes("--skip-large")) {
    const large = await ensureLargeSchemaSet();
    const peakKb = (pid) => {
      const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return m ? Number(m[1]) : Number.NaN;
    };
    const big = await serve(process.execPath, [cli, "mock", "--schema", large, "--quiet"]);
    const mb = peakKb(big.pid) / 1024;
    await big.stop();
    console.log(
      `\nStart-up with the google-proto-files set (${fmt(readFileSync(large).length / 1e6)} MB): ${fmt(big.startMs)} ms to the URL, peak RSS ${fmt(mb)} MB`,
    );
  }
  console.log(
    `\nLoad average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
