// Settings from workspace/configuration: the selected environment resolves variables, and a
// configuration change re-checks the open files.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { bufPath } from "../support/buf";
import { type DemoServer, demoDescriptorSet, startDemoServer } from "../support/servers";
import { LspClient } from "./lsp-client";
import { createWorkspace } from "./workspace";

describe("language server settings", { timeout: 120_000 }, () => {
  let dir: string;
  let demo: DemoServer;
  let client: LspClient;
  const configuration: Record<string, unknown> = { bufPath };

  before(async () => {
    dir = createWorkspace();
    demo = await startDemoServer();
    writeFileSync(join(dir, "protocall.env.json"), JSON.stringify({ dev: { host: demo.url } }));
    client = await LspClient.start({ rootDir: dir, configuration });
  });

  after(async () => {
    await client?.close();
    await demo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("resolves variables from the configured environment and re-checks on a configuration change", async () => {
    const text = '###\n{{host}}/acme.v1.ShopService/PlaceOrder\n\n{"item": 1}\n';
    const uri = pathToFileURL(join(dir, "env.rpc")).href;
    client.open(uri, text);
    const first = await client.diagnosticsFor(uri, 1);
    const undefinedHost = first.find((d) => d.message.startsWith("undefined variable {{host}}"));
    assert.ok(undefinedHost, first.map((d) => d.message).join("\n"));
    assert.equal(undefinedHost.severity, 1);
    assert.deepEqual(undefinedHost.range, {
      start: { line: 1, character: 0 },
      end: { line: 1, character: 8 },
    });

    const count = client.published(uri).length;
    configuration.environment = "dev";
    void client.connection.sendNotification("workspace/didChangeConfiguration", { settings: {} });
    const deadline = Date.now() + 30_000;
    while (client.published(uri).length === count && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const second = client.published(uri).at(-1)?.diagnostics ?? [];
    assert.ok(!second.some((d) => d.message.includes("undefined variable")), JSON.stringify(second));
    assert.ok(second.some((d) => d.message.includes("expected a string for a string field")));
  });

  it("builds a workspace folder added later", async () => {
    const empty = mkdtempSync(join(tmpdir(), "protocall-lsp-empty-"));
    const other = await LspClient.start({
      rootDir: empty,
      // Reflection off in the editor: only the workspace is asked (`# @reflect false` without
      // `@schema` is an error, as Send refuses it).
      configuration: { bufPath, reflection: false },
      workspaceFolders: true,
    });
    try {
      const text = '###\nhttp://127.0.0.1:9/acme.v1.ShopService/PlaceOrder\n\n{"item": 1}\n';
      const uri = pathToFileURL(join(empty, "later.rpc")).href;
      other.open(uri, text);
      assert.deepEqual(await other.diagnosticsFor(uri, 1), [], "no schema yet: nothing to check");
      const count = other.published(uri).length;
      void other.connection.sendNotification("workspace/didChangeWorkspaceFolders", {
        event: { added: [{ uri: pathToFileURL(dir).href, name: "api" }], removed: [] },
      });
      const deadline = Date.now() + 30_000;
      while (other.published(uri).length === count && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const after = other.published(uri).at(-1)?.diagnostics ?? [];
      assert.ok(
        after.some((d) => d.message.includes("expected a string for a string field")),
        JSON.stringify(after),
      );
    } finally {
      await other.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("takes schema files from the settings", async () => {
    const set = await demoDescriptorSet();
    const empty = mkdtempSync(join(tmpdir(), "protocall-lsp-set-"));
    const other = await LspClient.start({
      rootDir: empty,
      initializationOptions: { schemas: [set], reflection: false },
    });
    try {
      const text = `###\n${demo.url}/demo.v1.GreetService/Greet\n\n{"nam": "x"}\n`;
      const uri = pathToFileURL(join(empty, "set.rpc")).href;
      other.open(uri, text);
      const diagnostics = await other.diagnosticsFor(uri, 1);
      assert.ok(
        diagnostics.some((d) => d.message.includes('unknown field "nam" in message demo.v1.GreetRequest')),
      );
      // Reflection is off: a service the set lacks is unknown, not "cannot be checked against the server".
      const missing = "###\nhttp://127.0.0.1:9/demo.v1.GreetServic/Greet\n";
      other.change(uri, missing, 2);
      const second = await other.diagnosticsFor(uri, 2);
      assert.ok(
        second.some(
          (d) =>
            d.severity === 1 &&
            d.message.includes('unknown service "demo.v1.GreetServic"; did you mean "demo.v1.GreetService"?'),
        ),
        JSON.stringify(second),
      );
    } finally {
      await other.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("drops cached reflection on protocall/refreshSchemas", async () => {
    const own = await startDemoServer();
    let closed = false;
    try {
      const text = `###\n${own.url}/demo.v1.GreetService/Greet\n\n{"name": "x"}\n`;
      const uri = pathToFileURL(join(dir, "refresh.rpc")).href;
      client.open(uri, text);
      assert.deepEqual(await client.diagnosticsFor(uri, 1), []);
      await own.close();
      closed = true;
      const count = client.published(uri).length;
      await client.request("protocall/refreshSchemas", null);
      const deadline = Date.now() + 30_000;
      while (client.published(uri).length === count && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const after = client.published(uri).at(-1)?.diagnostics ?? [];
      assert.ok(
        after.some(
          (d) => d.message.includes("cannot be checked against the server") && d.message.includes("refused"),
        ),
        JSON.stringify(after),
      );
    } finally {
      if (!closed) await own.close();
    }
  });
});
