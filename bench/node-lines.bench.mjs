#!/usr/bin/env node
// Cold start of the `protocall` command on each Node line we support: this machine's node (the 20
// line) and Node 22 and 24 from scripts/install-node-lines.sh (.tools/node22, .tools/node24, or
// NODE_LINES_DIR; a line not installed is reported as such). Each case starts a fresh process
// (bin/protocall.js, as installed), alternating the lines, and the table shows median wall time:
//   --version                  the smallest command, with its V8 code cache written by a warm-up run
//   curl, first (no cache)     a unary call to the demo server (its own process) with an empty code
//                              cache directory: what the very first call after an install pays
//   curl                       the same call with the code cache written
//   --version, extra CA        --version with NODE_EXTRA_CA_CERTS naming the system's CA bundle
//                              (about 140 certificates): Node 20 parses that file before any JavaScript
//                              runs, so every command pays it; Node 22 and later read it at the first
//                              TLS use, so --version and a plaintext call do not
// Environment: BENCH_RUNS (default 15).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 15));
const cli = join(root, "bin/protocall.js");
const linesDir = process.env.NODE_LINES_DIR ?? join(root, ".tools");
const caBundle = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"].find(existsSync);

function run(command, args, env) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => {
      stdout += c;
    });
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, ms: performance.now() - start }));
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function startServer(script) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    createInterface({ input: child.stdout }).once("line", (url) => resolve({ child, url: url.trim() }));
    child.once("exit", (code) => reject(new Error(`demo server exited (${code})`)));
  });
}

async function main() {
  if (!existsSync(join(root, "dist/curl.js"))) throw new Error("run `npm run build` first");
  const dir = mkdtempSync(join(tmpdir(), "protocall-node-lines-bench-"));
  const lines = [["20 (this node)", process.execPath]];
  const missing = [];
  for (const major of [22, 24]) {
    const node = join(linesDir, `node${major}`, "bin", "node");
    if (existsSync(node)) lines.push([String(major), node]);
    else missing.push(major);
  }
  const server = join(dir, "demo-server.js");
  await esbuild.build({
    entryPoints: [join(root, "src/demo/main.ts")],
    outfile: server,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    logLevel: "warning",
  });
  const demo = await startServer(server);
  const curl = ["curl", "-d", '{"name":"bench"}', `${demo.url}/demo.v1.GreetService/Greet`];
  const cases = [
    { name: "--version", args: ["--version"], cache: "warm" },
    { name: "curl, first (no cache)", args: curl, cache: "none" },
    { name: "curl", args: curl, cache: "warm" },
    ...(caBundle
      ? [
          {
            name: "--version, extra CA",
            args: ["--version"],
            cache: "warm",
            env: { NODE_EXTRA_CA_CERTS: caBundle },
          },
        ]
      : []),
  ];
  try {
    const versions = [];
    for (const [, node] of lines) versions.push((await run(node, ["--version"], process.env)).stdout.trim());
    const rows = [];
    for (const c of cases) {
      process.stderr.write(`${c.name} `);
      const times = lines.map(() => []);
      for (let i = -1; i < runs; i++) {
        for (const [l, [label, node]] of lines.entries()) {
          const cache = join(dir, `cache-${l}-${c.cache === "none" ? i : "warm"}`);
          const env = { ...process.env, PROTOCALL_CACHE_DIR: cache, ...c.env };
          const r = await run(node, [cli, ...c.args], env);
          if (r.code !== 0)
            throw new Error(`Node ${label}: protocall ${c.args.join(" ")}: exit ${r.code}\n${r.stderr}`);
          if (c.cache === "none") rmSync(cache, { recursive: true, force: true });
          if (i >= 0) times[l].push(r.ms);
        }
        process.stderr.write(".");
      }
      process.stderr.write("\n");
      rows.push({ name: c.name, medians: times.map(median) });
    }
    console.log(
      `${runs} runs per line per case (alternating), fresh process each; Node ${versions.join(", ")}`,
    );
    if (missing.length) {
      console.log(`not installed (bash scripts/install-node-lines.sh): Node ${missing.join(", ")}`);
    }
    const [load1] = loadavg();
    console.log(`load average at the end: ${load1.toFixed(1)} on ${cpus().length} CPUs\n`);
    console.log(`| case | ${lines.map(([label]) => `Node ${label} ms`).join(" | ")} |`);
    console.log(`|---|${lines.map(() => "---:").join("|")}|`);
    for (const r of rows) console.log(`| ${r.name} | ${r.medians.map((m) => m.toFixed(1)).join(" | ")} |`);
  } finally {
    demo.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
