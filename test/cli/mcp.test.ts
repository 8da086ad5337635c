// `protocall mcp` driven by the Model Context Protocol SDK's own client over stdio, against the real
// demo server and a copy of the example workspace: the tools are listed; list_services and describe
// answer from the workspace's .proto files (with comments) and from a server's reflection;
// call_method returns messages and, for a failing call, the code and decoded details; run_file runs a
// request file with its assertions; check_files returns the editor's diagnostics; a server the
// workspace does not name, a file outside it and an include outside it are refused (and allowed by
// the flags); a token sent in a header comes back redacted.
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cliPath } from "../support/cli";
import { type DemoServer, examplesDir, startDemoServer } from "../support/servers";

const dir = mkdtempSync(join(tmpdir(), "protocall-mcp-"));
const workspace = join(dir, "ws");
let server: DemoServer;
let other: DemoServer;
const clients: Client[] = [];

before(async () => {
  [server, other] = await Promise.all([startDemoServer(), startDemoServer()]);
  cpSync(examplesDir, workspace, { recursive: true });
  mkdirSync(join(workspace, "client"), { recursive: true });
  writeFileSync(
    join(workspace, "client", "greet.rpc"),
    `@host = ${server.url}

### Greet
# @assert message.greeting == "Hello, client!"
{{host}}/demo.v1.GreetService/Greet

{"name": "client"}

### Wrong
# @assert message.greeting == "nope"
{{host}}/demo.v1.GreetService/Greet

{"name": "client"}
`,
  );
  writeFileSync(
    join(workspace, "client", "broken.rpc"),
    `${server.url}/demo.v1.GreetService/Greet\n\n{"nmae": "x"}\n`,
  );
  writeFileSync(join(dir, "outside.rpc"), `${server.url}/demo.v1.GreetService/Greet\n\n{}\n`);
  writeFileSync(join(dir, "secret.json"), `{"name": "outside"}\n`);
  writeFileSync(
    join(workspace, "client", "include.rpc"),
    `${server.url}/demo.v1.GreetService/Greet\n\n< ../../secret.json\n`,
  );
});

