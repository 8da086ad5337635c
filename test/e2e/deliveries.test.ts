// The Deliveries view in a real VS Code (code-server, driven by Chromium): the listener started from
// the view's title button (which then turns into Stop: the context key drives the menus), the status
// bar item with address and count, a test push from the palette and a hostile one from the CLI shown
// as text, a garbage delivery shown as rejected, a delivery opened, replayed from its inline action,
// cleared after the modal confirmation, and the listener stopped by clicking the status bar item.
// Screenshots of each step: test-results/deliveries/.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { activeEditor, openWorkbench, poll, viewPane, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/deliveries");
const hostile = "<img src=x onerror=alert(1)>";
let server: CodeServer;
let wb: Workbench;
let port = 0;
const dialogs: string[] = [];

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const p = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return p;
}

/** A push event (protobuf JSON) whose author and tag are markup. */
function hostileEventFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), "protocall-deliveries-e2e-")), "hostile.json");
  writeFileSync(
    file,
    JSON.stringify({
      event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
      payload: {
        repositoryPush: {
          eventTime: new Date().toISOString(),
          repository: { id: "r1", name: "petapis", ownerName: "acme" },
          repositoryCommit: {
            id: "badc0de0badc0de0badc0de0badc0de0",
            name: "badc0de0badc0de0badc0de0badc0de0",
            author: hostile,
            tags: [{ name: "<b>v2</b>" }],
          },
        },
      },
    }),
  );
  return file;
}

/** POSTs bytes the listener must refuse (wrong content type); resolves with the status. */
function postGarbage(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: "POST",
        rejectUnauthorized: false,
        headers: { "content-type": "text/plain" },
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("no answer within 10 s")));
    req.end("garbage");
  });
}

before(
  async () => {
    port = await freePort();
    const workspace = await copyExamplesWorkspace();
    server = await startCodeServer({ workspace, settings: { "protocall.listener.port": port } });
    wb = await openWorkbench(server.url, workspace, artifacts);
    // A script run by hostile text would show up as a dialog (alert): record any.
    wb.page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  },
  { timeout: 180_000 },
);

after(async () => {
  await wb?.close();
  await server?.close();
});

