// Hover text is remembered per schema, but not when a source failed while it was looked up: the next
// hover asks that source again, so a server that was down a moment ago still gets its comments shown.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hoverMarkdown } from "../../../src/core/analysis/schema-docs";
import { SchemaStore } from "../../../src/core/analysis/schema-store";
import { defaultSettings } from "../../../src/core/analysis/settings";
import { openDescriptorSetFile } from "../../../src/core/schema/descriptor-set-source";
import type { FileSource } from "../../../src/core/schema/types";
import { GreetRequestSchema } from "../../../src/gen/demo/v1/greet_pb";
import { demoDescriptorSet } from "../../support/servers";

/** A source whose first look-up fails, as a server that is not reachable yet. */
function failingOnce(source: FileSource): FileSource {
  let failed = false;
  return new Proxy(source, {
    get(target, prop, receiver) {
      if (prop === "findFile") {
        return async (name: string) => {
          if (!failed) {
            failed = true;
            throw new Error("connection refused");
          }
          return target.findFile(name);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("hover text cache", { timeout: 60_000 }, () => {
  it("is not kept when a source failed, and is kept once all answered", async () => {
    const source = await openDescriptorSetFile(await demoDescriptorSet());
    const store = new SchemaStore({ ...defaultSettings(), workspaceBuild: false }, () => {});
    try {
      const failing = failingOnce(source);
      const schema = {
        key: "test",
        generation: 0,
        sources: [failing],
        docSources: [failing],
        problems: [],
        incomplete: [],
      };
      const first = await hoverMarkdown(store, schema, "demo.v1.GreetRequest", GreetRequestSchema);
      assert.match(first, /GreetRequest/);
      assert.doesNotMatch(first, /names the person to greet/);
      const second = await hoverMarkdown(store, schema, "demo.v1.GreetRequest", GreetRequestSchema);
      assert.match(second, /GreetRequest names the person to greet/);
      const third = await hoverMarkdown(store, schema, "demo.v1.GreetRequest", GreetRequestSchema);
      assert.equal(third, second);
    } finally {
      await store.close();
      await source.close();
    }
  });
});
