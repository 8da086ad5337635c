#!/usr/bin/env node
// The editor's warm "Send" against the floor: a bare @connectrpc/connect-node client making the same
// call. Both run in this process against the demo server (its own process), over one warm HTTP/2
// (h2c) connection each, alternating call by call, many iterations; the table shows median and p99
// per call and what Send adds. Rows:
//   bare client        createClient(GreetService, createConnectTransport({ httpVersion: "2" })).greet()
//   session call       the call session's call() with the options a .rpc request converts to (schema
//                      from server reflection, resolved once), transcript on (as the editor logs it)
//   prepare + call     what protocall.send runs per click: parse the .rpc text, resolve variables and
//                      environment (prepareSend), then the session call with the redacted transcript
//   buf curl           one `buf curl` process per call, for context (fewer runs)
// Environment: BENCH_ITERATIONS (default 2000), BENCH_BUF_RUNS (default 10).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { bufBinary } from "./lib/large-set.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const iterations = Math.max(10, Number(process.env.BENCH_ITERATIONS ?? 2000));
const bufRuns = Math.max(1, Number(process.env.BENCH_BUF_RUNS ?? 10));

const dir = mkdtempSync(join(tmpdir(), "protocall-send-bench-"));
const entry = join(dir, "send.cjs");
const serverScript = join(dir, "demo-server.cjs");
for (const [input, out] of [
  [join(root, "bench/lib/send-entry.ts"), entry],
  [join(root, "src/demo/main.ts"), serverScript],
]) {
  await esbuild.build({
    entryPoints: [input],
    outfile: out,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    logLevel: "warning",
  });
}
const lib = createRequire(import.meta.url)(entry);

const server = await new Promise((resolve, reject) => {
  const child = spawn(process.execPath, [serverScript, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  createInterface({ input: child.stdout }).once("line", (url) => resolve({ child, url: url.trim() }));
  child.once("exit", (code) => reject(new Error(`demo server exited (${code})`)));
});

const rpcFile = join(dir, "bench.rpc");
const rpcText = `@host = ${server.url}\n\n### Greet\n{{host}}/demo.v1.GreetService/Greet\nx-request-id: {{$uuid}}\n\n{"name": "bench"}\n`;
writeFileSync(rpcFile, rpcText);

const transport = lib.createConnectTransport({
  baseUrl: server.url,
  httpVersion: "2",
  useBinaryFormat: true,
});
const client = lib.createClient(lib.GreetService, transport);
const session = lib.createCallSession({ product: "protocall/bench" });
const io = { cwd: dir, env: {}, homedir: homedir() };
const options = {
  ...lib.defaultCurlOptions(),
  url: `${server.url}/demo.v1.GreetService/Greet`,
  data: '{"name": "bench"}',
};
let logged = 0;
const observer = { log: (line) => (logged += line.length) };

async function bare() {
  const res = await client.greet({ name: "bench" });
  if (res.greeting !== "Hello, bench!") throw new Error(`bare client: ${JSON.stringify(res)}`);
}
async function sessionCall() {
  const r = await session.call(options, io, observer);
  if (!r.ok || !r.messages[0].includes("Hello, bench!"))
    throw new Error(`session: ${JSON.stringify(r.error)}`);
}
async function prepareAndCall() {
  const p = lib.prepareSend({ text: rpcText, filePath: rpcFile, requestIndex: 0, processEnv: {} });
  if (!p.options) throw new Error(p.problems.map((x) => x.text).join("\n"));
  const r = await session.call(
    p.options,
    { ...io, cwd: p.baseDir },
    { log: (line) => (logged += lib.redactSecrets(line).length) },
  );
  if (!r.ok) throw new Error(`prepare + call: ${JSON.stringify(r.error)}`);
}

const cases = [
  ["bare client", bare],
  ["session call", sessionCall],
  ["prepare + call", prepareAndCall],
];
const samples = new Map(cases.map(([name]) => [name, []]));
try {
  // Warm-up: connections, reflection, JIT.
  for (let i = 0; i < 200; i++) for (const [, fn] of cases) await fn();
  for (let i = 0; i < iterations; i++) {
    // Rotate the order so no case always runs first.
    for (let k = 0; k < cases.length; k++) {
      const [name, fn] = cases[(i + k) % cases.length];
      const t = performance.now();
      await fn();
      samples.get(name).push(performance.now() - t);
    }
  }

  const buf = [];
  for (let i = 0; i < bufRuns; i++) {
    const t = performance.now();
    const r = spawnSync(bufBinary(), ["curl", "-d", '{"name": "bench"}', options.url], { encoding: "utf8" });
    buf.push(performance.now() - t);
    if (r.status !== 0) throw new Error(`buf curl exited ${r.status}: ${r.stderr}`);
  }
  samples.set("buf curl (process per call)", buf);

  const pct = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  };
  const floor = { p50: pct(samples.get("bare client"), 50), p99: pct(samples.get("bare client"), 99) };
  console.log(
    `${iterations} iterations per case (buf curl: ${bufRuns}), ${cpus().length} CPUs, Node ${process.version}\n`,
  );
  console.log("| case | median ms | p99 ms | added to the bare client (median / p99) |");
  console.log("|---|---:|---:|---:|");
  for (const [name, xs] of samples) {
    const p50 = pct(xs, 50);
    const p99 = pct(xs, 99);
    const added =
      name === "bare client" ? "—" : `${(p50 - floor.p50).toFixed(3)} / ${(p99 - floor.p99).toFixed(3)}`;
    console.log(`| ${name} | ${p50.toFixed(3)} | ${p99.toFixed(3)} | ${added} |`);
  }
  const added = pct(samples.get("prepare + call"), 50) - floor.p50;
  console.log(
    `\nTarget: a warm Send adds ≤ 2 ms to the bare client. Measured (prepare + call, median): ${added.toFixed(3)} ms — ${added <= 2 ? "met" : "NOT met"}.`,
  );
} finally {
  await session.close();
  server.child.kill();
  rmSync(dir, { recursive: true, force: true });
}
