#!/usr/bin/env node
// Runs the whole test suite with Node's built-in test runner (TypeScript through tsx).
// Builds the bundles first, because CLI tests run the real dist/cli.js.
// Usage: npm test [-- <file or directory>...]
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function collect(path, out) {
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      if (name === "node_modules" || name === "fixtures") continue;
      collect(join(path, name), out);
    }
  } else if (/\.test\.ts$/.test(path)) {
    out.push(path);
  }
  return out;
}

const args = process.argv.slice(2);
const files = [];
for (const target of args.length ? args : ["test"]) collect(target, files);
if (files.length === 0) {
  console.error("protocall tests: no test files found in " + (args.join(" ") || "test"));
  process.exit(1);
}

const build = spawnSync(process.execPath, ["esbuild.mjs"], { stdio: "inherit" });
if (build.status !== 0) process.exit(build.status ?? 1);

const concurrency = process.env.TEST_CONCURRENCY ?? "3";
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, "--test-reporter=spec", ...files],
  { stdio: "inherit", env: { ...process.env, FORCE_COLOR: "0" } },
);
process.exit(result.status ?? 1);
