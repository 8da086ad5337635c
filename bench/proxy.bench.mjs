#!/usr/bin/env node
// What `protocall proxy` adds to a call: the p99 latency of unary calls sent at 1,000 calls/s (open
// loop, Connect JSON over h2c, BENCH_PROXY_SECONDS, default 5 s) to the demo server directly and
// through the proxy (which decodes and durably stores every call), and the time of a 100,000-message
// server stream (demo.v1.DemoService/Count over gRPC) directly and through the proxy.
// Both servers run as their own processes (the demo server, dist/cli.js built first). On Linux it also
// prints the CPU time each process spent per unary call (from /proc): unlike latency, that figure
// holds on a busy machine, and says what the proxy costs beside the server it fronts.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const seconds = Number(process.env.BENCH_PROXY_SECONDS ?? 5);
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

async function unaryP99(url) {
  const session = http2.connect(url);
  for (let i = 0; i < 200; i++) await unary(session); // warm up
  const latencies = [];
  const pending = [];
  const total = rate * seconds;
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(unary(session).then((ms) => latencies.push(ms)));
  }
  await Promise.all(pending);
  const achieved = total / ((performance.now() - t0) / 1000);
  session.close();
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return { p50: q(0.5), p99: q(0.99), achieved };
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
try {
  const direct = await unaryP99(demo.url);
  const [proxyCpu, demoCpu] = [cpuMs(proxy.child.pid), cpuMs(demo.child.pid)];
  const proxied = await unaryP99(proxy.url);
  const calls = rate * seconds + 200;
  const perCall = (before, pid) =>
    before === undefined ? "?" : `${(((cpuMs(pid) - before) * 1000) / calls).toFixed(0)} µs`;
  const cpuLine = `CPU per call through the proxy: proxy ${perCall(proxyCpu, proxy.child.pid)}, server ${perCall(demoCpu, demo.child.pid)}`;
  const fmt = (r) =>
    `p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms (${r.achieved.toFixed(0)} calls/s)`;
  console.log(`unary direct:        ${fmt(direct)}`);
  console.log(`unary through proxy: ${fmt(proxied)}`);
  console.log(`added p99: ${(proxied.p99 - direct.p99).toFixed(2)} ms`);
  console.log(cpuLine);
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
  rmSync(tmp, { recursive: true, force: true });
}
