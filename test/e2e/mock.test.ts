// The mock server in a real VS Code (code-server, driven by Chromium): "Start Mock Server" from the
// context menu of the workspace build in the Services view, its address on the status bar and as a
// server of the Services view, "▶ Call this stub" above a stub answered in the response panel, the
// call listed in the Mock Calls view and opened as JSON, and the mock stopped from the status bar.
// Screenshots of each step: test-results/mock/.
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { after, before, test } from "node:test";
import type { Locator } from "playwright-core";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { openWorkbench, poll, viewPane, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/mock");
let server: CodeServer;
let wb: Workbench;
let workspace: string;

before(
  async () => {
    workspace = await copyExamplesWorkspace();
    server = await startCodeServer({ workspace });
    wb = await openWorkbench(server.url, workspace, artifacts);
  },
  { timeout: 120_000 },
);

after(async () => {
  await wb?.close();
  await server?.close();
});

/** The rows of a view whose label is exactly `label`. */
function rows(view: string, label: string): Locator {
  const { page } = wb;
  return viewPane(page, view)
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".label-name", { hasText: new RegExp(`^${label}$`) }) });
}

async function collapseView(title: string): Promise<void> {
  const header = viewPane(wb.page, title).locator(".pane-header").first();
  if ((await header.count()) > 0 && (await header.getAttribute("aria-expanded")) === "true")
    await header.click();
}

test("Start Mock Server from the Services view, Call this stub, the call in Mock Calls, stop", {
  timeout: 240_000,
}, async () => {
  const { page } = wb;
  await page.locator(".activitybar .action-item a[aria-label^='Protocall']").first().click();
  await wb.openView("Services");
  await collapseView("Webhooks");
  await collapseView("Deliveries");

  // 1. The workspace build's context menu: Start Mock Server.
  const build = rows("Services", basename(workspace)).first();
  await build.waitFor({ state: "visible", timeout: 90_000 });
  const menu = page.locator(".monaco-menu");
  const status = page.locator(".statusbar-item", { hasText: /mock 127\.0\.0\.1:\d+/ }).first();
  // A click that lands while the menu redraws closes it without running the action: try again.
  await poll(
    "the mock's status bar item",
    async () => {
      if (await status.isVisible()) return true;
      if (!(await menu.isVisible())) await build.click({ button: "right" });
      const start = menu.locator(".action-label", { hasText: "Start Mock Server" });
      await start.waitFor({ state: "visible", timeout: 10_000 });
      await wb.screenshot("services-context-menu");
      await start.click();
      await status.waitFor({ state: "visible", timeout: 60_000 });
      return true;
    },
    120_000,
  );
  const text = (await status.textContent()) ?? "";
  const address = /127\.0\.0\.1:\d+/.exec(text)?.[0];
  assert.ok(address, text);
  await wb.waitForText(/· 0$/, status);
  await wb.screenshot("mock-started");

  // 2. The mock is a server of the Services view while it runs.
  await rows("Services", "mock server").first().waitFor({ state: "visible", timeout: 60_000 });
  await wb.screenshot("mock-in-services-view");

  // 3. "▶ Call this stub" above the first stub of examples/mocks/greet.rpc.
  await wb.openFile("mocks/greet.rpc");
  await wb.clickCodeLens("Call this stub");
  // A stub is called, not streamed: no request lens of request files shows above it.
  assert.equal(await page.locator(".codelens-decoration a", { hasText: "Live Stream" }).count(), 0);
  const frame = await wb.webviewFrame("Response: greet world");
  await wb.waitForText('"Hello, world!"', frame.locator("#messages"), 60_000);
  await wb.waitForText(/^ok · exit 0 · /, frame.locator("#status"));
  await wb.waitForText(address, frame.locator(".request"));
  await wb.screenshot("stub-called");
  await wb.waitForText(/· 1$/, status);

  // 4. The call in the Mock Calls view, opened as JSON.
  await collapseView("Services");
  await wb.openView("Mock Calls");
  const call = rows("Mock Calls", "GreetService/Greet").first();
  await call.waitFor({ state: "visible", timeout: 30_000 });
  assert.match((await call.textContent()) ?? "", /greet\.rpc:\d+ "greet world" · ok · \d+ ms/);
  await wb.screenshot("mock-calls-view");
  await call.click();
  const json = await poll("the call's document", async () => {
    const t = await wb.editorText();
    return t.includes('"method": "demo.v1.GreetService/Greet"') ? t : undefined;
  });
  assert.match(json, /"greeting": "Hello, world!"/);
  await wb.screenshot("call-opened");

  // 5. A click on the status bar item stops the mock.
  await status.click();
  await poll("the mock stopped", async () => ((await status.isVisible()) ? undefined : true), 30_000);
  await rows("Services", "mock server")
    .first()
    .waitFor({ state: "detached", timeout: 60_000 })
    .catch(() => {});
  await wb.screenshot("mock-stopped");
});
