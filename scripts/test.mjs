#!/usr/bin/env node
// Runs the whole test suite with Node's built-in test runner (TypeScript through tsx).
// Builds the bundles first, because CLI tests run the real dist/cli.js.
// Two phases: the unit, CLI and language-server tests (concurrently), then the editor tests that run
// a real VS Code (code-server and Chromium: test/e2e/ and test/vscode/), one file at a time, after
// making sure code-server is installed (scripts/install-code-server.sh).
// Usage: npm test [-- [--node PATH] [--no-build] <file or directory>...]
//   --node PATH   run the unit, CLI and language-server tests with this node binary (another Node line,
//                 e.g. .tools/node22/bin/node from scripts/install-node-lines.sh); the CLI tests then run
//                 dist/cli.js with it too. Editor tests are left out: the editor runs its own Node.
//   --no-build    use dist/ as it is (built by an earlier run)
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
const noBuild = args.includes("--no-build");
if (noBuild) args.splice(args.indexOf("--no-build"), 1);
let testNode = process.execPath;
const nodeFlag = args.indexOf("--node");
if (nodeFlag >= 0) {
  testNode = args[nodeFlag + 1] ?? "";
  args.splice(nodeFlag, 2);
  const version = spawnSync(testNode, ["--version"], { encoding: "utf8" });
  if (version.status !== 0) {
    console.error(
      `protocall tests: --node ${testNode} is not a node binary that runs (install the Node lines with \`bash scripts/install-node-lines.sh\`)`,
    );
    process.exit(2);
  }
  console.log(
    `protocall tests: unit, CLI and language-server tests on Node ${version.stdout.trim()} (${testNode})`,
  );
}
const files = [];
for (const target of args.length ? args : ["test"]) collect(target, files);
if (files.length === 0) {
  console.error("protocall tests: no test files found in " + (args.join(" ") || "test"));
  process.exit(1);
}

if (!noBuild) {
  const build = spawnSync(process.execPath, ["esbuild.mjs"], { stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

/** Tests that start code-server and Chromium: heavy, so they run alone, after the others. */
const isEditorTest = (file) => /(^|[\\/])test[\\/](e2e|vscode)[\\/]/.test(file);
// On another Node line a test that hangs (a difference of that line) fails after 5 minutes instead
// of stopping the whole run.
const lineTimeout = testNode === process.execPath ? [] : ["--test-timeout=300000"];
const unit = files.filter((f) => !isEditorTest(f));
const editor = testNode === process.execPath ? files.filter(isEditorTest) : [];

function runTests(list, concurrency) {
  const result = spawnSync(
    testNode,
    [
      "--import",
      "tsx",
      "--test",
      `--test-concurrency=${concurrency}`,
      "--test-reporter=spec",
      ...lineTimeout,
      ...list,
    ],
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
