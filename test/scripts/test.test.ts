// scripts/test.mjs with --node: the unit, CLI and language-server tests run with the node binary given
// (another Node line), editor tests are left out, and a binary that does not run is refused with what
// to do. The binary here is a stand-in that records how it was started, then runs this node.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { repoRoot, runProcess } from "../support/cli";

const temp = mkdtempSync(join(tmpdir(), "protocall-test-script-"));
after(() => rmSync(temp, { recursive: true, force: true }));

test("--node runs the unit tests with that binary and leaves the editor tests out", {
  timeout: 120_000,
}, async () => {
  const log = join(temp, "calls.txt");
  const fakeNode = join(temp, "node");
  writeFileSync(fakeNode, `#!/bin/sh\necho "$*" >> "${log}"\nexec "${process.execPath}" "$@"\n`);
  chmodSync(fakeNode, 0o755);
  const r = await runProcess(
    process.execPath,
    [
      "scripts/test.mjs",
      "--no-build",
      "--node",
      fakeNode,
      "test/ci/node-lines.test.ts",
      "test/e2e/start.test.ts",
    ],
    { cwd: repoRoot, timeoutMs: 110_000, env: { TEST_CONCURRENCY: "1" } },
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`tests on Node ${process.version} \\(${fakeNode}\\)`));
  const calls = readFileSync(log, "utf8").trim().split("\n");
  assert.equal(calls[0], "--version");
  assert.equal(calls.length, 2, calls.join("\n"));
  assert.match(calls[1], /^--import tsx --test .*test\/ci\/node-lines\.test\.ts$/);
  assert.doesNotMatch(r.stdout, /editor tests/);
});

test("--node with a binary that does not run says how to install the Node lines", async () => {
  const r = await runProcess(
    process.execPath,
    ["scripts/test.mjs", "--no-build", "--node", join(temp, "missing"), "test/ci/node-lines.test.ts"],
    { cwd: repoRoot },
  );
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /is not a node binary that runs \(install the Node lines with `bash scripts\/install-node-lines\.sh`\)/,
  );
});
