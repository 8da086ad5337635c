// runTool, the one way every front end (protocall mcp, the editor's language-model tools) runs a tool:
// an unknown tool or arguments that are not an object are errors naming what is wrong; a refusal
// ends with the front end's own way to allow it; a secret in an error is redacted.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { createCallSession } from "../../../src/core/invoke/call-session";
import { runTool } from "../../../src/core/mcp/run-tool";
import type { ToolContext } from "../../../src/core/mcp/tools";
import { WorkspaceScope } from "../../../src/core/mcp/workspace-scope";

const root = mkdtempSync(join(tmpdir(), "protocall-run-tool-"));
writeFileSync(join(root, "a.rpc"), "http://127.0.0.1:9/demo.v1.GreetService/Greet\n\n{}\n");
const session = createCallSession({ product: "protocall/test" });
after(() => session.close());

function ctx(scope = new WorkspaceScope({ root })): ToolContext {
  return { scope, session, env: {}, homedir: root, product: "protocall/test" };
}

test("an unknown tool lists the tools", async () => {
  const r = await runTool("nope", {}, ctx());
  assert.equal(r.isError, true);
  assert.match(
    r.text,
    /^unknown tool nope; the tools are list_services, describe, call_method, run_file, check_files$/,
  );
});

test("arguments that are not an object are refused", async () => {
  const r = await runTool("describe", ["demo.v1.GreetRequest"], ctx());
  assert.deepEqual(r, { isError: true, text: "the arguments of describe must be a JSON object" });
});

test("a refusal ends with the front end's way to allow it", async () => {
  const url = "http://127.0.0.1:10/demo.v1.GreetService/Greet";
  const cli = await runTool("call_method", { url }, ctx());
  assert.match(cli.text, /start protocall mcp with --allow-server http:\/\/127\.0\.0\.1:10/);
  const editor = new WorkspaceScope({
    root,
    allowHints: { server: (o) => `name ${o} in a request file`, outsideFiles: "inside only" },
  });
  const r = await runTool("call_method", { url }, ctx(editor));
  assert.equal(r.isError, true);
  assert.match(
    r.text,
    /is not a server of the workspace .*; name http:\/\/127\.0\.0\.1:10 in a request file$/,
  );
  const outside = await runTool("run_file", { file: "../elsewhere.rpc" }, ctx(editor));
  assert.match(outside.text, /outside the workspace .*; inside only$/);
});

test("a secret in an error is redacted", async () => {
  const r = await runTool("call_method", { url: "http://user:hunter22@127.0.0.1:10/x.Y/Z" }, ctx());
  assert.equal(r.isError, true);
  assert.doesNotMatch(r.text, /hunter22/);
});
