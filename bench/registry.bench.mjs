#!/usr/bin/env node
// The registry emulator under history: push latency (UploadService/Upload, as buf sends it) and
// delivery latency (push answered → event at an https callback), measured on an empty
// `protocall registry serve --state` and again after 1,000 pushes of a small module with 50 webhooks,
// plus how fast the state fills and how long a restart on it takes. The measuring program
// (bench/lib/registry-run.ts) is bundled with esbuild; the emulator is dist/cli.js in its own process.
// Usage: node bench/registry.bench.mjs [--samples N] [--fill N]   (builds dist/cli.js when missing)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "dist/cli.js");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
if (!existsSync(cli)) {
  const build = spawnSync(process.execPath, [join(root, "esbuild.mjs")], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(1);
}
const outfile = join(mkdtempSync(join(tmpdir(), "protocall-bench-")), "registry-run.js");
await esbuild.build({
  entryPoints: [join(root, "bench/lib/registry-run.ts")],
  outfile,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  logLevel: "warning",
});
const run = spawnSync(process.execPath, [outfile, cli, arg("--samples", "50"), arg("--fill", "1000")], {
  cwd: root,
  stdio: "inherit",
});
process.exit(run.status ?? 1);
