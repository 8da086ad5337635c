// The one list of wrapper types against the runtime's google/protobuf/wrappers.proto: every wrapper
// message is listed with the scalar type of its `value` field, and nothing else is listed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { file_google_protobuf_wrappers } from "@bufbuild/protobuf/wkt";
import { wrappedScalar, wrapperScalars, wrapperTypeNames } from "../../../src/core/schema/wrapper-types";

test("the wrapper list is exactly wrappers.proto's messages, each with its value's scalar", () => {
  const fromProto: Record<string, number> = {};
  for (const message of file_google_protobuf_wrappers.messages) {
    const value = message.fields.find((f) => f.name === "value");
    assert.equal(value?.fieldKind, "scalar", message.typeName);
    fromProto[message.typeName] = value.scalar;
  }
  assert.equal(Object.keys(fromProto).length, 9);
  assert.deepEqual({ ...wrapperScalars }, fromProto);
  assert.deepEqual([...wrapperTypeNames].sort(), Object.keys(fromProto).sort());
});

test("wrappedScalar answers for wrappers only", () => {
  assert.equal(wrappedScalar("google.protobuf.BoolValue"), wrapperScalars["google.protobuf.BoolValue"]);
  assert.equal(wrappedScalar("google.protobuf.Timestamp"), undefined);
  assert.equal(wrappedScalar("toString"), undefined);
});
