/// <reference lib="dom" />
// "▶ Send" in a real VS Code (code-server, driven by Chromium) against the demo server: the response
// panel opens beside the editor with the response JSON; a server stream's messages arrive one by one;
// an error shows its code name, the CLI's exit code and its decoded details; a hostile error message
// is shown as text. Screenshots: test-results/send/.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator } from "playwright-core";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { openWorkbench, poll, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/send");
const hostile = "<img src=x onerror=alert(1)>";
let demo: DemoServer;
let server: CodeServer;
let wb: Workbench;
let rpcText = "";
let workspaceDir = "";

before(
  async () => {
    demo = await startDemoServer();
    const workspace = await copyExamplesWorkspace();
    workspaceDir = workspace;
    // The example requests, pointed at this test's demo server, with a slower stream (to watch it
    // arrive) and a request whose error message is markup.
    const file = join(workspace, "requests/demo.rpc");
    let text = await readFile(file, "utf8");
    text = text.replace("@host = http://127.0.0.1:8080", `@host = ${demo.url}`);
    text = text.replace(
      '{"count": 3, "delayMs": 200, "text": "tick"}',
      '{"count": 3, "delayMs": 1500, "text": "tick"}',
    );
    text += `\n### Secret header\n{{host}}/demo.v1.GreetService/Greet\nAuthorization: Bearer s3cret-token\n\n{"name": "secret"}\n`;
    text += `\n### Hostile message\n{{host}}/demo.v1.DemoService/Fail\n\n${JSON.stringify({ code: "CODE_INVALID_ARGUMENT", message: hostile })}\n`;
    await writeFile(file, text);
    rpcText = text;
    await writeFile(
      join(workspace, "protocall.env.json"),
      JSON.stringify({ dev: { who: "dev" }, staging: { who: "staging" } }, null, 2),
    );
    server = await startCodeServer({ workspace });
    wb = await openWorkbench(server.url, workspace, artifacts);
    await wb.openFile("requests/demo.rpc");
  },
  { timeout: 150_000 },
);

after(async () => {
  await wb?.close();
  await server?.close();
  await demo?.close();
});

/** Brings the .rpc editor back to the front (reading the panel focuses its group). */
async function focusRequests(): Promise<void> {
  const tab = wb.page.locator(".tabs-container .tab").filter({ hasText: "demo.rpc" }).first();
  await tab.click();
  await wb.page
    .locator(".editor-group-container.active .codelens-decoration a", { hasText: "Send" })
    .filter({ visible: true })
    .first()
    .waitFor({ state: "visible", timeout: 60_000 });
}

/**
 * Clicks the "▶ Send" CodeLens of the request named `name` (the lens sits above its ### line; the
 * editor only renders the lenses of visible lines, so the cursor is moved there first), then opens
 * the response panel.
 */
async function sendAndOpen(name: string): Promise<FrameLocator> {
  const urlText = `### ${name}`;
  await focusRequests();
  const { page } = wb;
  // Go to the request's line (Ctrl+G), so that it is rendered, then put the cursor on it.
  const lineNumber = rpcText.split("\n").indexOf(urlText) + 1;
  assert.ok(lineNumber > 0, `no line "${urlText}"`);
  await page.keyboard.press("Control+g");
  await wb.inputBox(`:${lineNumber}`);
  await wb.placeCursor(urlText);
  const editor = page.locator(".editor-group-container.active .monaco-editor").first();
  // The editor renders spaces as no-break spaces.
  const pattern = new RegExp(urlText.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ /g, "[ \u00a0]"));
  const line = editor.locator(".view-line").filter({ hasText: pattern }).first();
  await line.waitFor({ state: "visible" });
  const lens = await poll(`the Send lens above "${urlText}"`, async () => {
    const lineBox = await line.boundingBox();
    if (!lineBox) return undefined;
    const lenses = editor.locator(".codelens-decoration a", { hasText: "▶ Send" });
    let best: { index: number; y: number } | undefined;
    for (let i = 0; i < (await lenses.count()); i++) {
      const box = await lenses.nth(i).boundingBox();
      if (box && box.y < lineBox.y && (!best || box.y > best.y)) best = { index: i, y: box.y };
    }
    return best && lineBox.y - best.y < 60 ? lenses.nth(best.index) : undefined;
  });
  await lens.click();
  return wb.webviewFrame(`Response: ${name}`);
}

