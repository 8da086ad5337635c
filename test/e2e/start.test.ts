// `npm start`, as a first run uses it: the demo server, the registry emulator (https) and code-server
// with the extension start with nothing to configure; a busy demo port is named, with the copy of
// examples/ the editor opens instead. In the editor (Chromium): start the listener, sign in to the
// registry npm start configured, add its repository and create a webhook on the pre-filled listener
// URL; then `protocall registry push` and the real `buf push`, as printed, each arrive in the
// Deliveries view, and the webhook shows its last delivery. With the listener stopped, a push fails
// and the webhook shows that, with the reason on hover. Ctrl+C (SIGINT) stops everything and removes
// every temporary folder. Screenshots: test-results/start/.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { runProcess } from "../support/cli";
import { ensureCodeServer, repoRoot } from "../support/code-server";
import { openWorkbench, poll, viewPane, type Workbench } from "../support/workbench";

const artifacts = join(repoRoot, "test-results/start");

/** Hovers a row of a view and clicks its inline action with this title. */
async function inlineAction(row: ReturnType<Workbench["treeItem"]>, title: string): Promise<void> {
  await row.hover();
  const action = row.locator(`.action-label[aria-label^="${title}"]`).first();
  await action.waitFor({ state: "visible" });
  await action.click();
}

