#!/usr/bin/env node
// Runs every bench/*.bench.mjs in sequence, each in its own process, and prints their figures.
//
// The contract for a benchmark is simple: a file bench/<name>.bench.mjs that, run with
// `node bench/<name>.bench.mjs`, prints its figures (a Markdown table is best) to stdout and exits 0;
// a non-zero exit marks it failed. It may write progress to stderr.
//
// Usage: npm run bench [-- <name filter>...]   e.g. `npm run bench -- large-schema`
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(here)
  .filter((name) => name.endsWith(".bench.mjs"))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort();

if (files.length === 0) {
  console.error(`protocall bench: no benchmarks match ${filters.join(" ") || "bench/*.bench.mjs"}`);
  process.exit(1);
}

const failed = [];
for (const name of files) {
  console.log(`\n## ${name.replace(/\.bench\.mjs$/, "")}\n`);
  const start = performance.now();
  const result = spawnSync(process.execPath, [join(here, name)], {
    stdio: "inherit",
    cwd: join(here, ".."),
    env: process.env,
  });
  const seconds = ((performance.now() - start) / 1000).toFixed(1);
  if (result.status !== 0) {
    failed.push(name);
    console.log(`\n${name} failed (exit ${result.status ?? result.signal}) after ${seconds} s`);
  } else {
    console.log(`\n(${name}: ${seconds} s)`);
  }
}

if (failed.length > 0) {
  console.error(`\nprotocall bench: ${failed.length} failed: ${failed.join(", ")}`);
  process.exit(1);
}