test("listener from the view title and status bar; deliveries received, opened, replayed, cleared", {
  timeout: 300_000,
}, async () => {
  const { page } = wb;
  const callbackUrl = `https://127.0.0.1:${port}/buf.alpha.webhook.v1alpha1.EventService/Event`;
  const statusItem = page.locator(".statusbar-item", { hasText: /Listener|127\.0\.0\.1/ }).first();

  // 1. The view, empty, offers to start the listener; its title has Start (not Stop).
  await page.locator(".activitybar .action-item a[aria-label^='Protocall']").first().click();
  const pane = await wb.openView("Deliveries");
  await wb.waitForText("Start a local listener", pane);
  await pane.hover();
  const startButton = pane.locator(".pane-header .action-label[aria-label='Start Listener']");
  const stopButton = pane.locator(".pane-header .action-label[aria-label='Stop Listener']");
  await startButton.waitFor({ state: "visible" });
  assert.equal(await stopButton.count(), 0);
  await wb.waitForText(/Listener · 0/, page.locator(".statusbar"));
  await wb.screenshot("deliveries-empty");

  // 2. Start from the title button: the status bar shows the address and count; the button is Stop now.
  await startButton.click();
  await wb.waitForText(new RegExp(`127\\.0\\.0\\.1:${port} · 0`), page.locator(".statusbar"), 60_000);
  await pane.hover();
  await stopButton.waitFor({ state: "visible" });
  assert.equal(await startButton.count(), 0);
  await wb.waitForText("Send Test Push", pane);
  await wb.screenshot("listener-started");

  // 3. A test push from the palette, a hostile push from the CLI, and a garbage delivery.
  await wb.runCommand("Protocall: Send Test Push");
  await wb.waitForText(new RegExp(`Test push sent to ${callbackUrl.replace(/[.?]/g, "\\$&")}: HTTP 200`));
  const cli = spawnSync(
    process.execPath,
    [
      join(repoRoot, "dist/cli.js"),
      "webhook",
      "send-test",
      "--to",
      callbackUrl,
      "--data",
      hostileEventFile(),
      "-k",
    ],
    { encoding: "utf8", timeout: 30_000 },
  );
  assert.equal(cli.status, 0, cli.stderr);
  assert.equal(await postGarbage(callbackUrl), 415);
  await wb.waitForText(new RegExp(`127\\.0\\.0\\.1:${port} · 3`), page.locator(".statusbar"));

  // Newest first: the rejected one, then the hostile push (as text), then the sample push.
  const rows = pane.locator(".monaco-list-row");
  await poll("three rows", async () => ((await rows.count()) === 3 ? true : undefined));
  const texts = await rows.allInnerTexts();
  assert.match(texts[0], /Rejected \(HTTP 415\)/);
  assert.ok(texts[1].includes(hostile), texts[1]);
  assert.ok(texts[1].includes("<b>v2</b>"), texts[1]);
  assert.match(texts[2], /acme\/petapis [0-9a-f]{8}/);
  assert.match(texts[2], /alice · v1\.0\.0/);
  assert.equal(
    await rows.nth(0).locator(".codicon-warning").count(),
    1,
    "a rejected delivery has a warning icon",
  );
  assert.equal(await page.locator('img[src="x"]').count(), 0, "no <img> element was created from the author");
  assert.equal(await pane.locator("b").count(), 0, "no <b> element was created from the tag");
  await wb.screenshot("deliveries-received");
  // Its tooltip shows the author as written, too.
  const tooltip = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: `author: ${hostile}` });
  // A tree tooltip shows after a delay and only for a pointer that moved onto the row: hover again
  // until it does.
  await poll("the hostile delivery's tooltip", async () => {
    await page.mouse.move(700, 300);
    await rows.nth(1).locator(".label-name").hover();
    try {
      await tooltip.first().waitFor({ state: "visible", timeout: 4000 });
      return true;
    } catch {
      return undefined;
    }
  });
  assert.equal(await page.locator('img[src="x"]').count(), 0, "no <img> element in the tooltip");
  await wb.screenshot("hostile-tooltip");
  await page.mouse.move(700, 300);

  // 4. Open the hostile one: the decoded event with its headers and raw size, as JSON.
  await rows.nth(1).click();
  await poll("the delivery document", async () => {
    const text = await wb.editorText().catch(() => "");
    return text.includes("repositoryPush") ? text : undefined;
  });
  await activeEditor(page).locator(".view-lines").waitFor({ state: "visible" });
  const doc = await wb.editorText();
  for (const part of ['"rawSize"', '"headers"', '"content-type": "application/proto"', hostile]) {
    assert.ok(doc.includes(part), `${part} in ${doc}`);
  }
  assert.ok(await page.locator(".tab.active", { hasText: /delivery-\d+\.json/ }).isVisible());
  await wb.screenshot("delivery-opened");

  // 5. Replay the sample push from its inline action, to the listener: a fourth delivery.
  const sampleRow = rows.filter({ hasText: /alice/ }).first();
  await sampleRow.hover();
  await sampleRow.locator(".action-label[aria-label^='Replay Delivery']").click();
  await wb.quickPick(/To the listener/);
  await wb.waitForText(/Delivery #\d+ replayed to .*: HTTP 200 in [\d.]+ ms/);
  await wb.waitForText(new RegExp(`127\\.0\\.0\\.1:${port} · 4`), page.locator(".statusbar"));
  await poll("the replay row", async () =>
    (await rows.first().innerText()).includes("replay of #") ? true : undefined,
  );
  await wb.screenshot("delivery-replayed");

  // 5b. Replay to another URL typed in the input box: the answer is reported.
  const received: string[] = [];
  const backend = http.createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("[busy](command:workbench.action.quit)");
    });
  });
  await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
  try {
    const backendUrl = `http://127.0.0.1:${(backend.address() as net.AddressInfo).port}/hook`;
    await sampleRow.hover();
    await sampleRow.locator(".action-label[aria-label^='Replay Delivery']").click();
    await wb.quickPick(/To another URL/);
    await wb.inputBox(backendUrl, " to");
    const warning = page
      .locator(".notifications-toasts .notification-list-item")
      .filter({ hasText: /replayed to http:\/\/127\.0\.0\.1:\d+\/hook: HTTP 503/ });
    await warning.first().waitFor({ state: "visible" });
    assert.deepEqual(received, ["POST /hook"]);
    assert.equal(
      await warning.first().locator(".notification-list-item-message a").count(),
      0,
      "the backend's answer is shown as text, without a link",
    );
    await wb.screenshot("replayed-to-url");
  } finally {
    backend.close();
  }

  // 5c. Export as JSON Lines: the format, then the save dialog (its default name accepted).
  await wb.runCommand("Protocall: Export Deliveries…");
  await wb.quickPick("JSON Lines");
  const saveInput = page.locator(".quick-input-widget input.input");
  await saveInput.waitFor({ state: "visible" });
  await poll("the default file name", async () =>
    (await saveInput.inputValue()).endsWith("deliveries.jsonl") ? true : undefined,
  );
  await wb.screenshot("export-save-dialog");
  await saveInput.press("Enter");
  await wb.waitForText(/Exported 4 deliveries to .*deliveries\.jsonl/);
  const exported = readFileSync(join(server.workspace, "deliveries.jsonl"), "utf8").trimEnd().split("\n");
  assert.equal(exported.length, 4);
  assert.ok(
    exported.some(
      (line) => JSON.parse(line).event?.payload?.repositoryPush?.repositoryCommit?.author === hostile,
    ),
  );

  // 6. Clear: a modal asks first; then the view is empty.
  await wb.runCommand("Protocall: Clear Deliveries");
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ state: "visible" });
  assert.match(await dialog.innerText(), /Delete all 4 deliveries from the store\?/);
  await wb.screenshot("clear-confirmation");
  await dialog.locator(".monaco-button", { hasText: /^Clear$/ }).click();
  await wb.waitForText(new RegExp(`127\\.0\\.0\\.1:${port} · 0`), page.locator(".statusbar"));
  await poll("an empty view", async () => ((await rows.count()) === 0 ? true : undefined));
  await wb.screenshot("cleared");

  // 7. Clicking the status bar item stops the listener; the title offers Start again.
  await statusItem.click();
  await wb.waitForText(/Listener · 0/, page.locator(".statusbar"));
  await pane.hover();
  await startButton.waitFor({ state: "visible" });
  await wb.screenshot("listener-stopped");
  assert.deepEqual(dialogs, [], "no script ran");
  assert.ok(await viewPane(page, "Deliveries").isVisible());
});
