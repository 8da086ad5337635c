// `npm start`: the demo server, the registry emulator, the mock server and code-server with the
// extension start with nothing to configure, the URL to open is printed, and Ctrl+C (SIGINT) stops
// all of them.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { runProcess } from "../support/cli";
import { ensureCodeServer, repoRoot } from "../support/code-server";
import { poll } from "../support/workbench";

test("npm start serves the demo, the registry, the mock and VS Code, and stops them all on Ctrl+C", {
  timeout: 180_000,
}, async () => {
  ensureCodeServer();
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(repoRoot, "scripts/start.mjs"),
      "--no-build",
      "--port",
      "0",
      "--editor-port",
      "0",
    ],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  try {
    const urls = await poll(
      "npm start to print the editor's URL",
      async () => {
        const editor = /Open Protocall in VS Code:\s+(http:\/\/127\.0\.0\.1:\d+\/\?folder=\S+)/.exec(
          out,
        )?.[1];
        const demo = /Demo server \(reflection on\):\s+(\S+)/.exec(out)?.[1];
        const registry = /Registry emulator:\s+(\S+)/.exec(out)?.[1];
        const workspace = /Workspace:\s+(\S+)/.exec(out)?.[1];
        const mock = /Mock server:\s+(\S+)/.exec(out)?.[1];
        if (child.exitCode !== null) throw new Error(`npm start exited:\n${out}`);
        return editor && demo && registry && workspace && mock
          ? { editor, demo, registry, workspace, mock }
          : undefined;
      },
      120_000,
    );
    // The workbench page is served.
    const page = await fetch(urls.editor);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /workbench/i);
    // The demo server answers a Connect call.
    const greet = await fetch(`${urls.demo}/demo.v1.GreetService/Greet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "start" }),
    });
    assert.deepEqual(await greet.json(), { greeting: "Hello, start!" });
    // The mock server answers from examples/mocks.
    const mocked = await fetch(`${urls.mock}/demo.v1.GreetService/Greet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "world" }),
    });
    assert.deepEqual(await mocked.json(), { greeting: "Hello, world!" });
    assert.equal(mocked.headers.get("x-served-by"), "protocall-mock");
    // The registry emulator answers (and asks for a token).
    const reg = await fetch(`${urls.registry}/buf.alpha.registry.v1alpha1.WebhookService/ListWebhooks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(reg.status, 401);
    // The demo is not on 8080 here, so the workspace is a copy whose requests name its port.
    assert.match(
      readFileSync(join(urls.workspace, "requests/demo.rpc"), "utf8"),
      new RegExp(`@host = ${urls.demo}`),
    );
    // The request file that tests itself passes against that demo server (what the Testing view runs).
    const checked = await runProcess(
      process.execPath,
      [join(repoRoot, "bin/protocall.js"), "run", join(urls.workspace, "requests/assertions.rpc")],
      { timeoutMs: 60_000 },
    );
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(checked.stderr, /requests: \d+ passed; \d+ checks/);
    assert.doesNotMatch(checked.stderr, /failed/);

    child.kill("SIGINT");
    await exited;
    for (const url of [urls.demo, urls.registry, urls.mock, urls.editor]) {
      await assert.rejects(fetch(url, { signal: AbortSignal.timeout(3000) }), `${url} is closed`);
    }
    assert.equal(existsSync(urls.workspace), false, "the workspace copy is removed");
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
