// One truth for "what does a tool answer?": the MCP server (what `protocall mcp` serves, driven here by
// the SDK's own Client over an in-memory transport) and runTool (what the editor's language-model
// tools call) give the same text and the same error flag for the same calls on the same workspace:
// services of the workspace's .proto files, a description, a refusal, bad arguments, an unknown tool.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createCallSession } from "../../../src/core/invoke/call-session";
import { runTool } from "../../../src/core/mcp/run-tool";
import { createMcpServer } from "../../../src/core/mcp/server";
import type { ToolContext } from "../../../src/core/mcp/tools";
import { WorkspaceScope } from "../../../src/core/mcp/workspace-scope";
import { examplesDir } from "../../support/servers";

const dir = mkdtempSync(join(tmpdir(), "protocall-run-tool-eq-"));
const workspace = join(dir, "ws");
const session = createCallSession({ product: "protocall/test" });
let client: Client;
let ctx: ToolContext;

before(async () => {
  cpSync(examplesDir, workspace, { recursive: true });
  writeFileSync(join(workspace, "extra.rpc"), "http://127.0.0.1:9/demo.v1.GreetService/Greet\n\n{}\n");
  ctx = {
    scope: new WorkspaceScope({ root: workspace }),
    session,
    env: {},
    homedir: dir,
    product: "protocall/test",
  };
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(ctx, "0.0.0-test").connect(serverSide);
  client = new Client({ name: "equivalence", version: "1.0.0" });
  await client.connect(clientSide);
});

after(async () => {
  await client?.close();
  await session.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Each call, and whether it is an error. */
const calls: [string, unknown, boolean][] = [
  ["list_services", {}, false],
  ["describe", { name: "demo.v1.GreetRequest" }, false],
  ["describe", { name: "demo.v1.Nope" }, true],
  ["call_method", { url: "http://127.0.0.1:10/demo.v1.GreetService/Greet" }, true],
  ["run_file", { file: "../outside.rpc" }, true],
  ["call_method", { url: 42 }, true],
  ["no_such_tool", {}, true],
];

for (const [name, args, isError] of calls) {
  test(`${name} ${JSON.stringify(args)}: the MCP server and runTool answer alike`, {
    timeout: 120_000,
  }, async () => {
    const served = (await client.callTool({ name, arguments: args as Record<string, unknown> })) as {
      isError?: boolean;
      content: { type: string; text: string }[];
    };
    const direct = await runTool(name, args, ctx);
    assert.equal(served.content.length, 1);
    assert.equal(served.content[0].text, direct.text);
    assert.equal(direct.isError, isError, direct.text);
    assert.equal(served.isError === true, direct.isError);
  });
}
