/// <reference lib="dom" />
// "▶ Send" in a restricted (untrusted) workspace, in a real VS Code: a click asks once per request,
// in a modal dialog that names the URL; "Send" sends it (and later clicks on it do not ask again),
// "Cancel" sends nothing. Screenshots: test-results/send-restricted/.
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { openWorkbench, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/send-restricted");
let demo: DemoServer;
let server: CodeServer;
let wb: Workbench;

before(
  async () => {
    demo = await startDemoServer();
    const workspace = await copyExamplesWorkspace();
    const file = join(workspace, "requests/demo.rpc");
    const text = (await readFile(file, "utf8")).replace(
      "@host = http://127.0.0.1:8080",
      `@host = ${demo.url}`,
    );
    await writeFile(file, text);
    server = await startCodeServer({ workspace, trust: false });
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

const dialog = () => wb.page.locator(".monaco-dialog-box");

async function clickSend(index: number): Promise<void> {
  const tab = wb.page.locator(".tabs-container .tab").filter({ hasText: "demo.rpc" }).first();
  await tab.click();
  await wb.clickCodeLens("▶ Send", index);
}

test("a click asks once, naming the URL; Send sends it, later clicks do not ask again", {
  timeout: 120_000,
}, async () => {
  await clickSend(0);
  await dialog().waitFor({ state: "visible" });
  await wb.waitForText(`Send "Greet someone" to ${demo.url}/demo.v1.GreetService/Greet?`, dialog());
  await wb.waitForText("Restricted Mode", dialog());
  await wb.screenshot("confirm");
  await dialog()
    .locator(".monaco-button", { hasText: /^Send$/ })
    .click();
  let frame = await wb.webviewFrame("Response: Greet someone");
  await wb.waitForText('"Hello, world!"', frame.locator("#messages"));
  await wb.screenshot("sent-after-confirm");

  await clickSend(0);
  frame = await wb.webviewFrame("Response: Greet someone");
  await wb.waitForText("2 / 2", frame.locator(".position"));
  assert.equal(await dialog().isVisible(), false, "no second confirmation for the same request");
});

test("Cancel in the dialog sends nothing", { timeout: 120_000 }, async () => {
  await clickSend(1);
  await dialog().waitFor({ state: "visible" });
  await wb.waitForText(`${demo.url}/demo.v1.DemoService/Count`, dialog());
  await dialog()
    .locator(".monaco-button", { hasText: /^Cancel$/ })
    .click();
  await dialog().waitFor({ state: "hidden" });
  // The panel still shows the last response; no response of the canceled request ever appears.
  await new Promise((r) => setTimeout(r, 1000));
  const tabs = await wb.page.locator(".tabs-container .tab").allTextContents();
  assert.ok(!tabs.some((t) => t.includes("A server stream")), `tabs: ${tabs.join(" | ")}`);
  await wb.screenshot("canceled");
});
