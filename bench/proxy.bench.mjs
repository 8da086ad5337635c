#!/usr/bin/env node
// What `protocall proxy` adds to a call: unary calls at 1,000 calls/s (open loop, Connect JSON over h2c)
// to the demo server directly, through `protocall proxy` (which relays HTTP/2 connections frame by
// frame, src/core/proxy/h2-relay.ts, and decodes and durably stores every call on the side)
// and, when Debian's nghttp2-proxy is installed, through nghttpx (a C++ proxy that only passes calls
// on: what any proxy hop costs on this machine). The targets take turns in one-second windows
// (BENCH_PROXY_SECONDS windows each, default 10), so a stall of the machine lands in one window of one
// target; "added p99" is the median over windows of a target's p99 minus the direct p99 of the same
// round. Then the time of a 100,000-message server stream (demo.v1.DemoService/Count over gRPC)
// directly and through the proxy. Servers run as their own processes (dist/cli.js built first). On
// Linux it also prints the CPU time per call of the proxy and the server (from /proc): unlike latency,
// that figure holds on a busy machine.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const seconds = Number(process.env.BENCH_PROXY_SECONDS ?? 10);
const rate = 1000;
const streamMessages = 100_000;

const build = spawnSync(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: "inherit" });
if (build.status !== 0) throw new Error("node esbuild.mjs failed");

/** Starts a process that prints its URL as the first line of stdout. */
function startServer(args) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "ignore"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve({ url: out.slice(0, nl).trim(), child });
    });
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}`)));
  });
}

/** The CPU time (user + system, ms) process `pid` has used, or undefined where /proc is not there. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms
  } catch {
    return undefined;
  }
}

function unary(session) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const s = session.request({
      ":method": "POST",
      ":path": "/demo.v1.GreetService/Greet",
      "content-type": "application/json",
    });
    s.on("data", () => {});
    s.on("error", reject);
    s.on("close", () => resolve(performance.now() - start));
    s.end('{"name":"bench"}');
  });
}

/** Sends calls at `rate` per second for `ms` on `session`; resolves with their latencies. */
async function paced(session, ms) {
  const latencies = [];
  const pending = [];
  const total = Math.round((rate * ms) / 1000);
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(unary(session).then((ms) => latencies.push(ms)));
  }
  await Promise.all(pending);
  return { latencies, achieved: total / ((performance.now() - t0) / 1000) };
}

const quantile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Each target in turn for one-second windows, `seconds` windows each: a machine that stalls for a
 * moment stalls one window of one target, and the median of the per-window differences from the
 * direct window beside it is what the hop itself adds.
 */
async function interleaved(targets) {
  const sessions = targets.map((t) => http2.connect(t.url));
  for (const s of sessions) for (let i = 0; i < 300; i++) await unary(s); // warm up
  const all = targets.map(() => []);
  const windows = targets.map(() => []);
  let achieved = Number.POSITIVE_INFINITY;
  for (let w = 0; w < seconds; w++) {
    for (let t = 0; t < targets.length; t++) {
      const r = await paced(sessions[t], 1000);
      achieved = Math.min(achieved, r.achieved);
      all[t].push(...r.latencies);
      windows[t].push(
        quantile(
          r.latencies.sort((a, b) => a - b),
          0.99,
        ),
      );
    }
  }
  for (const s of sessions) s.close();
  return targets.map((t, i) => {
    const sorted = all[i].sort((a, b) => a - b);
    return {
      name: t.name,
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      addedP99: median(windows[i].map((p99, w) => p99 - windows[0][w])),
      achieved,
    };
  });
}

function stream(url) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    const body = Buffer.from(JSON.stringify({ count: streamMessages, text: "m" }));
    const start = performance.now();
    const s = session.request({
      ":method": "POST",
      ":path": "/demo.v1.DemoService/Count",
      "content-type": "application/grpc+json",
      te: "trailers",
    });
    let bytes = 0;
    let status;
    s.on("data", (c) => {
      bytes += c.length;
    });
    s.on("trailers", (t) => {
      status = t["grpc-status"];
    });
    s.on("error", reject);
    s.on("close", () => {
      session.close();
      if (status !== "0") reject(new Error(`the stream ended with grpc-status ${status}`));
      else resolve({ ms: performance.now() - start, bytes });
    });
    const head = Buffer.alloc(5);
    head.writeUInt32BE(body.length, 1);
    s.end(Buffer.concat([head, body]));
  });
}

/** A free loopback port (asked of the system, then released). */
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * nghttpx (Debian's nghttp2-proxy), when installed: an HTTP/2 reverse proxy written in C++ that only
 * passes calls on, the yardstick for what any proxy hop costs on this machine.
 */
async function startNghttpx(upstreamUrl) {
  if (spawnSync("nghttpx", ["--version"]).status !== 0) return undefined;
  const port = await freePort();
  const up = new URL(upstreamUrl);
  const child = spawn(
    "nghttpx",
    [
      `--frontend=127.0.0.1,${port};no-tls`,
      `--backend=${up.hostname},${up.port};;proto=h2`,
      "--workers=1",
      "--conf=/dev/null",
      "--errorlog-file=/dev/null",
      "--accesslog-file=/dev/null",
    ],
    { stdio: "ignore" },
  );
  for (let i = 0; i < 100; i++) {
    const up = await new Promise((r) => {
      const c = net.connect(port, "127.0.0.1", () => r(c.end() && true)).on("error", () => r(false));
    });
    if (up) return { url: `http://127.0.0.1:${port}`, child };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  return undefined;
}

