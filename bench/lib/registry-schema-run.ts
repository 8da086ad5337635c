// The measuring program of bench/registry-schema.bench.mjs (bundled with esbuild). Starts the registry
// emulator over https with a fresh test CA and the demo server, pushes two modules with the real buf
// (the demo schema of examples/, and the google-proto-files tree of the large-schema benchmark), then
// times, in fresh processes and alternating the two tools each round, `protocall curl --schema
// REMOTE/o/m` against `buf curl --schema REMOTE/o/m`, both with warm caches (buf's module cache,
// Protocall's module and schema cache), plus the cold fetch of each: a call naming one method of the
// module (the demo's Greet; for the large module google.pubsub.v1.Publisher/Publish, which the demo
// server answers with unimplemented, exit 96, for both), and `--list-methods`. Prints Markdown.
// argv: <bin/protocall.js> <buf> <google-proto-files dir> <runs> <skip large: 0|1>
import { spawn } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseRegistryConfig } from "../../src/core/registry-emulator/config";
import { startRegistryEmulator } from "../../src/core/registry-emulator/server";
import { startDemoServer } from "../../src/demo/server";
import { createTestPki } from "../../test/support/tls";

const [cli, buf, gpf, runsArg, skipLarge] = process.argv.slice(2);
const runs = Math.max(1, Number(runsArg) || 7);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
  peakMb?: number;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let peakKb = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
      } catch {}
    }, 5);
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(poll);
      resolve({
        code,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
        wallMs: performance.now() - start,
        peakMb: peakKb ? peakKb / 1024 : undefined,
      });
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Every .proto file under `dir` (relative paths), minus excluded directories. */
function protoFiles(dir: string, excluded: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const rel = relative(dir, p);
      if (excluded.some((e) => rel === e || rel.startsWith(`${e}/`))) continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".proto")) out.push(rel);
    }
  };
  walk(dir);
  return out;
}

async function main() {
  const pki = await createTestPki(["localhost"]);
  const config = parseRegistryConfig({
    users: [{ name: "alice", token: "alice-token" }],
    organizations: [{ name: "acme", admins: ["alice"] }],
  });
  const emulator = await startRegistryEmulator({
    config,
    host: "127.0.0.1",
    tls: { cert: pki.server.cert, key: pki.server.key },
  });
  const remote = `localhost:${new URL(emulator.url).port}`;
  const demo = await startDemoServer();
  const home = mkdtempSync(join(tmpdir(), "protocall-bench-home-"));
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: home,
    SSL_CERT_FILE: pki.ca.certPath,
    BUF_TOKEN: "alice-token",
    BUF_CACHE_DIR: join(home, "buf-cache"),
    PROTOCALL_CACHE_DIR: join(home, "protocall-cache"),
    ...extra,
  });
  const rows: string[] = [];
  try {
    const push = async (name: string, dir: string) => {
      writeFileSync(
        join(dir, "buf.yaml"),
        `version: v2\nmodules:\n  - path: proto\n    name: ${remote}/acme/${name}\n`,
      );
      const start = performance.now();
      const r = await run(buf, ["push", "--create", "--create-visibility", "private"], env(), dir);
      if (r.code !== 0) throw new Error(`buf push ${name} failed: ${r.stderr}`);
      process.stderr.write(`pushed acme/${name} in ${((performance.now() - start) / 1000).toFixed(1)} s\n`);
    };
    const small = mkdtempSync(join(tmpdir(), "protocall-bench-small-"));
    cpSync(join(process.cwd(), "examples/proto"), join(small, "proto"), { recursive: true });
    await push("demo", small);
    const modules = [
      {
        name: "demo",
        label: "small (examples/ demo, 3 files)",
        call: { args: ["-d", '{"name": "bench"}', `${demo.url}/demo.v1.GreetService/Greet`], code: 0 },
      },
    ];
    if (skipLarge !== "1") {
      const large = mkdtempSync(join(tmpdir(), "protocall-bench-large-"));
      const excluded = [
        "build",
        "gapic",
        "grafeas",
        "google/protobuf",
        "google/cloud/binaryauthorization",
        "google/devtools/containeranalysis",
      ];
      const files = protoFiles(gpf, excluded);
      for (const f of files) {
        mkdirSync(join(large, "proto", f, ".."), { recursive: true });
        cpSync(join(gpf, f), join(large, "proto", f));
      }
      await push("googleapis", large);
      modules.push({
        name: "googleapis",
        label: `large (google-proto-files, ${files.length} files)`,
        call: { args: ["-d", "{}", `${demo.url}/google.pubsub.v1.Publisher/Publish`], code: 96 },
      });
    }

    rows.push(
      "| module | measurement | protocall (median) | buf (median) | ratio | protocall peak RSS | buf peak RSS |",
      "|---|---|---|---|---|---|---|",
    );
    for (const m of modules) {
      const spec = `${remote}/acme/${m.name}`;
      for (const c of [
        { what: "call naming one method", args: m.call.args, code: m.call.code },
        { what: "--list-methods", args: ["--list-methods"], code: 0 },
      ]) {
        const ours = () => run(process.execPath, [cli, "curl", "--schema", spec, ...c.args], env());
        const theirs = () => run(buf, ["curl", "--schema", spec, ...c.args], env());
        const check = (r: Run, who: string) => {
          if (r.code !== c.code)
            throw new Error(`${who} ${c.what} exited ${r.code}, expected ${c.code}: ${r.stderr}`);
        };
        // Cold: empty caches, once each.
        rmSync(join(home, "protocall-cache"), { recursive: true, force: true });
        rmSync(join(home, "buf-cache"), { recursive: true, force: true });
        const coldOurs = await ours();
        const coldBuf = await theirs();
        check(coldOurs, "protocall");
        check(coldBuf, "buf");
        if (coldOurs.stdout !== coldBuf.stdout) throw new Error(`outputs differ for ${spec} ${c.what}`);
        const line = (when: string, a: Run[], b: Run[]) => {
          const am = median(a.map((r) => r.wallMs));
          const bm = median(b.map((r) => r.wallMs));
          const peak = (rs: Run[]) => Math.max(...rs.map((r) => r.peakMb ?? 0)).toFixed(0);
          rows.push(
            `| ${m.label} | ${c.what}, ${when} | ${am.toFixed(0)} ms | ${bm.toFixed(0)} ms | ${(am / bm).toFixed(2)}× | ${peak(a)} MB | ${peak(b)} MB |`,
          );
        };
        line("cold (empty caches, 1 run)", [coldOurs], [coldBuf]);
        const a: Run[] = [];
        const b: Run[] = [];
        for (let i = 0; i < runs; i++) {
          // Alternate which tool goes first, so neither always meets a machine the other just warmed.
          const pair = i % 2 ? [await theirs(), await ours()].reverse() : [await ours(), await theirs()];
          check(pair[0], "protocall");
          check(pair[1], "buf");
          a.push(pair[0]);
          b.push(pair[1]);
        }
        line(`warm (${runs} runs each)`, a, b);
      }
    }
  } finally {
    await Promise.all([emulator.close(), demo.close()]);
    rmSync(home, { recursive: true, force: true });
  }
  console.log(rows.join("\n"));
  console.log(
    `\n\`--schema REMOTE/acme/<module>\` against \`protocall registry serve\` over https on loopback; load average ${loadavg()[0].toFixed(2)}. Protocall's warm call resolves the reference (GetCommits) and opens the cached compiled schema lazily; buf's resolves it (GetCommits, GetGraph) and compiles the cached module.`,
  );
}

main().catch((err) => {
  console.error(String(err?.stack ?? err));
  process.exit(1);
});
