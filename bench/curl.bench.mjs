#!/usr/bin/env node
// `protocall curl` against the real `buf curl`, in the same run, on the same requests, against the same
// local demo server (its own process). Each case runs both tools several times, alternating, in fresh
// processes; the table shows median wall time, the ratio protocall ÷ buf (of wall times), median CPU
// time (user + system, with GNU time) and median peak RSS.
//   unary --schema      a unary call with the small demo schema (a descriptor set, and the directory)
//   large schema        the ~83 MB google-proto-files descriptor set as --schema, a call resolving
//                       google.pubsub.v1.Publisher/Publish (the demo server answers unimplemented: exit 96)
//   client stream       N JSON messages from a file (two sizes: peak RSS must not grow with N)
//   server stream       N responses (two sizes)
//   unary reflection    a unary call with the schema from server reflection
//   cold start          one small unary call over h2c with the small descriptor set, with
//                       NODE_EXTRA_CA_CERTS as the environment has it (else the system CA bundle) and
//                       without it: Node 20 reads that file before any JavaScript runs, for both runs
//                       of protocall (buf ignores it)
// Then protocall alone (no peer): `protocall --version`, `protocall run` of a one-request file, and
// `node -e 0` with and without NODE_EXTRA_CA_CERTS (Node's own share of every start).
// Environment: BENCH_RUNS (default 15), BENCH_STREAM (largest stream size, default 100000),
// BENCH_ONLY (run only the cases whose name contains this text, e.g. "cold").
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { bufBinary, ensureLargeSchemaSet } from "./lib/large-set.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 15));
const bigStream = Math.max(10, Number(process.env.BENCH_STREAM ?? 100_000));
const smallStream = Math.max(1, Math.round(bigStream / 10));
// The installed `protocall` command: bin/protocall.js runs dist/cli.js with its V8 code cache.
const cli = join(root, "bin/protocall.js");
const timeBinary = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

/**
 * Runs a command; resolves with exit code, stdout (or only its length), stderr, wall time and peak
 * RSS. Peak RSS comes from GNU time (the kernel's maxrss at exit) when installed, else from polling
 * VmHWM in /proc.
 */
function run(command, args, { keepStdout = true, timeoutMs = 300_000, env } = {}) {
  return new Promise((resolve, reject) => {
    const argv = timeBinary ? ["-f", "%M %U %S", command, ...args] : args;
    const start = performance.now();
    const child = spawn(timeBinary ?? command, argv, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: env ?? process.env,
    });
    const out = [];
    let outBytes = 0;
    const err = [];
    let peakKb = 0;
    const poll = timeBinary
      ? undefined
      : setInterval(() => {
          try {
            const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
            if (m) peakKb = Math.max(peakKb, Number(m[1]));
          } catch {}
        }, 5);
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (c) => {
      outBytes += c.length;
      if (keepStdout) out.push(c);
    });
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", (e) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      const wallMs = performance.now() - start;
      clearInterval(poll);
      clearTimeout(timer);
      let stderr = Buffer.concat(err).toString();
      let cpuMs;
      if (timeBinary) {
        // GNU time appends its figures (max RSS in KB, user and system CPU seconds) to stderr.
        const lines = stderr.trimEnd().split("\n");
        const [kb, user, sys] = (lines.pop() ?? "").split(" ").map(Number);
        peakKb = kb;
        cpuMs = (user + sys) * 1000;
        if (/^Command exited with non-zero status \d+$/.test(lines.at(-1) ?? "")) lines.pop();
        stderr = lines.length ? `${lines.join("\n")}\n` : "";
      }
      resolve({
        code,
        stdout: Buffer.concat(out).toString(),
        outBytes,
        stderr,
        wallMs,
        cpuMs,
        peakMb: peakKb / 1024,
      });
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x, digits = 0) => (x === undefined || Number.isNaN(x) ? "n/a" : x.toFixed(digits));

async function buildAll(dir) {
  const b = await run(process.execPath, [join(root, "esbuild.mjs")]);
  if (b.code !== 0) throw new Error(`build failed:\n${b.stderr}`);
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
  const set = join(dir, "demo.binpb");
  const r = await run(bufBinary(), ["build", join(root, "examples"), "-o", set]);
  if (r.code !== 0) throw new Error(`buf build examples failed:\n${r.stderr}`);
  return { server, set };
}

function startServer(script) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    createInterface({ input: child.stdout }).once("line", (url) => resolve({ child, url: url.trim() }));
    child.once("exit", (code) => reject(new Error(`demo server exited (${code})`)));
  });
}