const tmp = mkdtempSync(join(tmpdir(), "protocall-bench-proxy-"));
const demo = await startServer(["--import", "tsx", join(root, "src/demo/main.ts")]);
const proxy = await startServer([
  join(root, "dist/cli.js"),
  "proxy",
  "--upstream",
  demo.url,
  "--schema",
  join(root, "examples/proto"),
  "--store",
  join(tmp, "calls.store"),
]);
const yardstick = await startNghttpx(demo.url);
try {
  const targets = [
    { name: "direct", url: demo.url },
    { name: "protocall proxy", url: proxy.url },
    ...(yardstick ? [{ name: "nghttpx", url: yardstick.url }] : []),
  ];
  const [proxyCpu, demoCpu] = [cpuMs(proxy.child.pid), cpuMs(demo.child.pid)];
  const results = await interleaved(targets);
  const proxyCalls = 300 + rate * seconds;
  const perCall = (before, pid, calls) =>
    before === undefined ? "?" : `${(((cpuMs(pid) - before) * 1000) / calls).toFixed(0)} µs`;
  console.log(
    `unary at ${rate} calls/s, ${seconds} one-second windows each, interleaved (load average ${loadavg()[0].toFixed(2)}):`,
  );
  for (const r of results) {
    const added = r.name === "direct" ? "" : `, added p99 (median of windows) ${r.addedP99.toFixed(2)} ms`;
    console.log(`  ${r.name.padEnd(16)} p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms${added}`);
  }
  if (!yardstick)
    console.log("  (nghttpx not installed: apt-get install nghttp2-proxy adds it as the yardstick)");
  console.log(`  slowest window kept ${results[0].achieved.toFixed(0)} calls/s`);
  console.log(
    `CPU per call: proxy ${perCall(proxyCpu, proxy.child.pid, proxyCalls)}, server ${perCall(demoCpu, demo.child.pid, proxyCalls * targets.length)}`,
  );
  // One stream each first, so both paths are warm (JIT, connections) when timed.
  await stream(demo.url);
  await stream(proxy.url);
  const sd = await stream(demo.url);
  const sp = await stream(proxy.url);
  console.log(
    `${streamMessages}-message server stream direct:        ${sd.ms.toFixed(0)} ms (${sd.bytes} bytes)`,
  );
  console.log(
    `${streamMessages}-message server stream through proxy: ${sp.ms.toFixed(0)} ms (${sp.bytes} bytes)`,
  );
} finally {
  proxy.child.kill("SIGTERM");
  demo.child.kill("SIGTERM");
  yardstick?.child.kill("SIGTERM");
  rmSync(tmp, { recursive: true, force: true });
}
