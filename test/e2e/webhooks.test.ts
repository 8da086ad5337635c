// The whole webhook flow in a real VS Code (code-server, driven by Chromium): start the local registry
// from the Webhooks view, create a webhook on its repository (the callback URL checked as it is typed),
// see it listed, start the listener, push through the registry with a hostile author name, see the
// delivery arrive in the Deliveries view as inert text and open it, then delete the webhook. A
// repository named with markup and link syntax shows as text, and so does the error about it.
// Screenshots of each step: test-results/webhooks/.
import assert from "node:assert/strict";
import net from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { activeEditor, openWorkbench, poll, viewPane, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/webhooks");
const hostile = "<img src=x onerror=alert(1)>";
/** A name that would become a command link (stopping the local registry) if shown as markup. */
const hostileLink = "[stop](command:protocall.webhooks.stopLocalRegistry)";
let server: CodeServer;
let wb: Workbench;
let listenerPort = 0;
const dialogs: string[] = [];

/** A port free now, for the listener (so the callback URL can be typed before the listener starts). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

before(
  async () => {
    listenerPort = await freePort();
    const workspace = await copyExamplesWorkspace();
    server = await startCodeServer({ workspace, settings: { "protocall.listener.port": listenerPort } });
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

/** Hovers a row of a view and clicks its inline action with this title. */
async function inlineAction(row: ReturnType<Workbench["treeItem"]>, title: string): Promise<void> {
  await row.hover();
  const action = row.locator(`.action-label[aria-label^="${title}"]`).first();
  await action.waitFor({ state: "visible" });
  await action.click();
}

test("local registry → create webhook → listener → push → delivery → delete", {
  timeout: 300_000,
}, async () => {
  const { page } = wb;
  const callbackUrl = `https://127.0.0.1:${listenerPort}/buf.alpha.webhook.v1alpha1.EventService/Event`;

  // 1. The Webhooks view, empty, then the local registry with its repository.
  await page.locator(".activitybar .action-item a[aria-label^='Protocall']").first().click();
  await wb.openView("Webhooks");
  await wb.waitForText("Manage repository push webhooks", viewPane(page, "Webhooks"));
  await wb.screenshot("webhooks-view-empty");
  await wb.runCommand("Protocall: Start Local Registry");
  await wb.treeItem("Webhooks", "Local registry").waitFor({ state: "visible", timeout: 60_000 });
  const repoRow = wb.treeItem("Webhooks", "acme/petapis");
  await repoRow.waitFor({ state: "visible" });
  await wb.waitForText(/Local registry running at https:\/\/127\.0\.0\.1:\d+, signed in as alice/);
  await wb.screenshot("local-registry-started");

  // 1b. A repository whose name is markup and link syntax: shown as text in the view, and the registry's
  // error about it (which repeats the name) is a notification without any link in it.
  await wb.runCommand("Protocall: Add Repository…");
  await wb.inputBox(`acme/${hostileLink}`);
  const hostileRow = wb.treeItem("Webhooks", `acme/${hostileLink}`);
  await hostileRow.waitFor({ state: "visible" });
  await hostileRow.click();
  await wb
    .treeItem("Webhooks", /repository acme\/\[stop\]\(command:.*does not exist/)
    .waitFor({ state: "visible" });
  await inlineAction(hostileRow, "Create Webhook");
  await wb.quickPick("WEBHOOK_EVENT_REPOSITORY_PUSH");
  await wb.inputBox(
    `https://127.0.0.1:${listenerPort}/buf.alpha.webhook.v1alpha1.EventService/Event`,
    "(2/2)",
  );
  const toast = page
    .locator(".notifications-toasts .notification-list-item")
    .filter({ hasText: "does not exist" });
  await toast.first().waitFor({ state: "visible" });
  assert.ok(
    ((await toast.first().textContent()) ?? "").includes(`acme/[stop] (command:`),
    (await toast.first().textContent()) ?? "",
  );
  assert.equal(
    await toast.first().locator(".notification-list-item-message a").count(),
    0,
    "no link in the message",
  );
  await wb.screenshot("markup-repository-inert");
  await inlineAction(hostileRow, "Remove Repository");
  await hostileRow.waitFor({ state: "hidden" });
  assert.ok(await wb.treeItem("Webhooks", "Local registry").isVisible(), "the local registry still runs");

  // 2. Create a webhook: the event, then the callback URL, checked while it is typed.
  await inlineAction(repoRow, "Create Webhook");
  await wb.quickPick("WEBHOOK_EVENT_REPOSITORY_PUSH");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible" });
  await input.fill(`http://127.0.0.1:${listenerPort}/hook?x=1`);
  const message = page.locator(".quick-input-widget .quick-input-message");
  await poll("the callback URL's validation message", async () => {
    const text = (await message.textContent().catch(() => "")) ?? "";
    return /must use the https scheme/.test(text) && /must not have a query/.test(text) ? text : undefined;
  });
  await wb.screenshot("callback-url-checked-as-typed");
  await input.fill(callbackUrl);
  await poll("no validation message", async () =>
    /must/.test((await message.textContent().catch(() => "")) ?? "") ? undefined : true,
  );
  await input.press("Enter");
  await wb.waitForText(/Created the WEBHOOK_EVENT_REPOSITORY_PUSH webhook of acme\/petapis/);

  // 3. It is listed under the repository (expanded to show it, the new webhook selected): event, id.
  const hookRow = wb.treeItem("Webhooks", "WEBHOOK_EVENT_REPOSITORY_PUSH");
  await hookRow.waitFor({ state: "visible" });
  await poll("the new webhook selected", async () =>
    (await hookRow.getAttribute("aria-selected")) === "true" ? true : undefined,
  );
  const hookText = (await hookRow.textContent()) ?? "";
  assert.match(hookText, /WEBHOOK_EVENT_REPOSITORY_PUSH\s*[0-9a-f-]{36}/);
  await wb.screenshot("webhook-listed");

  // 4. Start the listener (it takes the port the callback URL names).
  await wb.runCommand("Protocall: Start Listener");
  await wb.waitForText(new RegExp(`127\\.0\\.0\\.1:${listenerPort}`), page.locator(".statusbar"), 60_000);
  await wb.openView("Deliveries");
  await wb.screenshot("listener-started");

  // A second webhook: the box is now pre-filled with the running listener's URL; the registry allows
  // one per repository, and the error shows where the user acted, with what to do.
  await wb.openView("Webhooks");
  await inlineAction(repoRow, "Create Webhook");
  await wb.quickPick("WEBHOOK_EVENT_REPOSITORY_PUSH");
  await input.waitFor({ state: "visible" });
  assert.equal(await input.inputValue(), callbackUrl);
  await wb.screenshot("callback-url-prefilled");
  await input.press("Enter");
  await wb.waitForText(/already has a webhook for this event.*delete the webhook listed under it first/);
  await wb.screenshot("second-webhook-rejected");

  // 5. Push through the local registry, with an author name that is markup.
  // From the Webhooks view's "More Actions" menu, which offers Push while the local registry runs.
  const webhooksPane = await wb.openView("Webhooks");
  const menu = page.locator(".monaco-menu");
  const openViewMenu = async () => {
    await webhooksPane.locator(".pane-header").hover();
    await webhooksPane.locator('.pane-header .action-label[aria-label^="More Actions"]').click();
    await menu.locator(".action-label", { hasText: "Stop Local Registry" }).waitFor({ state: "visible" });
  };
  await openViewMenu();
  assert.equal(await menu.locator(".action-label", { hasText: "Start Local Registry" }).count(), 0);
  await wb.screenshot("view-menu-while-running");
  // A click that lands while the menu redraws (a context key changing on a loaded machine) closes the
  // menu without running the action: open the menu and choose Push again until its first step shows.
  const repoPickRow = page
    .locator(".quick-input-widget .monaco-list-row")
    .filter({ has: page.locator(".label-name", { hasText: "acme/petapis" }) })
    .first();
  await poll(
    "the push's repository picker",
    async () => {
      if (!(await repoPickRow.isVisible())) {
        if (!(await menu.isVisible())) await openViewMenu();
        await menu.locator(".action-label", { hasText: "Push to Repository (local registry)…" }).click();
      }
      await repoPickRow.waitFor({ state: "visible", timeout: 20_000 });
      return true;
    },
    90_000,
  );
  await wb.quickPick("acme/petapis");
  await wb.inputBox(hostile, "Push to Repository (2/3)");
  await wb.inputBox("v1.0.0", "Push to Repository (3/3)");
  await wb.waitForText(/Pushed commit [0-9a-f]{12} to acme\/petapis; the registry delivers its push event/);
  await wb.screenshot("pushed");

  // 6. The delivery arrives (within one batch interval) and shows the author as plain text.
  const deliveryRow = wb.treeItem("Deliveries", /acme\/petapis/);
  await deliveryRow.waitFor({ state: "visible", timeout: 30_000 });
  assert.ok(
    ((await deliveryRow.textContent()) ?? "").includes(hostile),
    (await deliveryRow.textContent()) ?? "",
  );
  assert.equal(await page.locator('img[src="x"]').count(), 0, "no <img> element was created from the author");
  await wb.screenshot("delivery-received");

  // 7. Open it: the decoded EventRequest as JSON.
  await deliveryRow.click();
  await poll("the delivery document", async () => {
    const text = await wb.editorText().catch(() => "");
    return text.includes("repositoryPush") ? text : undefined;
  });
  await activeEditor(page).locator(".view-lines").waitFor({ state: "visible" });
  const doc = await wb.editorText();
  assert.ok(doc.includes("WEBHOOK_EVENT_REPOSITORY_PUSH"), doc);
  await wb.screenshot("delivery-opened");

  // 8. Delete the webhook: a modal names its callback URL; then the repository has none.
  await wb.openView("Webhooks");
  const dialog = page.locator(".monaco-dialog-box");
  // A click that lands while the view redraws (a delivery read, the view taking focus on a loaded
  // machine) is lost: hover and click again until the confirmation opens.
  await poll(
    "the delete confirmation",
    async () => {
      if (!(await dialog.isVisible())) {
        await inlineAction(wb.treeItem("Webhooks", "WEBHOOK_EVENT_REPOSITORY_PUSH"), "Delete Webhook");
      }
      await dialog.waitFor({ state: "visible", timeout: 5000 });
      return true;
    },
    60_000,
  );
  assert.ok(((await dialog.textContent()) ?? "").includes(callbackUrl), (await dialog.textContent()) ?? "");
  await wb.screenshot("delete-confirmation");
  await dialog.locator(".monaco-button", { hasText: /^Delete$/ }).click();
  await wb.treeItem("Webhooks", "No webhooks: create one").waitFor({ state: "visible" });
  await wb.screenshot("webhook-deleted");

  await wb.runCommand("Protocall: Stop Listener");
  await wb.runCommand("Protocall: Stop Local Registry");
  await wb.treeItem("Webhooks", "Local registry").waitFor({ state: "hidden" });
  assert.deepEqual(dialogs, [], "no script ran");
});
