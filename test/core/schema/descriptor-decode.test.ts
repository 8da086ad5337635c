// The descriptor.proto decoder must give what fromBinary gives, property for property (prototypes,
// own properties, unknown fields), on real descriptors, hand-made edge cases and damaged bytes, and
// its tables must match the descriptor.proto that @bufbuild/protobuf embeds.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import {
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import {
  createDescriptorMessage,
  decodeFileDescriptorProto,
  decodeFileDescriptorSet,
  isDescriptorFieldSet,
} from "../../../src/core/schema/descriptor-decode";
import { wellKnownFiles } from "../../../src/core/schema/well-known-files";
import { difference } from "../../support/descriptor-compare";
import { acmeFiles, buildSet } from "./descriptor-set-fixtures";

const root = join(import.meta.dirname, "../../..");

/** Both decoders on the same bytes: equal results, or the same error. */
function assertSame(bytes: Uint8Array, label: string): "decoded" | "failed" {
  let expected: unknown;
  let expectedError: string | undefined;
  try {
    expected = fromBinary(FileDescriptorProtoSchema, bytes);
  } catch (err) {
    expectedError = String(err);
  }
  let actual: unknown;
  let actualError: string | undefined;
  try {
    actual = decodeFileDescriptorProto(bytes);
  } catch (err) {
    actualError = String(err);
  }
  assert.equal(actualError, expectedError, `${label}: errors differ`);
  if (expectedError) return "failed";
  assert.equal(difference(actual, expected), undefined, `${label}: results differ`);
  return "decoded";
}

/** A proto2 file, an editions file and custom options: presence, defaults, features, extensions. */
const richFiles: Record<string, string> = {
  ...acmeFiles,
  "rich/v1/opts.proto": `syntax = "proto2";
package rich.v1;

import "google/protobuf/descriptor.proto";

extend google.protobuf.FieldOptions {
  optional string label = 51234;
  repeated int32 codes = 51235 [packed = true];
}
extend google.protobuf.MessageOptions {
  optional Rule rule = 51236;
}
message Rule {
  optional string expr = 1;
  optional int64 limit = 2 [default = -7];
}

message Legacy {
  option deprecated = true;
  option (rule) = { expr: "x > 1", limit: 9 };
  optional string name = 1 [default = "anon", (label) = "the name", (codes) = 1, (codes) = 2];
  optional double ratio = 2 [default = 0.5, json_name = "r"];
  repeated int32 ids = 3 [packed = true, deprecated = true];
  optional bytes raw = 4 [default = "\\001\\002"];
  optional Kind kind = 5 [default = B];
  enum Kind { A = 1; B = 2; }
  oneof choice { string text = 6; int32 count = 7; }
  reserved 10 to 12;
  reserved "old";
  extensions 100 to 199;
}
`,
  "rich/v1/edition.proto": `edition = "2023";
package rich.v1;

option features.field_presence = IMPLICIT;

message Modern {
  string a = 1 [features.field_presence = EXPLICIT];
  repeated int32 b = 2 [features.repeated_field_encoding = EXPANDED];
  Inner inner = 3 [features.message_encoding = DELIMITED];
  message Inner { int32 x = 1; }
}

enum Closed {
  option features.enum_type = CLOSED;
  CLOSED_ONE = 1;
}

service ModernService {
  rpc Do(Modern) returns (Modern) { option idempotency_level = NO_SIDE_EFFECTS; }
}
`,
};

let files: Uint8Array[];

before(async () => {
  const set = fromBinary(FileDescriptorSetSchema, await buildSet(richFiles, ["--as-file-descriptor-set"]));
  files = [
    ...set.file.map((f) => toBinary(FileDescriptorProtoSchema, f)),
    ...[...wellKnownFiles().values()].map((f) => toBinary(FileDescriptorProtoSchema, f.proto)),
  ];
});