/**
 * Runs both tools once unmeasured (warm-up: file cache, protocall's code cache), then `runs` times,
 * alternating; checks exit codes and that both print the same.
 */
async function compare(c) {
  const ours = [];
  const theirs = [];
  for (let i = -1; i < runs; i++) {
    for (const [list, command, prefix] of [
      [ours, process.execPath, [cli, "curl"]],
      [theirs, bufBinary(), ["curl"]],
    ]) {
      const r = await run(command, [...prefix, ...c.args], { keepStdout: !c.large, env: c.env });
      if (r.code !== c.code) {
        throw new Error(
          `${c.name}: ${command === process.execPath ? "protocall" : "buf"} exited ${r.code}, expected ${c.code}:\n${r.stderr}`,
        );
      }
      if (i >= 0) list.push(r);
    }
    process.stderr.write(".");
  }
  const sameOutput = c.large ? ours[0].outBytes === theirs[0].outBytes : ours[0].stdout === theirs[0].stdout;
  if (!sameOutput) process.stderr.write(`\nnote: ${c.name}: the two tools printed different output\n`);
  const row = {
    ...c,
    ours: median(ours.map((r) => r.wallMs)),
    buf: median(theirs.map((r) => r.wallMs)),
    oursCpu: timeBinary ? median(ours.map((r) => r.cpuMs)) : undefined,
    bufCpu: timeBinary ? median(theirs.map((r) => r.cpuMs)) : undefined,
    oursRss: median(ours.map((r) => r.peakMb)),
    bufRss: median(theirs.map((r) => r.peakMb)),
    sameOutput,
  };
  row.ratio = row.ours / row.buf;
  return row;
}