test('"▶ Send" shows the response JSON, status and headers in the panel', { timeout: 120_000 }, async () => {
  await focusRequests();
  await wb.screenshot("requests");
  const frame = await sendAndOpen("Greet someone");
  await wb.waitForText('"Hello, world!"', frame.locator("#messages"));
  await wb.waitForText(/^ok · exit 0 · /, frame.locator("#status"));
  await wb.waitForText("content-type", frame.locator(".headers"));
  await wb.waitForText("demo.v1.GreetService/Greet", frame.locator(".request"));
  await wb.screenshot("unary-response");
});

test("Ctrl+Alt+R sends the request at the cursor; the history flips back; Open as JSON document; Save", {
  timeout: 120_000,
}, async () => {
  const { page } = wb;
  await focusRequests();
  await wb.placeCursor('{"name": "world"}', "world");
  await page.keyboard.press("Control+Alt+r");
  const frame = await wb.webviewFrame("Response: Greet someone");
  await wb.waitForText("2 / 2", frame.locator(".position"));
  await wb.waitForText('"Hello, world!"', frame.locator("#messages"));
  await frame.locator("button[data-action=older]").click();
  await wb.waitForText("1 / 2", frame.locator(".position"));
  await wb.screenshot("history-older");
  await frame.locator("button[data-action=open]").click();
  // An untitled JSON document with the response.
  await page.locator(".tabs-container .tab", { hasText: "Untitled" }).first().waitFor({ state: "visible" });
  await wb.screenshot("open-as-json");
  const text = await wb.editorText();
  assert.match(text, /"greeting":\s*"Hello, world!"/);
  await wb.runCommand("View: Revert and Close Editor");
  await page.locator(".tabs-container .tab", { hasText: "Untitled" }).first().waitFor({ state: "detached" });

  // Save: the save dialog proposes <request name>.json in the workspace folder.
  const saveFrame = await wb.webviewFrame("Response: Greet someone");
  await saveFrame.locator("button[data-action=save]").click();
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible" });
  // The dialog fills its path in after it opens.
  const proposed = await poll("the proposed file name", async () => {
    const v = await input.inputValue();
    return v.endsWith(".json") ? v : undefined;
  }).catch(async (err) => {
    await page.keyboard.press("Escape");
    throw err;
  });
  assert.match(proposed, /\/examples\/Greet-someone\.json$/);
  await input.press("Enter");
  const saved = join(workspaceDir, "Greet-someone.json");
  const content = await poll("the saved response", async () =>
    existsSync(saved) ? await readFile(saved, "utf8") : undefined,
  );
  assert.deepEqual(JSON.parse(content), { greeting: "Hello, world!" });
});

test("outside any request, Send asks which request to send", { timeout: 120_000 }, async () => {
  const { page } = wb;
  await focusRequests();
  await page.keyboard.press("Control+Home");
  await wb.runCommand("Protocall: Send Request");
  await wb.quickPick("Greet someone");
  const frame = await wb.webviewFrame("Response: Greet someone");
  await wb.waitForText("3 / 3", frame.locator(".position"));
  await wb.waitForText('"Hello, world!"', frame.locator("#messages"));
});

