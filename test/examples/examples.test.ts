import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseRpcFile } from "../../src/core/rpcfile/parse";
import { runBuf } from "../support/buf";
import { examplesDir } from "../support/servers";

test("the example workspace builds and passes buf lint", { timeout: 60_000 }, async () => {
  const [build, lint] = await Promise.all([
    runBuf(["build", examplesDir, "-o", "-#format=json"], { timeoutMs: 50_000 }),
    runBuf(["lint", examplesDir], { timeoutMs: 50_000 }),
  ]);
  assert.equal(build.code, 0, build.stderr);
  const files = (JSON.parse(build.stdout) as { file: { name: string }[] }).file.map((f) => f.name);
  for (const name of ["demo/v1/demo.proto", "demo/v1/greet.proto", "demo/v1/types.proto"]) {
    assert.ok(files.includes(name), `${name} in ${files.join(", ")}`);
  }
  assert.equal(lint.code, 0, lint.stdout + lint.stderr);
});

test("the example request file parses without diagnostics", () => {
  const parsed = parseRpcFile(readFileSync(join(examplesDir, "requests/demo.rpc"), "utf8"));
  assert.deepEqual(parsed.diagnostics, []);
  assert.equal(parsed.requests.length, 8);
});