describe("descriptor.proto decoder", () => {
  test("decodes every file of a real set (source info, proto2, editions, custom options) as fromBinary does", () => {
    assert.ok(files.length >= 18, `${files.length} files`);
    for (const [i, bytes] of files.entries()) assert.equal(assertSame(bytes, `file ${i}`), "decoded");
    // The fixtures reach what the decoder must keep: unknown fields (custom options) and source info.
    const decoded = files.map(decodeFileDescriptorProto);
    const legacy = decoded.find((f) => f.name === "rich/v1/opts.proto") as FileDescriptorProto;
    const nameField = legacy.messageType.find((m) => m.name === "Legacy")?.field[0];
    assert.ok(nameField?.options?.$unknown?.some((u) => u.no === 51234));
    assert.ok(legacy.sourceCodeInfo && legacy.sourceCodeInfo.location.length > 0);
    assert.equal(nameField?.defaultValue, "anon");
  });

  test("a set decodes as fromBinary decodes it", async () => {
    const bytes = await buildSet(richFiles);
    assert.equal(
      difference(decodeFileDescriptorSet(bytes), fromBinary(FileDescriptorSetSchema, bytes)),
      undefined,
    );
  });

  test("edge cases: unknown enum values, packed and expanded lists, merged messages, unknown groups", () => {
    const w = new BinaryWriter();
    w.tag(1, WireType.LengthDelimited).string("edge.proto");
    // public_dependency expanded, then packed
    w.tag(10, WireType.Varint).int32(3);
    w.tag(10, WireType.LengthDelimited).fork().int32(1).int32(-2).join();
    // an unknown closed-enum value for edition, and an unknown field with a group inside
    w.tag(14, WireType.Varint).int32(12345);
    w.tag(99, WireType.StartGroup).tag(1, WireType.Varint).int32(5).tag(99, WireType.EndGroup);
    // options given twice: the second merges into the first
    w.tag(8, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string("a.b").join();
    w.tag(8, WireType.LengthDelimited).fork().tag(8, WireType.LengthDelimited).string("Outer").join();
    // an uninterpreted option (its bytes and 64-bit fields stay zero values on the prototype)
    w.tag(8, WireType.LengthDelimited)
      .fork()
      .tag(999, WireType.LengthDelimited)
      .fork()
      .tag(3, WireType.LengthDelimited)
      .string("x")
      .join()
      .join();
    // a message with a field whose type is unknown (negative) and an unknown enum value alone
    w.tag(4, WireType.LengthDelimited)
      .fork()
      .tag(1, WireType.LengthDelimited)
      .string("M")
      .tag(2, WireType.LengthDelimited)
      .fork()
      .tag(5, WireType.Varint)
      .int32(-1)
      .tag(4, WireType.Varint)
      .int32(77)
      .join()
      .join();
    const bytes = w.finish();
    assert.equal(assertSame(bytes, "edge cases"), "decoded");
    const d = decodeFileDescriptorProto(bytes);
    assert.deepEqual(d.publicDependency, [3, 1, -2]);
    assert.equal(d.options?.javaPackage, "a.b");
    assert.equal(d.options?.javaOuterClassname, "Outer");
    assert.equal(d.options?.uninterpretedOption[0].identifierValue, "x");
    assert.deepEqual(
      d.messageType[0].field[0].$unknown?.map((u) => u.no),
      [5, 4],
    );
  });

  test("damaged files fail as fromBinary fails, or decode the same (2,000 mutations)", () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed;
    };
    const outcomes = { decoded: 0, failed: 0 };
    for (let i = 0; i < 2000; i++) {
      const source = files[next() % files.length];
      const bytes = new Uint8Array(source);
      const edits = 1 + (next() % 4);
      for (let e = 0; e < edits; e++) bytes[next() % bytes.length] = next() & 0xff;
      const cut = next() % 3 === 0 ? bytes.subarray(0, next() % bytes.length) : bytes;
      outcomes[assertSame(cut, `mutation ${i}`)]++;
    }
    assert.ok(outcomes.decoded > 100 && outcomes.failed > 100, JSON.stringify(outcomes));
  });

  test("deep nesting fails at fromBinary's recursion limit, with its message", () => {
    // DescriptorProto.nested_type 120 deep
    let inner = new Uint8Array(0);
    for (let i = 0; i < 120; i++) {
      inner = new BinaryWriter().tag(3, WireType.LengthDelimited).bytes(inner).finish();
    }
    const bytes = new BinaryWriter().tag(4, WireType.LengthDelimited).bytes(inner).finish();
    assert.equal(assertSame(bytes, "deep"), "failed");
    assert.throws(() => decodeFileDescriptorProto(bytes), /maximum recursion depth of 100/);
  });

  test("created messages and presence follow create() and isFieldSet()", () => {
    const oneof = createDescriptorMessage<{ $typeName: string; name: string }>(
      "google.protobuf.OneofDescriptorProto",
      { name: "_x" },
    );
    assert.equal(oneof.$typeName, "google.protobuf.OneofDescriptorProto");
    assert.equal(oneof.name, "_x");
    const field = createDescriptorMessage<{ label: number; type: number; jsonName: string }>(
      "google.protobuf.FieldDescriptorProto",
    );
    // proto2 zero values: the enums' first values, not 0
    assert.equal(field.label, 1);
    assert.equal(field.type, 1);
    assert.equal(isDescriptorFieldSet(field, "label"), false);
    assert.equal(isDescriptorFieldSet(field, "jsonName"), false);
    const decoded = decodeFileDescriptorProto(files[0]);
    const f = decoded.messageType[0].field[0];
    assert.equal(isDescriptorFieldSet(f, "name"), true);
    assert.equal(isDescriptorFieldSet(f, "oneofIndex"), Object.hasOwn(f, "oneofIndex"));
    assert.throws(() => createDescriptorMessage("google.protobuf.Nope"), /not a message of/);
  });

  test("the table matches the descriptor.proto that @bufbuild/protobuf embeds", async () => {
    const { descriptorTable, render } = await import(join(root, "scripts/gen-descriptor-table.mjs"));
    const committed = readFileSync(join(root, "src/core/schema/descriptor-table.ts"), "utf8");
    assert.equal(
      render(descriptorTable()),
      committed,
      "src/core/schema/descriptor-table.ts is out of date: run node scripts/gen-descriptor-table.mjs",
    );
  });
});
