// The measuring program of bench/registry-schema.bench.mjs (bundled with esbuild). Starts the registry
// emulator over https with a fresh test CA, pushes two modules with the real buf (the demo schema of
// examples/, and the google-proto-files tree of the large-schema benchmark), then times, in fresh
// processes and alternating the two tools each round, `protocall curl --schema REMOTE/o/m
// --list-methods` against `buf curl --schema REMOTE/o/m --list-methods`, both with warm caches (buf's
// module cache, Protocall's module and schema cache), plus the cold fetch of each. Prints Markdown.
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
import { parseRegistryConfig } from "../../src/core/webhooks/emulator/config";
import { startRegistryEmulator } from "../../src/core/webhooks/emulator/server";
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
    const modules = [{ name: "demo", label: "small (examples/ demo, 3 files)" }];
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
      modules.push({ name: "googleapis", label: `large (google-proto-files, ${files.length} files)` });
    }

    rows.push(
      "| module | measurement | protocall (median) | buf (median) | ratio | protocall peak RSS | buf peak RSS |",
      "|---|---|---|---|---|---|---|",
    );
    for (const m of modules) {
      const spec = `${remote}/acme/${m.name}`;
      const ours = () => run(process.execPath, [cli, "curl", "--schema", spec, "--list-methods"], env());
      const theirs = () => run(buf, ["curl", "--schema", spec, "--list-methods"], env());
      // Cold: empty caches, once each.
      rmSync(join(home, "protocall-cache"), { recursive: true, force: true });
      rmSync(join(home, "buf-cache"), { recursive: true, force: true });
      const coldOurs = await ours();
      const coldBuf = await theirs();
      for (const r of [coldOurs, coldBuf]) if (r.code !== 0) throw new Error(`cold run failed: ${r.stderr}`);
      if (coldOurs.stdout !== coldBuf.stdout) throw new Error(`outputs differ for ${spec}`);
      const line = (what: string, a: Run[], b: Run[]) => {
        const am = median(a.map((r) => r.wallMs));
        const bm = median(b.map((r) => r.wallMs));
        const peak = (rs: Run[]) => Math.max(...rs.map((r) => r.peakMb ?? 0)).toFixed(0);
        rows.push(
          `| ${m.label} | ${what} | ${am.toFixed(0)} ms | ${bm.toFixed(0)} ms | ${(am / bm).toFixed(2)}× | ${peak(a)} MB | ${peak(b)} MB |`,
        );
      };
      line("cold (empty caches, 1 run)", [coldOurs], [coldBuf]);
      const a: Run[] = [];
      const b: Run[] = [];
      for (let i = 0; i < runs; i++) {
        // Alternate which tool goes first, so neither always meets a machine the other just warmed.
        const pair = i % 2 ? [await theirs(), await ours()].reverse() : [await ours(), await theirs()];
        for (const r of pair) if (r.code !== 0) throw new Error(`warm run failed: ${r.stderr}`);
        a.push(pair[0]);
        b.push(pair[1]);
      }
      line(`warm (${runs} runs each)`, a, b);
    }
  } finally {
    await emulator.close();
    rmSync(home, { recursive: true, force: true });
  }
  console.log(rows.join("\n"));
  console.log(
    `\n\`--list-methods\` of \`--schema REMOTE/acme/<module>\` against \`protocall registry serve\` over https on loopback; load average ${loadavg()[0].toFixed(2)}. Protocall's warm call resolves the reference (GetCommits) and opens the cached compiled schema lazily; buf's resolves it (GetCommits, GetGraph) and compiles the cached module.`,
  );
}

main().catch((err) => {
  console.error(String(err?.stack ?? err));
  process.exit(1);
});
