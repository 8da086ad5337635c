// The Services view in a real VS Code (code-server, driven by Chromium): it lists the demo services
// from both the workspace build of examples/ and reflection of the demo server (configured in
// protocall.servers), and a click on a method adds a request to the open .rpc file: with `{{host}}`
// for the workspace build, with the server's URL for the server. Screenshots: test-results/services/.
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { after, before, test } from "node:test";
import type { Locator } from "playwright-core";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { openWorkbench, poll, viewPane, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/services");
let demo: DemoServer;
let server: CodeServer;
let wb: Workbench;
let workspace: string;

before(
  async () => {
    demo = await startDemoServer();
    workspace = await copyExamplesWorkspace();
    server = await startCodeServer({
      workspace,
      settings: { "protocall.servers": [{ url: demo.url, name: "Demo server" }] },
    });
    wb = await openWorkbench(server.url, workspace, artifacts);
  },
  { timeout: 120_000 },
);

after(async () => {
  await wb?.close();
  await server?.close();
  await demo?.close();
});

/** The rows of the Services view whose label is exactly `label`. */
function rows(label: string): Locator {
  const { page } = wb;
  return viewPane(page, "Services")
    .locator(".monaco-list-row")
    .filter({ has: page.locator(".label-name", { hasText: new RegExp(`^${label}$`) }) });
}

async function collapseView(title: string): Promise<void> {
  const header = viewPane(wb.page, title).locator(".pane-header").first();
  if ((await header.count()) > 0 && (await header.getAttribute("aria-expanded")) === "true")
    await header.click();
}

test("the Services view lists the demo services from the workspace build and from reflection", {
  timeout: 180_000,
}, async () => {
  const { page } = wb;
  const item = page.locator(".activitybar .action-item a[aria-label^='Protocall']").first();
  await item.waitFor({ state: "visible" });
  await item.click();
  await wb.openView("Services");
  // Room for the tree: the other views of the container folded.
  for (const other of ["Webhooks", "Deliveries", "Traffic", "Mock Calls"]) await collapseView(other);
  await wb.screenshot("view-opened");

  // Sources: the workspace build (the folder's name) and the configured server.
  const build = rows(basename(workspace)).first();
  await build.waitFor({ state: "visible", timeout: 90_000 });
  await rows("Demo server").first().waitFor({ state: "visible", timeout: 60_000 });
  assert.match((await build.textContent()) ?? "", /workspace build/);
  assert.match((await rows("Demo server").first().textContent()) ?? "", /reflection/);

  // Each source shows package demo.v1 with its two services.
  await poll(
    "the services of both sources",
    async () =>
      (await rows("GreetService").count()) === 2 && (await rows("DemoService").count()) === 2
        ? true
        : undefined,
    90_000,
  );
  assert.equal(await rows("demo.v1").count(), 2);
  await wb.screenshot("services-listed");
});

test("clicking a method adds a request to the open .rpc file", { timeout: 180_000 }, async () => {
  await wb.openFile("requests/demo.rpc");
  await wb.openView("Services");

  // The workspace build's GreetService.Greet: a request with {{host}} (demo.rpc defines @host).
  await rows("GreetService").first().click();
  const greet = rows("Greet").first();
  await greet.waitFor({ state: "visible" });
  await wb.screenshot("greet-service-expanded");
  await greet.click();
  const afterGreet = await poll("the new Greet request in the editor", async () => {
    const text = await wb.editorText();
    return /^### Greet$/m.test(text) ? text : undefined;
  });
  assert.match(afterGreet, /^# Greet answers with a greeting for the given name\.$/m);
  assert.match(afterGreet, /^\{\{host\}\}\/demo\.v1\.GreetService\/Greet$/m);
  assert.match(afterGreet, /^ {2}"name": ""$/m);
  await wb.screenshot("request-added-from-workspace-build");

  // The server's DemoService.Count: a request with the server's URL.
  await rows("DemoService").nth(1).click();
  const count = rows("Count").first();
  await count.waitFor({ state: "visible" });
  await count.click();
  const afterCount = await poll("the new Count request in the editor", async () => {
    const text = await wb.editorText();
    return text.includes(`${demo.url}/demo.v1.DemoService/Count`) ? text : undefined;
  });
  assert.match(afterCount, /^### Count$/m);
  assert.match(afterCount, /^# Server streaming: each response message is printed as it arrives\.$/m);
  await wb.screenshot("request-added-from-server");
});

test("Add Server checks the URL, saves it, and a server that cannot be reached shows an error node", {
  timeout: 180_000,
}, async () => {
  const { page } = wb;
  const pane = await wb.openView("Services");
  await pane.hover();
  await pane.locator(".pane-header .action-item a[aria-label^='Add Server']").first().click();
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible" });
  await input.fill("127.0.0.1:9");
  await wb.waitForText("Add the scheme: http://127.0.0.1:9", page.locator(".quick-input-widget"));
  await wb.screenshot("add-server-url-checked");
  await wb.inputBox("http://127.0.0.1:9", "Add Server (1/3)");
  await wb.inputBox("x-team: blue", "Add Server (2/3)");
  await wb.quickPick("Connect");
  const offline = rows("http://127.0.0.1:9").first();
  await offline.waitFor({ state: "visible", timeout: 60_000 });
  const error = viewPane(page, "Services")
    .locator(".monaco-list-row")
    .filter({ hasText: "reflection at http://127.0.0.1:9" })
    .first();
  await error.waitFor({ state: "visible", timeout: 60_000 });
  assert.match((await error.textContent()) ?? "", /Check that the server is running/);
  // Saved to the workspace settings, next to (not instead of) the user settings' server.
  await rows("Demo server").first().waitFor({ state: "visible" });
  await wb.screenshot("unreachable-server-error-node");
});
