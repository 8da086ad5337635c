import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { create, createFileRegistry, createRegistry, type DescFile } from "@bufbuild/protobuf";
import * as wkt from "@bufbuild/protobuf/wkt";
import { DurationSchema, FileDescriptorProtoSchema, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { WELL_KNOWN_PACKAGE_ROOTS, wellKnownFiles } from "../../../src/core/schema/well-known-files";
import {
  createWellKnownSource,
  mayBeWellKnown,
  wellKnownRegistry,
  withWellKnownTypes,
} from "../../../src/core/schema/wkt-source";

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

describe("the well-known types behind a registry", () => {
  // A schema's own google.protobuf.Empty (with a field) wins over the runtime's; acme.v1.Thing is its own.
  const mine = createFileRegistry(
    create(FileDescriptorProtoSchema, {
      name: "mine/empty.proto",
      package: "google.protobuf",
      syntax: "proto3",
      messageType: [
        {
          name: "Empty",
          field: [{ name: "note", number: 1, type: 9, label: 1, jsonName: "note" }],
        },
      ],
    }),
    () => undefined,
  );
  const own = createRegistry(mine, DurationSchema);

  test("answers what createRegistry(wellKnownRegistry(), own) answers", () => {
    const layered = withWellKnownTypes(own);
    const eager = createRegistry(wellKnownRegistry(), own);
    const names = [...eager].map((d) => d.typeName).sort();
    assert.deepEqual([...layered].map((d) => d.typeName).sort(), names);
    for (const name of [...names, "acme.v1.Nope", "google.protobuf.Nope", "pb.nope"]) {
      assert.equal(layered.get(name), eager.get(name), name);
      assert.equal(layered.getMessage(name), eager.getMessage(name), name);
      assert.equal(layered.getEnum(name), eager.getEnum(name), name);
      assert.equal(layered.getExtension(name), eager.getExtension(name), name);
      assert.equal(layered.getService(name), eager.getService(name), name);
    }
    assert.equal(layered.getMessage("google.protobuf.Empty")?.fields.length, 1);
    const featureSet = eager.getMessage("google.protobuf.FeatureSet");
    assert.ok(featureSet);
    assert.equal(layered.getExtensionFor(featureSet, 1000)?.typeName, "pb.cpp");
    assert.equal(layered.getExtensionFor(featureSet, 4242), undefined);
  });

  test("a name outside the well-known packages never reaches them", () => {
    for (const name of ["acme.v1.Thing", "googleapis.Thing", "pbx.Thing", "Thing"]) {
      assert.equal(mayBeWellKnown(name), false, name);
    }
    for (const name of ["google.protobuf.Any", "google", "pb.cpp", "google.protobuf.compiler.Version"]) {
      assert.equal(mayBeWellKnown(name), true, name);
    }
  });
});

describe("well-known files", () => {
  test("lists every well-known file of the runtime under its import path", () => {
    const runtime = Object.entries(wkt)
      .filter(([k]) => k.startsWith("file_"))
      .map(([, f]) => (f as DescFile).proto.name)
      .sort();
    assert.deepEqual([...wellKnownFiles().keys()].sort(), runtime);
    for (const name of runtime) {
      assert.equal(wellKnownFiles().has(name), true);
      assert.equal(wellKnownFiles().get(name)?.proto.name, name);
    }
    assert.equal(wellKnownFiles().has("google/protobuf/nope.proto"), false);
    assert.equal(wellKnownFiles().get("google/protobuf/nope.proto"), undefined);
  });

  test("every package of the well-known files starts with one of the listed roots", () => {
    for (const file of wellKnownFiles().values()) {
      assert.ok(WELL_KNOWN_PACKAGE_ROOTS.has(file.proto.package.split(".")[0]), file.proto.package);
    }
  });
});
