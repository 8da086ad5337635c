#!/usr/bin/env node
// Registry modules as schemas: `protocall curl --schema REMOTE/acme/<module>` (a call naming one
// method, and --list-methods) against `buf curl --schema` of the same module on the same `protocall
// registry serve`, in the same run, with warm caches (the figure that matters: every call after the
// first) and cold. Two modules: the demo
// schema of examples/ (small) and the google-proto-files tree of the large-schema benchmark (large;
// BENCH_SKIP_LARGE=1 leaves it out: its push and cold fetch take minutes). The measuring program
// (bench/lib/registry-schema-run.ts) is bundled with esbuild; Protocall runs as the installed command
// does (bin/protocall.js: dist/curl.js with its code cache).
// Environment: BENCH_RUNS (warm runs per tool, default 7).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { bufBinary } from "./lib/large-set.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "bin/protocall.js");
if (!existsSync(join(root, "dist/curl.js"))) {
  const build = spawnSync(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(1);
}
const gpf = dirname(createRequire(join(root, "package.json")).resolve("google-proto-files/package.json"));
const outfile = join(mkdtempSync(join(tmpdir(), "protocall-bench-")), "registry-schema-run.js");
await esbuild.build({
  entryPoints: [join(root, "bench/lib/registry-schema-run.ts")],
  outfile,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  logLevel: "warning",
});
const run = spawnSync(
  process.execPath,
  [
    outfile,
    cli,
    bufBinary(),
    gpf,
    process.env.BENCH_RUNS ?? "7",
    process.env.BENCH_SKIP_LARGE === "1" ? "1" : "0",
  ],
  { cwd: root, stdio: "inherit" },
);
process.exit(run.status ?? 1);
