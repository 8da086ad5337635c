#!/usr/bin/env node
// Runs the whole test suite with Node's built-in test runner (TypeScript through tsx).
// Builds the bundles first, because CLI tests run the real dist/cli.js.
// Two phases: the unit, CLI and language-server tests (concurrently), then the editor tests that run
// a real VS Code (code-server and Chromium: test/e2e/ and test/vscode/), one file at a time, after
// making sure code-server is installed (scripts/install-code-server.sh).
// Usage: npm test [-- <file or directory>...]
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
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

/** Tests that start code-server and Chromium: heavy, so they run alone, after the others. */
const isEditorTest = (file) => /(^|[\\/])test[\\/](e2e|vscode)[\\/]/.test(file);
const unit = files.filter((f) => !isEditorTest(f));
const editor = files.filter(isEditorTest);

function runTests(list, concurrency) {
  const result = spawnSync(
    process.execPath,
    ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, "--test-reporter=spec", ...list],
    { stdio: "inherit", env: { ...process.env, FORCE_COLOR: "0" } },
  );
  return result.status ?? 1;
}

let status = 0;
if (unit.length > 0) status = runTests(unit, process.env.TEST_CONCURRENCY ?? "3");

if (editor.length > 0) {
  const stamp = join(".tools", "code-server", ".installed-4.100.3");
  if (!existsSync(stamp)) {
    console.log("protocall tests: installing code-server and Chromium for the editor tests");
    const install = spawnSync("bash", ["scripts/install-code-server.sh"], { stdio: "inherit" });
    if (install.status !== 0 || !existsSync(stamp)) {
      console.error(
        "protocall tests: the editor tests need code-server and Chromium, and their install failed.\n" +
          `Run \`bash scripts/install-code-server.sh\` and fix what it reports, then run the tests again.`,
      );
      process.exit(1);
    }
  }
  console.log(`\nprotocall tests: editor tests (real VS Code), ${editor.length} file(s), one at a time`);
  const editorStatus = runTests(editor, process.env.TEST_EDITOR_CONCURRENCY ?? "1");
  if (status === 0) status = editorStatus;
}
process.exit(status);
