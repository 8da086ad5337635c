// Assertions and captures in the real extension host: Send checks a request's `# @assert` options
// (the panel lists each check, passed or failed, with the value found), keeps its `# @capture`
// values for the later requests of the same file, and a request that needs a capture not taken yet
// names the request to run first.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { SendApi, SendOutcome } from "../../../src/extension/send/api";
import type { VscodeTest, VscodeTestEnv } from "../harness";

async function api(): Promise<SendApi> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  return ((await ext.activate()) as { send: SendApi }).send;
}

async function requestFile(env: VscodeTestEnv, name: string, text: string): Promise<vscode.Uri> {
  const path = join(env.workspace, "requests", name);
  writeFileSync(path, text);
  const uri = vscode.Uri.file(path);
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
  return uri;
}

async function send(uri: vscode.Uri, index: number): Promise<SendOutcome> {
  const outcome = (await vscode.commands.executeCommand("protocall.send", uri.toString(), index)) as
    | SendOutcome
    | undefined;
  assert.ok(outcome, "protocall.send returns what it did");
  return outcome;
}

function checks(env: VscodeTestEnv): string {
  return `@host = ${env.demoUrl}

### Greet
# @assert status == ok
# @assert message.greeting == "Hello, checks!"
# @assert headers["content-type"] contains "application/"
# @capture greeting = message.greeting
{{host}}/demo.v1.GreetService/Greet

{"name": "checks"}

### Greet the greeting
# @assert message.greeting contains "Hello, checks!"
# @assert message.greeting == "nope"
{{host}}/demo.v1.GreetService/Greet

{"name": "{{greeting}}"}
`;
}

export const tests: VscodeTest[] = [
  {
    name: "a request that needs a capture not taken yet names the request to run first",
    timeoutMs: 60_000,
    async run(env) {
      await api();
      const uri = await requestFile(env, "assertions-suite.rpc", checks(env));
      const outcome = await send(uri, 1);
      assert.equal(outcome.sent, false);
      assert.match(outcome.problems.join("\n"), /greeting/);
      assert.match(outcome.problems.join("\n"), /Greet\b.*first|run .*Greet/i);
    },
  },
  {
    name: "Send checks the assertions: the panel lists each one with the value found",
    timeoutMs: 60_000,
    async run(env) {
      const send_ = await api();
      const uri = await requestFile(env, "assertions-suite.rpc", checks(env));
      const outcome = await send(uri, 0);
      assert.equal(outcome.result?.ok, true, outcome.result?.error?.message);
      assert.equal(outcome.verdict, "passed", JSON.stringify(outcome.checks));
      assert.deepEqual(
        outcome.checks?.map((c) => [c.kind, c.text, c.passed]),
        [
          ["assert", "status == ok", true],
          ["assert", 'message.greeting == "Hello, checks!"', true],
          ["assert", 'headers["content-type"] contains "application/"', true],
          ["capture", "greeting = message.greeting", true],
        ],
      );
      assert.deepEqual(outcome.captured, { greeting: "Hello, checks!" });
      const html = send_.panel().html;
      assert.match(html, /Assertions: all 4 passed/);
      assert.match(
        html,
        /class="check passed"[^>]*><span class="mark">✓<\/span> <code class="text">message\.greeting == &quot;Hello, checks!&quot;<\/code> <span class="actual">actual: &quot;Hello, checks!&quot;/,
      );
    },
  },
  {
    name: "a captured value feeds the next request of the file; a failed assertion shows what was found",
    timeoutMs: 60_000,
    async run(env) {
      const send_ = await api();
      const uri = await requestFile(env, "assertions-suite.rpc", checks(env));
      await send(uri, 0);
      const outcome = await send(uri, 1);
      assert.equal(outcome.sent, true, outcome.problems.join("\n"));
      assert.equal(JSON.parse(outcome.result?.messages[0] ?? "{}").greeting, "Hello, Hello, checks!!");
      assert.equal(outcome.verdict, "failed");
      const failed = outcome.checks?.filter((c) => !c.passed) ?? [];
      assert.equal(failed.length, 1);
      assert.equal(failed[0].message, 'expected message.greeting == "nope", got "Hello, Hello, checks!!"');
      assert.equal(failed[0].range.start.line, 13);
      const html = send_.panel().html;
      assert.match(html, /Assertions: 1 of 2 failed/);
      assert.match(html, /class="check failed" data-line="14"><span class="mark">✗<\/span>/);
      assert.match(
        html,
        /expected message\.greeting == &quot;nope&quot;, got &quot;Hello, Hello, checks!!&quot;/,
      );
    },
  },
];