test("a server stream's messages arrive one by one", { timeout: 120_000 }, async () => {
  const frame = await sendAndOpen("A server stream over gRPC");
  const messages = frame.locator("#messages .message");
  // The first message is shown while the stream still runs.
  await poll("the first message while the stream runs", async () => {
    const n = await messages.count();
    const status = (await frame.locator("#status").textContent()) ?? "";
    return n >= 1 && n < 3 && status.includes("Sending") ? true : undefined;
  });
  await wb.screenshot("stream-first-message");
  await wb.waitForText(/^ok · exit 0 · /, frame.locator("#status"), 30_000);
  assert.equal(await messages.count(), 3);
  // biome-ignore lint/performance/useDomNodeTextContent: the panel as it reads
  const text = await frame.locator("#messages").innerText();
  assert.match(text, /Message 1[\s\S]*"number": 1[\s\S]*Message 3[\s\S]*"number": 3/);
  await wb.waitForText("grpc-status", frame.locator(".trailers"));
  await wb.screenshot("stream-complete");
});

test("Cancel in the panel ends a running stream as canceled (exit 8)", { timeout: 120_000 }, async () => {
  const frame = await sendAndOpen("A server stream over gRPC");
  await wb.waitForText("Message 1", frame.locator("#messages"));
  await frame.locator("button[data-action=cancel]").click();
  await wb.waitForText(/^canceled · exit 8 · /, frame.locator("#status"));
  assert.ok((await frame.locator("#messages .message").count()) < 3);
  await wb.screenshot("stream-canceled");
});

test("an error shows its code, the CLI's exit code and its decoded details", {
  timeout: 120_000,
}, async () => {
  const frame = await sendAndOpen("An error with details (exit code 40)");
  await wb.waitForText(/^not_found · exit 40 · /, frame.locator("#status"));
  const error = frame.locator(".error");
  await wb.waitForText("Error: not_found", error);
  await wb.waitForText("no such order", error);
  await wb.waitForText("google.rpc.ErrorInfo", error);
  await wb.waitForText('"DEMO_FAILURE"', error);
  await wb.waitForText("demo.v1.QuotaExceeded", error);
  await wb.waitForText('"retryAfter": "30s"', error);
  await wb.screenshot("error-details");
});

test("a hostile error message is shown as text, never as markup", { timeout: 120_000 }, async () => {
  const frame = await sendAndOpen("Hostile message");
  await wb.waitForText(/^invalid_argument · exit 24 · /, frame.locator("#status"));
  await wb.waitForText(hostile, frame.locator(".error-message"));
  assert.equal(await frame.locator("img").count(), 0);
  await wb.screenshot("hostile-message");
});

test("the output channel has the call's transcript with the credentials redacted", {
  timeout: 120_000,
}, async () => {
  const frame = await sendAndOpen("Secret header");
  await wb.waitForText('"Hello, secret!"', frame.locator("#messages"));
  await wb.runCommand("Protocall: Show Output");
  const panel = wb.page.locator(".panel");
  await wb.waitForText("Secret header: ok", panel);
  // The whole transcript of the call in view.
  await wb.runCommand("View: Toggle Maximized Panel");
  await wb.waitForText("Authorization: Bearer [redacted]", panel);
  await wb.waitForText("Invoking RPC demo.v1.GreetService.Greet", panel);
  await wb.screenshot("output-transcript");
  // biome-ignore lint/performance/useDomNodeTextContent: the output as it reads
  const text = await panel.first().innerText();
  assert.ok(!text.includes("s3cret-token"), "the token is not in the output");
  await wb.runCommand("View: Toggle Maximized Panel");
});

test("the status bar shows the environment; clicking it picks another", { timeout: 120_000 }, async () => {
  const { page } = wb;
  const tab = page.locator(".tabs-container .tab").filter({ hasText: "demo.rpc" }).first();
  await tab.click();
  const item = page.locator(".statusbar-item", { hasText: "No Environment" }).first();
  await item.waitFor({ state: "visible" });
  await item.click();
  await wb.quickPick("staging");
  await page.locator(".statusbar-item", { hasText: "staging" }).first().waitFor({ state: "visible" });
  await wb.screenshot("environment-selected");
});
