#!/usr/bin/env node
// `protocall mock` against a bare @connectrpc/connect-node server that returns a fixed message (the
// floor), each in its own process, over h2c with gRPC unary calls from this process:
//   1. throughput: 50 calls in flight on one HTTP/2 connection for a few seconds, the two servers
//      alternating for a few rounds; the medians and their ratio (the ratio is what a shared machine
//      keeps stable). The mock answers from examples/mocks (a stub with a body to match, a template,
//      a response header), and, in a second row, with a generated message.
//   2. added latency: 1,000 calls/s at a fixed pace, the two servers taking turns in short windows
//      (A B B A …) so the machine's noise falls on both alike; pooled p50 and p99 per server, the median
//      of the per-window p99 differences, the floor's own window-to-window p99 spread, and each server
//      process's CPU time per call (/proc/PID/stat: steady where latency is not). With --control a
//      second bare server takes turns as well, to show what the method reads for no difference.
//   3. start-up with the google-proto-files descriptor set (about 83 MB): time to the printed URL and
//      the peak resident memory of the mock process (--skip-large to leave it out).
// Usage: node bench/mock.bench.mjs [--seconds N] [--rounds N] [--windows N] [--window-seconds N]
//                                   [--control] [--cli FILE] [--skip-large]   (builds dist/cli.js when missing)
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
const argText = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
// --cli FILE: another build of protocall to measure (to compare a change with what came before).
const cli = resolve(argText("--cli", join(root, "dist/cli.js")));
// --control: a second bare server takes its turns too; its p99 "added" to the first's is what the
// method reads for two identical servers, the noise a real difference must stand above.
const CONTROL = process.argv.includes("--control");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg("--seconds", 4);
const ROUNDS = arg("--rounds", 3);
const WINDOWS = arg("--windows", 10);
const WINDOW_SECONDS = arg("--window-seconds", 1);
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

/** CPU time (user + system) a process has used so far, in ms, from /proc/PID/stat. */
const ticksPerSecond = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

const quantile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

/**
 * One window of calls at `rate` per second on an open session: each call's time from when it was
 * sent to its end (ms), and the server's CPU time over the window.
 */
async function latencyWindow(target, rate, seconds) {
  const total = Math.round(rate * seconds);
  const times = [];
  const pending = [];
  const cpu0 = cpuMs(target.pid);
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const s = performance.now();
    pending.push(
      call(target.session, target.path, target.payload).then(() => times.push(performance.now() - s)),
    );
  }
  await Promise.all(pending);
  return { times, cpuMs: cpuMs(target.pid) - cpu0, calls: total };
}

/**
 * Added latency that survives a noisy machine: the servers take turns in short windows (A B B A …, each
 * on its own warmed connection), so that the machine's slow moments fall on both alike. Per server:
 * the pooled p50 and p99 and the CPU time per call; against the first, the median over windows of the
 * p99 difference. The floor's own spread (its per-window p99, how far it moves from one of its
 * windows to the next, and with --control an identical server's "added" p99) says what is noise.
 */
