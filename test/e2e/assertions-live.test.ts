/// <reference lib="dom" />
// Assertions and live streams in a real VS Code (code-server, driven by Chromium) against the demo
// server: each request has a run icon in the gutter (the Test Explorer); "▶ Send" shows each assertion passed or failed with the value found; "⇄ Start Live Stream"
// on a bidi request, then "▶ Send Next": the response to message 1 is in the panel's timeline before
// message 2 is sent; a message typed in the panel is sent; Close Send ends the stream.
// Screenshots: test-results/assertions-live/.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { openWorkbench, poll, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/assertions-live");
let demo: DemoServer;
let server: CodeServer;
let wb: Workbench;

before(
  async () => {
    demo = await startDemoServer();
    const workspace = await copyExamplesWorkspace();
    await writeFile(
      join(workspace, "requests/tested.rpc"),
      `@host = ${demo.url}

### Greet
# @assert message.greeting == "Hello, e2e!"
# @assert message.greeting == "Goodbye"
{{host}}/demo.v1.GreetService/Greet

{"name": "e2e"}

### Chat
# @protocol grpc
{{host}}/demo.v1.DemoService/Chat

{"text": "first"}
{"text": "second"}
`,
    );
    server = await startCodeServer({ workspace });
    wb = await openWorkbench(server.url, workspace, artifacts);
    await wb.openFile("requests/tested.rpc");
  },
  { timeout: 150_000 },
);

after(async () => {
  await wb?.close();
  await server?.close();
  await demo?.close();
});

async function focusRequests(): Promise<void> {
  await wb.page.locator(".tabs-container .tab").filter({ hasText: "tested.rpc" }).first().click();
}

test("each request has a Test Explorer run icon in the gutter", { timeout: 120_000 }, async () => {
  const icons = wb.page.locator(".editor-group-container.active .monaco-editor .codicon-testing-run-icon");
  await poll("a run icon per request", async () => ((await icons.count()) === 2 ? true : undefined));
  await wb.screenshot("gutter");
});

test("the response panel shows each assertion passed or failed with the value found", {
  timeout: 120_000,
}, async () => {
  await wb.clickCodeLens("▶ Send", 0);
  const frame = await wb.webviewFrame("Response: Greet");
  await wb.waitForText("Assertions: 1 of 2 failed", frame.locator(".checks h3"));
  const passed = frame.locator(".check.passed");
  const failed = frame.locator(".check.failed");
  await wb.waitForText('message.greeting == "Hello, e2e!"', passed.nth(1));
  await wb.waitForText('expected message.greeting == "Goodbye", got "Hello, e2e!"', failed.first());
  assert.equal(await failed.count(), 1);
  await wb.screenshot("assertions");
});

test("a live bidi stream: the response to message 1 shows before message 2 is sent", {
  timeout: 150_000,
}, async () => {
  await focusRequests();
  await wb.clickCodeLens("⇄ Start Live Stream");
  const frame = await wb.webviewFrame("Response: Chat");
  await wb.waitForText("Live stream", frame.locator(".live h3"));
  await focusRequests();
  await wb.clickCodeLens("▶ Send Next", 0);
  const panel = await wb.webviewFrame("Response: Chat");
  const timeline = panel.locator("#timeline");
  await wb.waitForText(/← received #1/, timeline);
  // biome-ignore lint/performance/useDomNodeTextContent: the panel as it reads
  const before = await timeline.innerText();
  assert.match(before, /→ sent #1[\s\S]*← received #1/);
  assert.doesNotMatch(before, /sent #2/);
  await wb.screenshot("live-first-response");
  await panel.locator("#live-input").fill('{"text": "typed in the panel"}');
  await panel.locator("button[data-action=liveSend]").click();
  await wb.waitForText(/← received #2/, timeline);
  await wb.waitForText(/typed in the panel/, timeline);
  await panel.locator("button[data-action=liveClose]").click();
  await wb.waitForText("Stream ended", panel.locator(".live"), 30_000);
  await wb.waitForText(/^ok · exit 0 · /, panel.locator("#status"));
  await wb.screenshot("live-ended");
});
