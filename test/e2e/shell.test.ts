/// <reference lib="dom" />
// The extension's shell in a real VS Code (code-server, driven by Chromium): the workbench loads with
// the Protocall activity-bar container and its three views, an .rpc file gets its syntax colours from
// the grammar, and the language server starts for it (its CodeLens and document symbols show).
// Screenshots: test-results/shell/.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { openWorkbench, poll, viewPane, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/shell");
let server: CodeServer;
let wb: Workbench;

before(
  async () => {
    const workspace = await copyExamplesWorkspace();
    server = await startCodeServer({ workspace });
    wb = await openWorkbench(server.url, workspace, artifacts);
  },
  { timeout: 120_000 },
);

after(async () => {
  await wb?.close();
  await server?.close();
});

test("the workbench loads with the Protocall container and its three views", {
  timeout: 90_000,
}, async () => {
  const { page } = wb;
  await wb.screenshot("workbench");
  const item = page.locator(".activitybar .action-item a[aria-label^='Protocall']").first();
  await item.waitFor({ state: "visible" });
  await item.click();
  for (const title of ["Services", "Webhooks", "Deliveries"]) {
    await viewPane(page, title).waitFor({ state: "visible" });
  }
  await wb.waitForText("Start a local listener to receive and inspect push events.");
  await wb.screenshot("protocall-views");
});

test("an .rpc file gets its syntax colours and its language server", { timeout: 120_000 }, async () => {
  const { page } = wb;
  await wb.openFile("requests/demo.rpc");
  // The language mode in the status bar is the grammar's language.
  await wb.waitForText("RPC Request", page.locator(".statusbar"));
  // Tokens of different scopes render in different colours (mtkN classes).
  const line = page.locator(".view-line").filter({ hasText: "GreetService/Greet" }).first();
  await line.waitFor({ state: "visible" });
  const colours = await poll("coloured tokens", async () => {
    const classes = await page
      .locator(".view-lines .view-line span[class^='mtk']")
      .evaluateAll((els) => [...new Set(els.map((e) => getComputedStyle(e).color))]);
    return classes.length >= 3 ? classes : undefined;
  });
  assert.ok(colours.length >= 3, `distinct token colours: ${colours.join(", ")}`);
  // The language server answers: the CodeLens above each request comes from it.
  await page
    .locator(".codelens-decoration a")
    .filter({ hasText: "Send" })
    .first()
    .waitFor({ state: "visible", timeout: 60_000 });
  await wb.screenshot("rpc-file");
  // Its log in the Output panel.
  await wb.runCommand("Protocall: Show Output");
  // The server's log: it built the workspace's buf module.
  await wb.waitForText(/built\s.*examples/, page.locator(".panel"), 60_000);
  await wb.screenshot("output");
});

test("the language server answers hovers and completion in the editor", { timeout: 180_000 }, async () => {
  const { page } = wb;
  await wb.openFile("requests/demo.rpc");
  // The type comes with the workspace build (buf), which a busy machine may take a while to finish;
  // a hover shown before it keeps its text, so each attempt closes it and hovers anew.
  let hover = "";
  for (let attempt = 1; !hover; attempt++) {
    try {
      hover = await wb.hover('{"name": "world"}', '"name"', /string/, 30_000);
    } catch (err) {
      if (attempt >= 3) throw err;
      await page.keyboard.press("Escape");
    }
  }
  assert.match(hover, /name/);
  assert.match(hover, /string/);
  await wb.screenshot("hover");
  await page.keyboard.press("Escape");
  // In the body of the Greet request, after its opening brace: field names are suggested.
  await wb.placeCursor('{"name": "world"}', "{");
  const suggestions = await wb.triggerCompletion();
  await wb.screenshot("completion");
  await page.keyboard.press("Escape");
  assert.ok(
    suggestions.some((s) => s.label.includes("name")),
    `suggestions: ${suggestions.map((s) => s.label).join(", ")}`,
  );
});

test("a command's notification is read from the workbench", { timeout: 60_000 }, async () => {
  // Nothing was sent in this window: the response panel has nothing to show and says so.
  await wb.runCommand("Protocall: Show Response Panel");
  const texts = await poll("a notification", async () => {
    const t = await wb.notifications();
    return t.some((x) => x.includes("no response yet")) ? t : undefined;
  });
  assert.ok(
    texts.some((x) => /Send a request first/.test(x)),
    texts.join(" | "),
  );
  await wb.screenshot("notification");
});