after(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all([server?.close(), other?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

async function connect(flags: string[] = []): Promise<Client> {
  const client = new Client({ name: "protocall-test", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, "mcp", "--workspace", workspace, ...flags],
    stderr: "pipe",
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  // biome-ignore lint/suspicious/noExplicitAny: a tool's result is JSON the assertions read
): Promise<{ error?: string; value?: any }> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  const text = r.content.map((c) => c.text).join("");
  return r.isError ? { error: text } : { value: JSON.parse(text) };
}

describe("protocall mcp", { timeout: 240_000 }, () => {
  test("lists its tools; lists and describes services from the workspace and from a server, with comments", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["list_services", "describe", "call_method", "run_file", "check_files"],
    );
    const local = await call(client, "list_services", {});
    assert.equal(local.error, undefined, local.error);
    const greet = local.value.services.find((s: { name: string }) => s.name === "demo.v1.GreetService");
    assert.ok(greet, JSON.stringify(local.value.services.map((s: { name: string }) => s.name)));
    assert.equal(greet.methods[0].name, "Greet");
    assert.equal(greet.methods[0].input, "demo.v1.GreetRequest");
    assert.ok(local.value.workspaceServers.includes(server.url), local.value.workspaceServers.join(", "));

    const remote = await call(client, "list_services", { server: server.url });
    assert.equal(remote.error, undefined, remote.error);
    assert.ok(remote.value.services.some((s: { name: string }) => s.name === "demo.v1.DemoService"));
    assert.match(remote.value.source, /reflection/);

    const method = await call(client, "describe", { name: "demo.v1.GreetService.Greet" });
    assert.equal(method.error, undefined, method.error);
    assert.equal(method.value.input, "demo.v1.GreetRequest");
    assert.ok(method.value.comments.length > 0, JSON.stringify(method.value));
    const message = await call(client, "describe", { name: "demo.v1.GreetRequest" });
    assert.deepEqual(
      message.value.fields.map((f: { name: string }) => f.name),
      ["name"],
    );
    const missing = await call(client, "describe", { name: "demo.v1.Nope" });
    assert.match(missing.error ?? "", /demo\.v1\.Nope is not in .*; list_services shows what it has/);
  });

  test("call_method: messages back, and a failure's code with decoded details; a token is redacted", async () => {
    const client = await connect();
    const ok = await call(client, "call_method", {
      url: `${server.url}/demo.v1.GreetService/Greet`,
      request: { name: "client" },
      headers: ["Authorization: Bearer very-secret-token"],
    });
    assert.equal(ok.error, undefined, ok.error);
    assert.equal(ok.value.status, "ok");
    assert.deepEqual(ok.value.messages, [{ greeting: "Hello, client!" }]);

    const echoed = await call(client, "call_method", {
      url: `${server.url}/demo.v1.DemoService/Inspect`,
      request: {},
      headers: ["Authorization: Bearer very-secret-token"],
    });
    assert.equal(echoed.error, undefined, echoed.error);
    assert.doesNotMatch(JSON.stringify(echoed.value), /very-secret-token/);

    const failed = await call(client, "call_method", {
      url: `${server.url}/demo.v1.DemoService/Fail`,
      protocol: "grpc",
      request: {
        code: "CODE_RESOURCE_EXHAUSTED",
        message: "slow down",
        details: ["DETAIL_RETRY_INFO", "DETAIL_QUOTA_EXCEEDED"],
      },
    });
    assert.equal(failed.error, undefined, failed.error);
    assert.equal(failed.value.status, "resource_exhausted");
    assert.equal(failed.value.error.message, "slow down");
    const types = failed.value.error.details.map((d: { type: string }) => d.type);
    assert.deepEqual(types, ["google.rpc.RetryInfo", "demo.v1.QuotaExceeded"]);
    assert.equal(String(failed.value.error.details[1].value.limit), "100");
  });

  test("run_file runs a request file with its assertions; check_files returns the diagnostics", async () => {
    const client = await connect();
    const run = await call(client, "run_file", { file: "client/greet.rpc" });
    assert.equal(run.error, undefined, run.error);
    assert.deepEqual(
      run.value.requests.map((r: { name: string; verdict: string }) => [r.name, r.verdict]),
      [
        ["Greet", "passed"],
        ["Wrong", "failed"],
      ],
    );
    assert.deepEqual(run.value.requests[0].messages, [{ greeting: "Hello, client!" }]);
    assert.match(
      run.value.requests[1].failures[0],
      /expected message\.greeting == "nope", got "Hello, client!"/,
    );
    const one = await call(client, "run_file", { file: "client/greet.rpc", name: "Greet" });
    assert.equal(one.value.requests.length, 1);
    assert.equal(one.value.exitCode, 0);

    const checked = await call(client, "check_files", { files: ["client/broken.rpc"] });
    assert.equal(checked.error, undefined, checked.error);
    const [file] = checked.value.files;
    assert.equal(file.file, join("client", "broken.rpc"));
    assert.ok(
      file.diagnostics.some((d: { message: string }) => /nmae/.test(d.message) && /name/.test(d.message)),
      JSON.stringify(file.diagnostics),
    );
  });

  test("a server the workspace does not name and files outside it are refused, and the flags allow them", async () => {
    const client = await connect();
    const url = `${other.url}/demo.v1.GreetService/Greet`;
    const refused = await call(client, "call_method", { url, request: { name: "x" } });
    assert.match(
      refused.error ?? "",
      /is not a server of the workspace .*--allow-server http:\/\/.*--allow-any-server/,
    );
    const reflect = await call(client, "list_services", { server: other.url });
    assert.match(reflect.error ?? "", /is not a server of the workspace/);
    const outside = await call(client, "run_file", { file: "../outside.rpc" });
    assert.match(outside.error ?? "", /\.\.\/outside\.rpc is outside the workspace .*--allow-outside-files/);
    const escaped = await call(client, "check_files", { files: ["../outside.rpc"] });
    assert.match(escaped.error ?? "", /outside the workspace/);
    const include = await call(client, "run_file", { file: "client/include.rpc" });
    assert.match(
      include.error ?? "",
      /reads .*secret\.json \(<\), outside the workspace; .*--allow-outside-files/,
    );

    const allowed = await connect(["--allow-server", other.url, "--allow-outside-files"]);
    const ok = await call(allowed, "call_method", { url, request: { name: "x" } });
    assert.equal(ok.value?.status, "ok", ok.error);
    const ran = await call(allowed, "run_file", { file: "../outside.rpc" });
    assert.equal(ran.value?.requests[0].verdict, "passed", ran.error);
    const included = await call(allowed, "run_file", { file: "client/include.rpc" });
    assert.deepEqual(included.value?.requests[0].messages, [{ greeting: "Hello, outside!" }], included.error);
  });
});
