// The Test Explorer in the real extension host: every request of every .rpc file of the workspace is
// a test item (with its range, so the gutter shows its run icon); running a file runs its requests in
// order (a capture feeds the next request), a failed assertion is reported with its message at its
// line, and VS Code's "Rerun Failed Tests" runs only the failed request again.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as vscode from "vscode";
import type { TestsApi } from "../../../src/extension/test-explorer/tests-feature";
import { type VscodeTest, type VscodeTestEnv, waitFor } from "../harness";

async function api(): Promise<TestsApi> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return ((await ext.activate()) as { tests: TestsApi }).tests;
}

/** Runs a file's requests once the Test Explorer lists its third request (the file was just written). */
async function runFile(tests_: TestsApi, uri: vscode.Uri) {
  await waitFor(
    "the file's items",
    async () => ((await tests_.items()).some((i) => i.id === `${uri}#2`) ? true : undefined),
    20_000,
  );
  return tests_.run([uri.toString()]);
}

function file(env: VscodeTestEnv, expected: string): string {
  return `@host = ${env.demoUrl}

### Log in
# @capture who = message.greeting
{{host}}/demo.v1.GreetService/Greet

{"name": "explorer"}

### Check the greeting
# @assert message.greeting == "${expected}"
{{host}}/demo.v1.GreetService/Greet

{"name": "{{who}}"}

### Count
# @protocol grpc
# @assert messages.length == 3
{{host}}/demo.v1.DemoService/Count

{"count": 3}
`;
}

export const tests: VscodeTest[] = [
  {
    name: "files outside the workspace: a test run neither reads nor writes them; inside, an include is sent",
    timeoutMs: 90_000,
    async run(env) {
      const tests_ = await api();
      const outside = mkdtempSync(join(tmpdir(), "protocall-outside-"));
      writeFileSync(join(outside, "secret.json"), '{"name": "from outside"}');
      writeFileSync(join(env.workspace, "requests", "inside.json"), '{"name": "inside"}');
      const path = join(env.workspace, "requests", "outside-suite.rpc");
      writeFileSync(
        path,
        [
          "### Include outside",
          `${env.demoUrl}/demo.v1.GreetService/Greet`,
          "",
          `< ${join(outside, "secret.json")}`,
          "",
          "### Output outside",
          `# @output ${join(outside, "out.json")}`,
          `${env.demoUrl}/demo.v1.GreetService/Greet`,
          "",
          "< ./inside.json",
          "",
          "### Include inside",
          '# @assert message.greeting == "Hello, inside!"',
          `${env.demoUrl}/demo.v1.GreetService/Greet`,
          "",
          "< ./inside.json",
          "",
        ].join("\n"),
      );
      try {
        const uri = vscode.Uri.file(path);
        const results = await runFile(tests_, uri);
        assert.deepEqual(
          results.map((r) => [r.label, r.result]),
          [
            ["Include outside", "errored"],
            ["Output outside", "errored"],
            ["Include inside", "passed"],
          ],
          JSON.stringify(results),
        );
        assert.match(
          results[0].messages[0].text,
          new RegExp(
            `"Include outside" reads < ${join(outside, "secret.json")}, outside the workspace; send it once with Send to allow it`,
          ),
        );
        assert.match(
          results[1].messages[0].text,
          /"Output outside" writes @output .*out\.json, outside the workspace/,
        );
        assert.equal(
          existsSync(join(outside, "out.json")),
          false,
          "nothing is written outside the workspace",
        );
      } finally {
        rmSync(outside, { recursive: true, force: true });
        rmSync(path, { force: true });
      }
    },
  },
  {
    name: "every request of every .rpc file is listed, with its line (stub files are not)",
    timeoutMs: 60_000,
    async run(env) {
      const tests_ = await api();
      writeFileSync(join(env.workspace, "requests", "explorer-suite.rpc"), file(env, "x"));
      const items = await waitFor(
        "the new file's requests",
        async () => {
          const all = await tests_.items();
          const mine = all.filter((i) => i.file.endsWith("explorer-suite.rpc"));
          return mine.length === 3 ? { all, mine } : undefined;
        },
        20_000,
      );
      assert.deepEqual(
        items.mine.map((i) => [i.label, i.line]),
        [
          ["Log in", 3],
          ["Check the greeting", 9],
          ["Count", 15],
        ],
      );
      // The example workspace's own request file is listed too, and its mock stubs are not requests.
      assert.ok(items.all.some((i) => i.file.endsWith("demo.rpc") && i.label === "Greet someone"));
      assert.deepEqual(
        items.all.filter((i) => i.file.includes("mocks")).map((i) => i.label),
        [],
      );
    },
  },
  {
    name: "running a file: captures feed the next request; a failure names the assertion and its line",
    timeoutMs: 90_000,
    async run(env) {
      const tests_ = await api();
      const path = join(env.workspace, "requests", "explorer-suite.rpc");
      writeFileSync(path, file(env, "wrong"));
      const uri = vscode.Uri.file(path);
      const results = await runFile(tests_, uri);
      assert.deepEqual(
        results.map((r) => [r.label, r.result]),
        [
          ["Log in", "passed"],
          ["Check the greeting", "failed"],
          ["Count", "passed"],
        ],
      );
      assert.deepEqual(results[1].messages, [
        { text: 'expected message.greeting == "wrong", got "Hello, Hello, explorer!!"', line: 10 },
      ]);
    },
  },
  {
    name: "Rerun Failed Tests runs only the failed request, which passes once the file is fixed",
    timeoutMs: 90_000,
    async run(env) {
      const tests_ = await api();
      const path = join(env.workspace, "requests", "explorer-suite.rpc");
      const uri = vscode.Uri.file(path);
      writeFileSync(path, file(env, "wrong"));
      await tests_.run([uri.toString()]);
      // Run through the Test Explorer's own command (the file in the editor) so VS Code knows the failure.
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      const before = tests_.lastRun();
      await vscode.commands.executeCommand("testing.runCurrentFile");
      // The Test Explorer runs nothing for a file whose items it has not read yet (on a loaded machine
      // the file's change may still be on its way to the controller): ask again every 10 s.
      let askedAt = Date.now();
      await waitFor(
        "the run from the Test Explorer",
        async () => {
          const last = tests_.lastRun();
          if (last !== before && last?.some((r) => r.result === "failed")) return true;
          if (Date.now() - askedAt > 10_000) {
            askedAt = Date.now();
            await vscode.commands.executeCommand("testing.runCurrentFile");
          }
          return undefined;
        },
        60_000,
      );
      writeFileSync(path, file(env, "Hello, Hello, explorer!!"));
      const doc = await vscode.workspace.openTextDocument(uri);
      await waitFor(
        "the fixed text",
        async () => (doc.getText().includes("Hello, Hello, explorer!!") ? true : undefined),
        20_000,
      );
      const failedRun = tests_.lastRun();
      await vscode.commands.executeCommand("testing.reRunFailTests");
      const rerun = await waitFor(
        "the rerun",
        async () => {
          const last = tests_.lastRun();
          return last !== failedRun ? last : undefined;
        },
        60_000,
      );
      assert.deepEqual(
        rerun.map((r) => [r.label, r.result]),
        [["Check the greeting", "passed"]],
      );
    },
  },
];
