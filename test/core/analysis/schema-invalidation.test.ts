// The language server's settings arrive while the first workspace build is still running (VS Code
// sends them right after start-up), which invalidates the schema store and closes the sources of
// that build once it is done. A look-up started on those sources must not answer "… is closed", nor
// leave that answer cached for the requests after it.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { TextDocument } from "vscode-languageserver-textdocument";
import { Analyzer } from "../../../src/core/analysis/analysis";
import { requestSchema } from "../../../src/core/analysis/request-schema";
import { SchemaStore } from "../../../src/core/analysis/schema-store";
import { defaultSettings } from "../../../src/core/analysis/settings";
import { defaultCurlOptions } from "../../../src/core/invoke/options";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { createWorkspace } from "../../server/workspace";
import { bufPath } from "../../support/buf";

describe("schema store invalidated while a schema is read", { timeout: 120_000 }, () => {
  let dir: string;
  const settings = { ...defaultSettings(), bufPath, reflection: false };

  before(() => {
    dir = createWorkspace();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("a schema assembled across an invalidation is assembled again from the new sources", async () => {
    const store = new SchemaStore(settings, () => {});
    try {
      store.setFolders([dir]);
      const options = defaultCurlOptions();
      const pending = requestSchema(store, options, dir);
      // New settings while the build runs: its sources are closed once it is done.
      store.setSettings({ ...settings, reflectionTimeoutMs: 1234 });
      const first = await pending;
      assert.equal(first.generation, store.currentGeneration);
      const lookup = await store.findService(first, "acme.v1.ShopService");
      assert.deepEqual(lookup.failures, []);
      assert.equal(lookup.service?.typeName, "acme.v1.ShopService");
      // And a schema read afterwards finds it too (no failure cached under the new generation).
      const again = await store.findService(await requestSchema(store, options, dir), "acme.v1.ShopService");
      assert.deepEqual(again.failures, []);
      assert.equal(again.service?.typeName, "acme.v1.ShopService");
    } finally {
      await store.close();
    }
  });

  it("a request's analysis from before an invalidation is computed again", async () => {
    const store = new SchemaStore(settings, () => {});
    try {
      store.setFolders([dir]);
      const analyzer = new Analyzer(store);
      const doc = TextDocument.create(
        pathToFileURL(join(dir, "shop.rpc")).href,
        "rpc",
        1,
        'http://127.0.0.1:1/acme.v1.ShopService/PlaceOrder\n\n{"item": "book"}\n',
      );
      const [request] = parseRpcFile(doc.getText()).requests;
      const before = await analyzer.request(doc, request);
      assert.equal(before.method?.name, "PlaceOrder");
      // The files changed (no analyzer reset yet): the old sources are closed.
      store.invalidate(false);
      const after = await analyzer.request(doc, request);
      assert.notEqual(after, before);
      assert.equal(after.schema?.generation, store.currentGeneration);
      assert.deepEqual(after.lookup?.failures, []);
      assert.equal(after.method?.name, "PlaceOrder");
    } finally {
      await store.close();
    }
  });
});
