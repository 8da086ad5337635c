// The one schema resolution order: buf curl's rules for --schema and --reflect, and the workspace
// only for requests that name no schema.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reflectionOn, schemaResolutionOrder } from "../../../src/core/schema/resolution-order";

describe("schema resolution order", () => {
  it("without --schema: reflection, then the workspace when the front end has one", () => {
    assert.deepEqual(schemaResolutionOrder({ schemas: [] }, { workspace: true }), [
      { kind: "reflection" },
      { kind: "workspace" },
    ]);
    assert.deepEqual(schemaResolutionOrder({ schemas: [] }, { workspace: false }), [{ kind: "reflection" }]);
  });

  it("with --schema: those schemas in order, no reflection and no workspace (as buf curl)", () => {
    assert.deepEqual(schemaResolutionOrder({ schemas: ["a.binpb", "b"] }, { workspace: true }), [
      { kind: "schema", spec: "a.binpb" },
      { kind: "schema", spec: "b" },
    ]);
    assert.equal(reflectionOn({ schemas: ["a.binpb"] }), false);
  });

  it("an explicit --reflect with --schema asks reflection first, then the schemas", () => {
    assert.deepEqual(schemaResolutionOrder({ schemas: ["a.binpb"], reflect: true }, { workspace: true }), [
      { kind: "reflection" },
      { kind: "schema", spec: "a.binpb" },
    ]);
  });

  it("--reflect=false without --schema leaves only the workspace", () => {
    assert.deepEqual(schemaResolutionOrder({ schemas: [], reflect: false }, { workspace: true }), [
      { kind: "workspace" },
    ]);
    assert.deepEqual(schemaResolutionOrder({ schemas: [], reflect: false }, { workspace: false }), []);
  });
});
