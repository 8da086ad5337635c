// The service tree's levels over a real descriptor set (the example workspace built with buf):
// packages from the index, a service's methods with kinds, comments and name spans.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { openDescriptorSetFile } from "../../../src/core/schema/descriptor-set-source";
import {
  describeService,
  groupByPackage,
  listPackages,
  packageOf,
} from "../../../src/core/schema/service-tree";
import { demoDescriptorSet, examplesDir } from "../../support/servers";

describe("service tree", { timeout: 60_000 }, () => {
  it("groups services by package, sorted, with the empty package for services without one", () => {
    assert.equal(packageOf("a.b.Svc"), "a.b");
    assert.equal(packageOf("Svc"), "");
    assert.deepEqual(groupByPackage(["z.v1.B", "Top", "a.v1.Y", "z.v1.A"]), [
      { name: "", services: ["Top"] },
      { name: "a.v1", services: ["a.v1.Y"] },
      { name: "z.v1", services: ["z.v1.A", "z.v1.B"] },
    ]);
  });

  it("describes a service's methods with kinds, types, comments and the span of each name", async () => {
    const source = await openDescriptorSetFile(await demoDescriptorSet());
    try {
      assert.deepEqual(await listPackages(source), [
        { name: "demo.v1", services: ["demo.v1.DemoService", "demo.v1.GreetService"] },
      ]);
      const demo = await describeService(source, "demo.v1.DemoService");
      assert.ok(demo);
      assert.equal(demo.file, "demo/v1/demo.proto");
      const kinds = Object.fromEntries(demo.methods.map((m) => [m.name, m.kind]));
      assert.equal(kinds.Echo, "unary");
      assert.equal(kinds.Count, "server_streaming");
      assert.equal(kinds.Sum, "client_streaming");
      assert.equal(kinds.Chat, "bidi_streaming");
      const old = demo.methods.find((m) => m.name === "OldEcho");
      assert.equal(old?.deprecated, true);
      const text = readFileSync(`${examplesDir}/proto/demo/v1/demo.proto`, "utf8").split("\n");
      for (const m of demo.methods) {
        const span = m.declaration?.span;
        assert.ok(span, m.name);
        assert.equal(text[span.startLine].slice(span.startColumn, span.endColumn), m.name);
        assert.equal(m.fullName, `demo.v1.DemoService.${m.name}`);
      }
      const count = demo.methods.find((m) => m.name === "Count");
      assert.equal(count?.input, "demo.v1.CountRequest");
      assert.ok(count?.comment, "Count has a comment in demo.proto");
      assert.equal(count?.summary, count?.comment.split("\n")[0]);
      assert.equal(await describeService(source, "demo.v1.Nope"), undefined);
    } finally {
      await source.close();
    }
  });
});