test("npm start: a webhook on the editor's listener receives protocall and buf pushes; a failed delivery shows on the webhook; Ctrl+C stops and removes everything", {
  timeout: 420_000,
}, async () => {
  ensureCodeServer();
  // A port that is taken, given as the demo server's.
  const busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
  const busyPort = (busy.address() as net.AddressInfo).port;
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(repoRoot, "scripts/start.mjs"),
      "--no-build",
      "--port",
      String(busyPort),
      "--registry-port",
      "0",
      "--editor-port",
      "0",
    ],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  let wb: Workbench | undefined;
  try {
    const printed = await poll(
      "npm start to print the editor's URL",
      async () => {
        if (child.exitCode !== null) throw new Error(`npm start exited:\n${out}`);
        if (!/Ctrl\+C stops everything/.test(out)) return undefined;
        const get = (re: RegExp) => {
          const m = re.exec(out)?.[1];
          assert.ok(m, `${re} is not in the output:\n${out}`);
          return m;
        };
        return {
          editor: get(/Open Protocall in VS Code:\s+(http:\/\/127\.0\.0\.1:\d+\/\?folder=\S+)/),
          demo: get(/Demo server \(reflection on\):\s+(\S+)/),
          registry: get(/Registry emulator:\s+(\S+)/),
          cert: get(/Registry certificate:\s+(\S+)/),
          workspace: get(/Workspace:\s+(\S+)/),
          temps: get(/Temporary folders:\s+(\S+ \S+)/).split(" "),
          push: get(/^ {2}(PROTOCALL_TOKEN=alice-token npx protocall registry push .*)$/m),
          bufDir: get(/^ {2}cd (\S+)$/m),
          buf: get(/^ {2}(SSL_CERT_FILE=\S+ BUF_TOKEN=alice-token \S+ push)$/m),
        };
      },
      120_000,
    );
    // The busy port is named, and where the copy the editor opens lives.
    assert.match(out, new RegExp(`Port ${busyPort} is busy .*: the demo server uses port \\d+ instead`));
    assert.ok(
      out.includes(`examples/ whose request files name ${printed.demo}:\n  ${printed.workspace}\n`),
      out,
    );
    assert.match(
      readFileSync(join(printed.workspace, "requests/demo.rpc"), "utf8"),
      new RegExp(`@host = ${printed.demo}`),
    );
    assert.match(printed.registry, /^https:\/\/127\.0\.0\.1:\d+$/);
    const page = await fetch(printed.editor);
    assert.equal(page.status, 200);
    const greet = await fetch(`${printed.demo}/demo.v1.GreetService/Greet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "start" }),
    });
    assert.deepEqual(await greet.json(), { greeting: "Hello, start!" });

    /** Runs a printed command line (`NAME=value ... program args`) as the user would. */
    const runPrinted = (line: string, cwd = repoRoot) => {
      const words = line.split(" ");
      const env: Record<string, string> = {};
      while (/^[A-Z_]+=/.test(words[0])) {
        const [name, ...value] = (words.shift() ?? "").split("=");
        env[name] = value.join("=");
      }
      const [program, ...args] = words;
      return runProcess(program, args, { cwd, env, timeoutMs: 120_000 });
    };

    wb = await openWorkbench(printed.editor, printed.workspace, artifacts);
    const { page: p } = wb;
    await p.locator(".activitybar .action-item a[aria-label^='Protocall']").first().click();

    // 1. The listener, from the Deliveries view.
    await wb.openView("Deliveries");
    await wb.runCommand("Protocall: Start Listener");
    await wb.waitForText(/127\.0\.0\.1:\d+/, p.locator(".statusbar"), 60_000);

    // 2. The registry from npm start's settings: sign in, add the repository.
    await wb.openView("Webhooks");
    await wb.treeItem("Webhooks", "local registry").waitFor({ state: "visible", timeout: 60_000 });
    await wb.runCommand("Protocall: Sign In…");
    await wb.inputBox("alice-token", "Sign In to local registry");
    const registryRow = wb.treeItem("Webhooks", "local registry");
    await poll("the registry signed in", async () =>
      /signed out/.test((await registryRow.textContent()) ?? "signed out") ? undefined : true,
    );
    await wb.runCommand("Protocall: Add Repository…");
    await wb.inputBox("acme/petapis", "Add Repository to local registry");
    const repoRow = wb.treeItem("Webhooks", "acme/petapis");
    await repoRow.waitFor({ state: "visible" });
    await wb.screenshot("signed-in");

    // 3. A webhook on the listener's URL, as the box pre-fills it.
    await inlineAction(repoRow, "Create Webhook");
    await wb.quickPick("WEBHOOK_EVENT_REPOSITORY_PUSH");
    const input = p.locator(".quick-input-widget input.input");
    await input.waitFor({ state: "visible" });
    assert.match(
      await input.inputValue(),
      /^https:\/\/127\.0\.0\.1:\d+\/buf\.alpha\.webhook\.v1alpha1\.EventService\/Event$/,
    );
    await input.press("Enter");
    await wb.waitForText(/Created the WEBHOOK_EVENT_REPOSITORY_PUSH webhook of acme\/petapis/);
    const hookRow = wb.treeItem("Webhooks", "WEBHOOK_EVENT_REPOSITORY_PUSH");
    await hookRow.waitFor({ state: "visible" });

    // 4. protocall registry push, as printed: the delivery arrives.
    const pushed = await runPrinted(printed.push);
    assert.equal(pushed.code, 0, pushed.stderr);
    const commit = (JSON.parse(pushed.stdout) as { commit: { id: string } }).commit.id;
    await wb.openView("Deliveries");
    const rows = viewPane(p, "Deliveries")
      .locator(".monaco-list-row")
      .filter({ hasText: /acme\/petapis/ });
    await poll("the first delivery", async () => ((await rows.count()) >= 1 ? true : undefined), 60_000);
    await wb.screenshot("protocall-push-delivered");

    // 5. buf push, as printed (in the buf workspace it names): a second delivery.
    const bufPushed = await runPrinted(printed.buf, printed.bufDir);
    assert.equal(bufPushed.code, 0, bufPushed.stderr);
    assert.match(bufPushed.stdout, /^localhost:\d+\/acme\/petapis:[0-9a-f]{32}$/m);
    await poll("the buf push's delivery", async () => ((await rows.count()) >= 2 ? true : undefined), 60_000);
    await wb.screenshot("buf-push-delivered");

    // 6. The webhook shows its last delivery.
    await wb.openView("Webhooks");
    await poll(
      "the webhook's last delivery",
      async () => (/delivered/.test((await hookRow.textContent()) ?? "") ? true : undefined),
      60_000,
    );
    assert.ok(commit);

    // 7. With the listener stopped, a push cannot be delivered: the webhook says so, and why on hover.
    await wb.runCommand("Protocall: Stop Listener");
    const again = await runPrinted(printed.push);
    assert.equal(again.code, 0, again.stderr);
    await poll(
      "the failed delivery on the webhook",
      async () => (/delivery failed/.test((await hookRow.textContent()) ?? "") ? true : undefined),
      60_000,
    );
    await hookRow.hover();
    const hover = await poll("the webhook's hover", async () => {
      const text = (await p.locator(".workbench-hover, .monaco-hover").allTextContents()).join("\n");
      return /Last delivery: .*failed: /.test(text) ? text : undefined;
    });
    assert.match(hover, /ECONNREFUSED|connect/i, hover);
    await wb.screenshot("failed-delivery-on-webhook");
    await wb.close();
    wb = undefined;

    // 8. Ctrl+C: every server is closed, every temporary folder removed.
    child.kill("SIGINT");
    assert.equal(await exited, 0, out);
    for (const url of [printed.demo, printed.editor]) {
      await assert.rejects(fetch(url, { signal: AbortSignal.timeout(3000) }), `${url} is closed`);
    }
    const registryPort = Number(new URL(printed.registry).port);
    await assert.rejects(
      new Promise<void>((resolve, reject) => {
        const s = net.connect(registryPort, "127.0.0.1", () => {
          s.destroy();
          resolve();
        });
        s.once("error", reject);
      }),
      "the registry is closed",
    );
    for (const dir of [...printed.temps, printed.workspace]) {
      assert.equal(existsSync(dir), false, `${dir} is removed`);
    }
  } catch (err) {
    await wb?.screenshot("failure").catch(() => undefined);
    throw err;
  } finally {
    await wb?.close();
    // After a failure, stop it as Ctrl+C does (its servers and the editor with it), then for sure.
    if (child.exitCode === null) {
      child.kill("SIGINT");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    busy.close();
  }
});
