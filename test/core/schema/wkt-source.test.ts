import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { createWellKnownSource } from "../../../src/core/schema/wkt-source";

describe("well-known types source", () => {
  test("finds the runtime's own well-known descriptors", async () => {
    const source = createWellKnownSource();
    assert.equal(source.label, "well-known types");
    assert.equal(await source.findType("google.protobuf.Timestamp"), TimestampSchema);
    assert.equal((await source.findType("google.protobuf.NullValue"))?.kind, "enum");
    assert.equal((await source.findType("google.protobuf.compiler.CodeGeneratorRequest"))?.kind, "message");
    assert.equal(await source.findType("acme.v1.Nope"), undefined);
    assert.equal(
      (await source.findFile("google.protobuf.Duration"))?.proto.name,
      "google/protobuf/duration.proto",
    );
    assert.deepEqual(await source.listServices(), []);
    await source.close();
  });

  test("finds extensions by extendee and number", async () => {
    const source = createWellKnownSource();
    // google/protobuf/cpp_features.proto: extend FeatureSet { CppFeatures cpp = 1000; }
    assert.equal((await source.findExtension("google.protobuf.FeatureSet", 1000))?.typeName, "pb.cpp");
    assert.equal(await source.findExtension("google.protobuf.FeatureSet", 4242), undefined);
    assert.equal(await source.findExtension("acme.v1.Nope", 1000), undefined);
  });
});