async function interleavedLatency(targets, windows, windowSeconds, rate = 1000) {
  for (const t of targets) {
    t.session = http2.connect(t.url);
    for (let i = 0; i < 500; i++) await call(t.session, t.path, t.payload);
  }
  const per = targets.map(() => ({ times: [], windowP99: [], windowCpu: [], cpuMs: 0, calls: 0 }));
  for (let w = 0; w < windows; w++) {
    const order = w % 2 === 0 ? targets.map((_, i) => i) : targets.map((_, i) => targets.length - 1 - i);
    for (const i of order) {
      const r = await latencyWindow(targets[i], rate, windowSeconds);
      r.times.sort((a, b) => a - b);
      per[i].windowP99.push(quantile(r.times, 0.99));
      per[i].windowCpu.push(r.cpuMs / r.calls);
      for (const t of r.times) per[i].times.push(t);
      per[i].cpuMs += r.cpuMs;
      per[i].calls += r.calls;
    }
  }
  for (const t of targets) t.session.close();
  return per.map((p) => {
    p.times.sort((a, b) => a - b);
    return {
      p50: quantile(p.times, 0.5),
      p99: quantile(p.times, 0.99),
      windowP99: p.windowP99,
      windowCpu: p.windowCpu,
      cpuUsPerCall: (p.cpuMs * 1000) / p.calls,
    };
  });
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
  // The control takes the same throughput rounds, so that it is as warm as the others (its code as
  // optimized) when the latency turns start.
  const control = CONTROL ? await serve(process.execPath, [bareJs]) : undefined;
  const rates = { bare: [], stub: [], generated: [], control: [] };
  for (let round = 0; round < ROUNDS; round++) {
    rates.bare.push(await throughput(bare.url, greet, body));
    rates.stub.push(await throughput(mock.url, greet, body));
    rates.generated.push(await throughput(mock.url, "/demo.v1.DemoService/Sample", emptyBody));
    if (control) rates.control.push(await throughput(control.url, greet, body));
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
  if (control) {
    console.log(
      `| bare connect-node again (control) | ${fmt(median(rates.control))} | ${(median(rates.control) / floor).toFixed(2)} |`,
    );
  }

  const [lb, lm, lc] = await interleavedLatency(
    [
      { ...bare, path: greet, payload: body },
      { ...mock, path: greet, payload: body },
      ...(control ? [{ ...control, path: greet, payload: body }] : []),
    ],
    WINDOWS,
    WINDOW_SECONDS,
  );
  const addedP99 = (l) => median(l.windowP99.map((p, i) => p - lb.windowP99[i]));
  // CPU per call against the floor's, window by window (the machine's load changes between windows).
  const cpuRatio = (l) => median(l.windowCpu.map((c, i) => c / lb.windowCpu[i]));
  console.log(
    `\nLatency at 1,000 calls/s, the servers taking turns in ${WINDOWS} windows of ${WINDOW_SECONDS} s each (ms; CPU from /proc/PID/stat):\n`,
  );
  console.log("| server | p50 | p99 | per-window p99 (min / median / max) | CPU per call (µs) |");
  console.log("|---|---:|---:|---:|---:|");
  const row = (name, l) =>
    console.log(
      `| ${name} | ${l.p50.toFixed(2)} | ${l.p99.toFixed(2)} | ${Math.min(...l.windowP99).toFixed(2)} / ${median(l.windowP99).toFixed(2)} / ${Math.max(...l.windowP99).toFixed(2)} | ${l.cpuUsPerCall.toFixed(0)} |`,
    );
  row("bare connect-node", lb);
  row("protocall mock, stub", lm);
  if (lc) row("bare connect-node again (control)", lc);
  console.log(
    `\np99 added by the mock: ${addedP99(lm).toFixed(2)} ms (median of the ${WINDOWS} per-window differences; pooled ${(lm.p99 - lb.p99).toFixed(2)} ms); p50 added ${(lm.p50 - lb.p50).toFixed(2)} ms; CPU per call ${cpuRatio(lm).toFixed(2)}× the floor's (median of the per-window ratios)`,
  );
  if (lc) {
    console.log(
      `p99 "added" by an identical bare server (the method's noise): ${addedP99(lc).toFixed(2)} ms (pooled ${(lc.p99 - lb.p99).toFixed(2)} ms); CPU per call ${cpuRatio(lc).toFixed(2)}×`,
    );
  }
  // The noise: the floor against itself, window to window (the same server, seconds apart).
  const floorSteps = lb.windowP99.slice(1).map((p, i) => Math.abs(p - lb.windowP99[i]));
  console.log(
    `The floor's own p99 moves ${median(floorSteps).toFixed(2)} ms from one window to the next (median; max ${Math.max(...floorSteps).toFixed(2)} ms)`,
  );
  await control?.stop();
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
