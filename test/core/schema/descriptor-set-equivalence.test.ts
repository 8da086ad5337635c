// The lazy descriptor-set source against a full decode of the same real-world set (a slice of
// google-proto-files built with buf): every service, message, enum and extension must come out the
// same, whatever the order of the files in the set.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { before, test } from "node:test";
import {
  createFileRegistry,
  type DescEnum,
  type DescExtension,
  type DescField,
  type DescMessage,
  type DescService,
  fromBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { getComments } from "@bufbuild/protoplugin";
import { openDescriptorSetBytes } from "../../../src/core/schema/descriptor-set-source";
import { runBuf } from "../../support/buf";
import { reorderSet } from "./descriptor-set-fixtures";

let bytes: Uint8Array;

before(async () => {
  const require = createRequire(__filename);
  const root = dirname(require.resolve("google-proto-files/package.json"));
  const dir = mkdtempSync(join(tmpdir(), "protocall-gpf-"));
  try {
    const out = join(dir, "slice.binpb");
    const paths = ["google/pubsub/v1", "google/cloud/kms/v1", "google/cloud/tasks/v2"];
    const r = await runBuf(["build", root, ...paths.flatMap((p) => ["--path", join(root, p)]), "-o", out], {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stderr);
    bytes = new Uint8Array(readFileSync(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function fieldShape(f: DescField | DescExtension) {
  return {
    name: f.name,
    number: f.number,
    kind: f.fieldKind,
    json: f.jsonName,
    message: f.message?.typeName,
    enum: f.enum?.typeName,
    scalar: f.scalar,
  };
}

function shape(desc: DescMessage | DescEnum | DescService | DescExtension): unknown {
  switch (desc.kind) {
    case "message":
      return {
        kind: desc.kind,
        name: desc.typeName,
        fields: desc.fields.map(fieldShape),
        oneofs: desc.oneofs.map((o) => [o.name, o.fields.map((f) => f.name)]),
      };
    case "enum":
      return { kind: desc.kind, name: desc.typeName, values: desc.values.map((v) => [v.name, v.number]) };
    case "service":
      return {
        kind: desc.kind,
        name: desc.typeName,
        methods: desc.methods.map((m) => [m.name, m.methodKind, m.input.typeName, m.output.typeName]),
      };
    case "extension":
      return { ...fieldShape(desc), typeName: desc.typeName, extendee: desc.extendee.typeName };
  }
}

test("every type of a real set resolves lazily exactly as a full decode has it, in any file order", {
  timeout: 60_000,
}, async () => {
  const full = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
  const types = [...full];
  assert.ok(types.length > 300, `only ${types.length} types`);
  const services = types.filter((t) => t.kind === "service").map((t) => t.typeName);
  for (const input of [bytes, reorderSet(bytes, (files) => [...files].reverse())]) {
    const lazy = openDescriptorSetBytes(input, "google-proto-files slice");
    assert.deepEqual(await lazy.listServices(), [...services].sort());
    for (const want of types) {
      const got = await lazy.findType(want.typeName);
      assert.ok(got, `${want.typeName} not found`);
      assert.deepEqual(shape(got), shape(want), want.typeName);
    }
    for (const ext of types.filter((t): t is DescExtension => t.kind === "extension")) {
      const got = await lazy.findExtension(ext.extendee.typeName, ext.number);
      assert.equal(got?.typeName, ext.typeName);
    }
    await lazy.close();
  }
});

test("comments come with findFile, the same as in the full decode", { timeout: 60_000 }, async () => {
  const full = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
  const lazy = openDescriptorSetBytes(bytes, "google-proto-files slice");
  for (const want of [...full].filter((t): t is DescService => t.kind === "service")) {
    const file = await lazy.findFile(want.typeName);
    const got = file?.services.find((s) => s.typeName === want.typeName);
    assert.ok(got, want.typeName);
    assert.equal(getComments(got).leading, getComments(want).leading);
    for (let i = 0; i < want.methods.length; i++) {
      assert.equal(getComments(got.methods[i]).leading, getComments(want.methods[i]).leading);
    }
  }
  await lazy.close();
});
