// The `protocall mcp` tools as VS Code's language-model tools, inside the real extension host: the
// editor lists them (vscode.lm.tools) with their argument schemas, and vscode.lm.invokeTool runs them
// against the demo server and the workspace: list_services and describe from the workspace's .proto
// files, call_method (a message back; a failure's code and decoded details), run_file with its
// assertions, check_files; a server no request file names is refused with how to allow it.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import { startDemoServer } from "../../../src/demo/server";
import { type VscodeTest, type VscodeTestEnv, waitFor } from "../harness";

const names = [
  "protocall_list_services",
  "protocall_describe",
  "protocall_call_method",
  "protocall_run_file",
  "protocall_check_files",
];

async function activate(): Promise<void> {
  const ext = vscode.extensions.getExtension("protocall.protocall");
  assert.ok(ext, "the Protocall extension is installed");
  await ext.activate();
}

/** The text a tool returned. */
async function invoke(name: string, input: object): Promise<string> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
  return result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
}

/** The error message of a tool that refused (invokeTool rejects with it). */
async function refusal(name: string, input: object): Promise<string> {
  try {
    const text = await invoke(name, input);
    assert.fail(`${name} answered instead of refusing: ${text.slice(0, 300)}`);
  } catch (err) {
    if (err instanceof assert.AssertionError) throw err;
    return err instanceof Error ? err.message : String(err);
  }
}

function writeRequests(env: VscodeTestEnv): void {
  mkdirSync(join(env.workspace, "agent"), { recursive: true });
  writeFileSync(
    join(env.workspace, "agent", "greet.rpc"),
    `@host = ${env.demoUrl}

### Greet
# @assert message.greeting == "Hello, agent!"
{{host}}/demo.v1.GreetService/Greet

{"name": "agent"}

### Wrong
# @assert message.greeting == "nope"
{{host}}/demo.v1.GreetService/Greet

{"name": "agent"}
`,
  );
  writeFileSync(
    join(env.workspace, "agent", "broken.rpc"),
    `${env.demoUrl}/demo.v1.GreetService/Greet\n\n{"nmae": "x"}\n`,
  );
}

export const tests: VscodeTest[] = [
  {
    name: "the editor lists the tools, with their argument schemas",
    timeoutMs: 60_000,
    async run() {
      await activate();
      const tools = await waitFor(
        "Protocall's language-model tools",
        async () => {
          const found = vscode.lm.tools.filter((t) => t.name.startsWith("protocall_"));
          return found.length === names.length ? found : undefined;
        },
        20_000,
      );
      assert.deepEqual(tools.map((t) => t.name).sort(), [...names].sort());
      const call = tools.find((t) => t.name === "protocall_call_method");
      assert.ok(call);
      assert.deepEqual((call.inputSchema as { required?: string[] }).required, ["url"]);
      assert.match(call.description, /Calls a method of a server/);
    },
  },
  {
    name: "list_services and describe answer from the workspace's .proto files",
    timeoutMs: 90_000,
    async run(env) {
      await activate();
      writeRequests(env);
      const listed = JSON.parse(await invoke("protocall_list_services", {}));
      const greet = listed.services.find((s: { name: string }) => s.name === "demo.v1.GreetService");
      assert.ok(greet, JSON.stringify(listed.services.map((s: { name: string }) => s.name)));
      assert.equal(greet.methods[0].input, "demo.v1.GreetRequest");
      assert.ok(
        listed.workspaceServers.includes(new URL(env.demoUrl).origin),
        listed.workspaceServers.join(", "),
      );
      const described = JSON.parse(await invoke("protocall_describe", { name: "demo.v1.GreetRequest" }));
      assert.deepEqual(
        described.fields.map((f: { name: string }) => f.name),
        ["name"],
      );
      assert.match(await refusal("protocall_describe", { name: "demo.v1.Nope" }), /demo\.v1\.Nope is not in/);
    },
  },
  {
    name: "call_method returns the messages, and a failure's code with decoded details",
    timeoutMs: 60_000,
    async run(env) {
      await activate();
      writeRequests(env);
      const ok = JSON.parse(
        await invoke("protocall_call_method", {
          url: `${env.demoUrl}/demo.v1.GreetService/Greet`,
          request: { name: "agent" },
        }),
      );
      assert.equal(ok.status, "ok");
      assert.deepEqual(ok.messages, [{ greeting: "Hello, agent!" }]);
      const failed = JSON.parse(
        await invoke("protocall_call_method", {
          url: `${env.demoUrl}/demo.v1.DemoService/Fail`,
          request: { code: "CODE_NOT_FOUND", message: "no such order", details: ["DETAIL_ERROR_INFO"] },
        }),
      );
      assert.equal(failed.status, "not_found");
      assert.equal(failed.error.message, "no such order");
      assert.deepEqual(
        failed.error.details.map((d: { type: string }) => d.type),
        ["google.rpc.ErrorInfo"],
      );
    },
  },
  {
    name: "run_file runs a request file with its assertions; check_files returns the diagnostics",
    timeoutMs: 90_000,
    async run(env) {
      await activate();
      writeRequests(env);
      const run = JSON.parse(await invoke("protocall_run_file", { file: "agent/greet.rpc" }));
      assert.deepEqual(
        run.requests.map((r: { name: string; verdict: string }) => [r.name, r.verdict]),
        [
          ["Greet", "passed"],
          ["Wrong", "failed"],
        ],
      );
      assert.match(run.requests[1].failures[0], /expected message\.greeting == "nope"/);
      const checked = JSON.parse(await invoke("protocall_check_files", { files: ["agent/broken.rpc"] }));
      assert.ok(
        checked.files[0].diagnostics.some((d: { message: string }) => /nmae/.test(d.message)),
        JSON.stringify(checked.files[0].diagnostics),
      );
    },
  },
  {
    name: "a server no request file names, and a file outside the workspace, are refused with how to allow them",
    timeoutMs: 60_000,
    async run() {
      await activate();
      const other = await startDemoServer();
      try {
        const message = await refusal("protocall_call_method", {
          url: `${other.url}/demo.v1.GreetService/Greet`,
          request: { name: "x" },
        });
        assert.match(
          message,
          /is not a server of the workspace .*name http:\/\/127\.0\.0\.1:\d+ in a \.rpc file/,
        );
        const outside = await refusal("protocall_run_file", { file: "../outside.rpc" });
        assert.match(outside, /outside the workspace/);
      } finally {
        await other.close();
      }
    },
  },
];
