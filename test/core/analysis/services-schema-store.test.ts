// The schema store keeps what it opened when the client sends the same settings again (as VS Code
// does right after start-up), so the Services view does not wait for a large schema twice.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SchemaStore } from "../../../src/core/analysis/schema-store";
import { defaultSettings } from "../../../src/core/analysis/settings";
import { demoDescriptorSet } from "../../support/servers";

describe("schema store settings", { timeout: 60_000 }, () => {
  it("keeps its sources for equal settings and drops them for changed ones", async () => {
    const set = await demoDescriptorSet();
    const settings = { ...defaultSettings(), schemas: [set], workspaceBuild: false };
    const store = new SchemaStore(settings, () => {});
    try {
      const first = store.workspaceSources();
      const [opened] = await first;
      assert.ok(opened.source, opened.problem);
      assert.equal(opened.kind, "setting");
      assert.equal(opened.origin, set);
      store.setSettings({ ...defaultSettings(), schemas: [set], workspaceBuild: false });
      assert.equal(store.workspaceSources(), first);
      store.setSettings({
        ...defaultSettings(),
        schemas: [set],
        workspaceBuild: false,
        reflectionTimeoutMs: 1000,
      });
      assert.notEqual(store.workspaceSources(), first);
    } finally {
      await store.close();
    }
  });
});
