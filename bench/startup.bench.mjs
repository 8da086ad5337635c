#!/usr/bin/env node
// Cold start of the `protocall` command against `buf`, in the same run: each case starts a fresh
// process (bin/protocall.js, as installed, with its V8 code cache already written by a warm-up run),
// alternating the tools, and the table shows median wall time. Start-up is what every short command
// pays, and the argument parsing every command shares runs in it, so this catches a parser (or an
// eager import) that slows every command down.
//   --version            the smallest command: Node start, bundle load, print
//   curl --help          the curl bundle with its flag table and help text
//   listen --help        a command loaded lazily from the full CLI bundle
//   curl, usage error    flags parsed, an unknown flag refused with a suggestion (exit 1)
// Environment: BENCH_RUNS (default 20); BENCH_PROTOCALL=path/to/bin/protocall.js measures another
// build of protocall (for a before/after comparison) next to this repository's.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bufBinary } from "./lib/large-set.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 20));
const cli = join(root, "bin/protocall.js");
const other = process.env.BENCH_PROTOCALL;

/** Runs a command to its end; resolves with its exit code and wall time. */
function run(command, args, env) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr, ms: performance.now() - start }));
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function main() {
  if (!existsSync(join(root, "dist/cli.js"))) throw new Error("run `npm run build` first");
  const cache = mkdtempSync(join(tmpdir(), "protocall-startup-bench-"));
  const env = { ...process.env, PROTOCALL_CACHE_DIR: cache };
  const tools = [
    ["protocall", process.execPath, [cli]],
    ...(other ? [["protocall (BENCH_PROTOCALL)", process.execPath, [other]]] : []),
    ["buf", bufBinary(), []],
  ];
  const cases = [
    { name: "--version", args: ["--version"], buf: ["--version"], code: 0 },
    { name: "curl --help", args: ["curl", "--help"], buf: ["curl", "--help"], code: 0 },
    { name: "listen --help", args: ["listen", "--help"], code: 0 },
    { name: "curl, unknown flag", args: ["curl", "--protcol", "grpc", "http://x"], code: 1 },
  ];
  try {
    const rows = [];
    for (const c of cases) {
      process.stderr.write(`${c.name} `);
      const times = tools.map(() => []);
      for (let i = -1; i < runs; i++) {
        for (const [t, [label, command, prefix]] of tools.entries()) {
          const args = label === "buf" ? c.buf : c.args;
          if (!args) continue;
          const r = await run(command, [...prefix, ...args], env);
          if (r.code !== c.code) throw new Error(`${label} ${args.join(" ")}: exit ${r.code}\n${r.stderr}`);
          if (i >= 0) times[t].push(r.ms);
        }
        process.stderr.write(".");
      }
      process.stderr.write("\n");
      rows.push({ name: c.name, medians: times.map((t) => (t.length ? median(t) : undefined)) });
    }
    console.log(`node ${process.version}, ${runs} runs per tool per case (alternating), fresh process each`);
    const [load1] = loadavg();
    console.log(`load average at the end: ${load1.toFixed(1)} on ${cpus().length} CPUs\n`);
    console.log(`| case | ${tools.map(([label]) => `${label} ms`).join(" | ")} |`);
    console.log(`|---|${tools.map(() => "---:").join("|")}|`);
    for (const r of rows) {
      console.log(
        `| ${r.name} | ${r.medians.map((m) => (m === undefined ? "n/a" : m.toFixed(1))).join(" | ")} |`,
      );
    }
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
