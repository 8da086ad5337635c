import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { DemoService } from "../../src/gen/demo/v1/demo_pb";
import { repoRoot, runProcess } from "../support/cli";

const main = join(repoRoot, "src/demo/main.ts");

test("the demo server command prints its URL, serves, and stops on SIGTERM", {
  timeout: 30_000,
}, async () => {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", main, "--port", "0", "--path-prefix", "/x", "--http", "1.1"],
    {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`exited with ${code}`)));
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/x$/);
    const demo = createClient(DemoService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    const res = await demo.inspect({}, { timeoutMs: 5000 });
    assert.equal(res.path, "/x/demo.v1.DemoService/Inspect");
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    assert.equal(await exited, 0);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});

test("the demo server command explains its flags and rejects bad ones", { timeout: 30_000 }, async () => {
  const help = await runProcess(process.execPath, ["--import", "tsx", main, "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--unix-socket PATH/);
  const bad = await runProcess(process.execPath, ["--import", "tsx", main, "--reflection", "v2"]);
  assert.equal(bad.code, 1);
  assert.equal(bad.stderr, "demo server: --reflection must be a list of v1 and v1alpha, or none\n");
});