async function main() {
  const [startLoad] = loadavg();
  const dir = mkdtempSync(join(tmpdir(), "protocall-curl-bench-"));
  process.env.PROTOCALL_CACHE_DIR = join(dir, "cache");
  let server;
  try {
    const [{ server: serverScript, set }, largeSet] = await Promise.all([
      buildAll(dir),
      ensureLargeSchemaSet(),
    ]);
    server = await startServer(serverScript);
    const url = server.url;
    const numbers = (n) => {
      const path = join(dir, `numbers-${n}.json`);
      const lines = [];
      for (let i = 1; i <= n; i++) lines.push(`{"number": ${i}}`);
      writeFileSync(path, `${lines.join("\n")}\n`);
      return path;
    };
    const sum = (n) => String((n * (n + 1)) / 2);

    const cases = [
      {
        name: "(1) unary, --schema descriptor set",
        args: ["--schema", set, "-d", '{"name": "bench"}', `${url}/demo.v1.GreetService/Greet`],
        code: 0,
        target: { ratio: 1.3 },
      },
      {
        name: "(1) unary, --schema directory",
        args: [
          "--schema",
          join(root, "examples"),
          "-d",
          '{"name": "bench"}',
          `${url}/demo.v1.GreetService/Greet`,
        ],
        code: 0,
      },
      {
        name: "(2) 83 MB --schema, resolve and call a method",
        args: [
          "--schema",
          largeSet,
          "-d",
          '{"topic": "projects/p/topics/t"}',
          `${url}/google.pubsub.v1.Publisher/Publish`,
        ],
        code: 96,
        target: { ratio: 0.1, mb: 150 },
      },
    ];
    for (const n of [smallStream, bigStream]) {
      cases.push({
        name: `(3) client stream, ${n.toLocaleString("en")} messages from a file`,
        args: [
          "--schema",
          set,
          "--protocol",
          "grpc",
          "-d",
          `@${numbers(n)}`,
          `${url}/demo.v1.DemoService/Sum`,
        ],
        code: 0,
        expect: sum(n),
        target: { ratio: 1.0 },
      });
    }
    for (const n of [smallStream, bigStream]) {
      cases.push({
        name: `(3) server stream, ${n.toLocaleString("en")} responses`,
        args: [
          "--schema",
          set,
          "--protocol",
          "grpc",
          "-d",
          `{"count": ${n}}`,
          `${url}/demo.v1.DemoService/Count`,
        ],
        code: 0,
        large: true,
        target: { ratio: 1.0 },
      });
    }
    cases.push({
      name: "(4) unary, reflection",
      args: ["-d", '{"name": "bench"}', `${url}/demo.v1.GreetService/Greet`],
      code: 0,
      target: { ratio: 1.3 },
    });

    // Cold start: the variable as set here, else a CA bundle of the system (as many users have it).
    const extraCa =
      process.env.NODE_EXTRA_CA_CERTS ||
      ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"].find(
        (f) => existsSync(f),
      );
    const withCa = extraCa ? { ...process.env, NODE_EXTRA_CA_CERTS: extraCa } : undefined;
    const withoutCa = { ...process.env };
    delete withoutCa.NODE_EXTRA_CA_CERTS;
    const cold = [
      "--schema",
      set,
      "--http2-prior-knowledge",
      "-d",
      '{"name": "bench"}',
      `${url}/demo.v1.GreetService/Greet`,
    ];
    if (withCa) {
      cases.unshift({
        name: "(0) cold start, unary over h2c, NODE_EXTRA_CA_CERTS set",
        args: cold,
        code: 0,
        env: withCa,
        target: { ratio: 1.2 },
      });
    }
    cases.splice(withCa ? 1 : 0, 0, {
      name: "(0) cold start, unary over h2c, no NODE_EXTRA_CA_CERTS",
      args: cold,
      code: 0,
      env: withoutCa,
      target: { ratio: 1.0 },
    });

    const only = process.env.BENCH_ONLY;
    const rows = [];
    for (const c of only ? cases.filter((x) => x.name.includes(only)) : cases) {
      process.stderr.write(`${c.name} `);
      const row = await compare(c);
      process.stderr.write("\n");
      rows.push(row);
    }

    // protocall alone: other commands' start, and Node's own share.
    const rpcFile = join(dir, "one.rpc");
    writeFileSync(rpcFile, `### Greet\n${url}/demo.v1.GreetService/Greet\n\n{"name": "bench"}\n`);
    const alone = [
      { name: "protocall --version", command: process.execPath, args: [cli, "--version"] },
      {
        name: "protocall run, one request (reflection)",
        command: process.execPath,
        args: [cli, "run", rpcFile],
      },
      { name: "node -e 0", command: process.execPath, args: ["-e", "0"] },
    ];
    const aloneRows = [];
    process.stderr.write("protocall alone ");
    for (const a of alone) {
      for (const [label, env] of [
        ["no NODE_EXTRA_CA_CERTS", withoutCa],
        ...(withCa ? [["NODE_EXTRA_CA_CERTS set", withCa]] : []),
      ]) {
        const times = [];
        for (let i = -1; i < runs; i++) {
          const r = await run(a.command, a.args, { env });
          if (r.code !== 0) throw new Error(`${a.name} exited ${r.code}:\n${r.stderr}`);
          if (i >= 0) times.push(r.wallMs);
        }
        aloneRows.push({ name: `${a.name}, ${label}`, ms: median(times) });
        process.stderr.write(".");
      }
    }
    process.stderr.write("\n");

    console.log(`node ${process.version}, ${runs} runs per tool per case (alternating), fresh process each`);
    if (extraCa) console.log(`NODE_EXTRA_CA_CERTS for the cold-start case: ${extraCa}`);
    console.log(`peak RSS: ${timeBinary ? "GNU time (maxrss)" : "VmHWM polled from /proc"}`);
    const [load1, load5] = loadavg();
    console.log(
      `load average at the start: ${startLoad.toFixed(1)}, at the end: ${load1.toFixed(1)} (5 min: ${load5.toFixed(1)}) on ${cpus().length} CPUs (wall times need a quiet machine)\n`,
    );
    console.log(
      "| case | protocall ms | buf ms | ratio | protocall CPU ms | buf CPU ms | protocall RSS MB | buf RSS MB | target | result |",
    );
    console.log("|---|---:|---:|---:|---:|---:|---:|---:|---|---|");
    for (const r of rows) {
      let target = "";
      let verdict = "";
      if (r.target) {
        target = `≤ ${r.target.ratio}${r.target.mb ? `, ≤ ${r.target.mb} MB` : ""}`;
        const ok = r.ratio <= r.target.ratio && (!r.target.mb || r.oursRss <= r.target.mb);
        verdict = ok ? "met" : "missed";
      }
      if (!r.sameOutput) verdict += " (outputs differ)";
      console.log(
        `| ${r.name} | ${fmt(r.ours)} | ${fmt(r.buf)} | ${fmt(r.ratio, 2)} | ${fmt(r.oursCpu)} | ${fmt(r.bufCpu)} | ${fmt(r.oursRss)} | ${fmt(r.bufRss)} | ${target} | ${verdict} |`,
      );
    }
    console.log("\n| protocall alone | ms (median) |\n|---|---:|");
    for (const r of aloneRows) console.log(`| ${r.name} | ${fmt(r.ms)} |`);
  } finally {
    server?.child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
