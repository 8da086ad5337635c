/// <reference lib="dom" />
// Signing in with OAuth2 (authorization code + PKCE) from "▶ Send", in a real VS Code (code-server,
// driven by Chromium) against a real OpenID provider (oidc-provider on loopback): Send opens the
// provider's sign-in page in the browser (vscode.env.openExternal), the person signs in and consents
// there, the redirect comes back to the extension host's loopback port, and the call goes out with the
// token, which a server checks with the provider. A second Send uses the kept token without a sign-in,
// and so does a Send after the window is reloaded (the token is in the secret storage).
// Screenshots: test-results/oauth-sign-in/.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import { type BearerServer, startBearerServer } from "../support/bearer-server";
import { type CodeServer, copyExamplesWorkspace, repoRoot, startCodeServer } from "../support/code-server";
import { publicClientId, startOidcProvider, type TestProvider, user } from "../support/oidc-provider";
import { activeEditor, openWorkbench, poll, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/oauth-sign-in");
let op: TestProvider;
let api: BearerServer;
let server: CodeServer;
let wb: Workbench;

before(
  async () => {
    // By this machine's name (which resolves to 127.0.0.1): code-server would rewrite a 127.0.0.1 URL
    // opened with openExternal into its own port-forwarding path.
    op = await startOidcProvider({ host: hostname() });
    api = await startBearerServer((token) => op.isActive(token));
    const workspace = await copyExamplesWorkspace();
    await writeFile(
      join(workspace, "requests/signin.rpc"),
      `### Echo
# @auth oauth2 authorization_code issuer=${op.issuer} client-id=${publicClientId} scope=openid
# @http2-prior-knowledge
${api.url}/demo.v1.DemoService/Echo

{"text": "signed in"}
`,
    );
    server = await startCodeServer({ workspace });
    wb = await openWorkbench(server.url, workspace, artifacts);
    await wb.openFile("requests/signin.rpc");
  },
  { timeout: 150_000 },
);

after(async () => {
  await wb?.close();
  await server?.close();
  await api?.close();
  await op?.close();
});

/** The provider's page, once the browser opened it (after VS Code's "open external website?" if asked). */
async function providerPage(): Promise<Page> {
  const context = wb.page.context();
  return poll(
    "the provider's sign-in page",
    async () => {
      const page = context
        .pages()
        .find((p) => p.url().startsWith(op.issuer) || p.url().includes("/interaction/"));
      if (page) return page;
      const open = wb.page.locator(".monaco-dialog-box .monaco-button", { hasText: /^Open$/ });
      if (await open.isVisible().catch(() => false)) await open.click();
      return undefined;
    },
    60_000,
  );
}

test("Send signs in through the browser and calls with the token; the next Send reuses it", {
  timeout: 300_000,
}, async () => {
  await wb.clickCodeLens("▶ Send", 0);
  const page = await providerPage().catch(async (err) => {
    await wb.screenshot("no-provider-page");
    const pages = wb.page
      .context()
      .pages()
      .map((p) => p.url());
    throw new Error(
      `${err.message}; pages: ${pages.join(", ")}; notifications: ${(await wb.notifications()).join(" | ")}`,
    );
  });
  await page.waitForLoadState();
  await page.locator("input[name=login]").fill(user.username);
  await page.locator("input[name=password]").fill("any");
  await wb.screenshot("provider-sign-in");
  await page.locator("button[type=submit]").click();
  // The consent page, then the redirect to the extension host's loopback port.
  await page.locator("button[type=submit]").click();
  await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
  assert.match((await page.locator("body").textContent()) ?? "", /Signed in/);
  const frame = await wb.webviewFrame("Response: Echo");
  await wb.waitForText(/^ok · exit 0 · /, frame.locator("#status"), 60_000);
  await wb.screenshot("signed-in-response");
  const calls = api.seen.filter((s) => s.path.endsWith("/Echo"));
  assert.equal(calls.length, 1);
  assert.ok(calls[0].accepted, "the server took the token");
  assert.deepEqual(
    op.tokenRequests.map((t) => t.grantType),
    ["authorization_code"],
  );

  await wb.page.locator(".tabs-container .tab").filter({ hasText: "signin.rpc" }).first().click();
  await wb.clickCodeLens("▶ Send", 0);
  await poll("the second call", async () =>
    api.seen.filter((s) => s.path.endsWith("/Echo")).length === 2 ? true : undefined,
  );
  const second = api.seen.filter((s) => s.path.endsWith("/Echo"))[1];
  assert.equal(second.authorization, calls[0].authorization, "the kept token");
  assert.equal(op.tokenRequests.length, 1, "no second sign-in");

  // After a reload (a new extension host), the token comes from the secret storage.
  // The old page stays on screen until the reload navigates: wait for the new page's load, or the
  // steps below would act on the old workbench while it goes away.
  const reloaded = wb.page.waitForEvent("load", { timeout: 60_000 });
  await wb.runCommand("Developer: Reload Window");
  await reloaded;
  await wb.page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
  // The response panel does not outlive the window (its history was in memory): the reloaded window
  // closes it rather than bring back an empty editor group beside the file.
  await poll("one editor group after the reload", async () =>
    (await wb.page.locator(".editor-group-container").count()) === 1 ? true : undefined,
  );
  // The lenses are drawn again while the reloaded window's language server starts: a click that lands
  // on one as it is replaced may send nothing. Until the call arrives, the file is opened again and
  // Send clicked again.
  const echoes = () => api.seen.filter((s) => s.path.endsWith("/Echo")).length;
  await poll(
    "the call after the reload",
    async () => {
      if (echoes() >= 3) return true;
      await wb.openFile("requests/signin.rpc");
      await activeEditor(wb.page)
        .locator(".codelens-decoration a", { hasText: "▶ Send" })
        .first()
        .click({ timeout: 10_000 })
        .catch(() => {});
      for (let i = 0; i < 50 && echoes() < 3; i++) await new Promise((r) => setTimeout(r, 100));
      return echoes() >= 3 ? true : undefined;
    },
    120_000,
  );
  const third = api.seen.filter((s) => s.path.endsWith("/Echo"))[2];
  assert.equal(third.authorization, calls[0].authorization, "the token kept in the secret storage");
  assert.equal(op.tokenRequests.length, 1, "no sign-in after the reload");
});
