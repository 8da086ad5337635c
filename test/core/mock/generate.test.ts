// Generated answers: valid messages of their type (they read back with fromJson), plausible values,
// the same for the same seed and index, different for another seed or index.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fromJson, type JsonObject } from "@bufbuild/protobuf";
import { generateMessage } from "../../../src/core/mock/generate";
import { EverythingSchema } from "../../../src/gen/demo/v1/types_pb";
import { demoSchema } from "./support";

test("every message of the demo schema is generated as valid proto JSON of its type", () => {
  let n = 0;
  for (const type of demoSchema.registry) {
    if (type.kind !== "message") continue;
    const json = generateMessage(type, { seed: 3 });
    fromJson(type, json, { registry: demoSchema.registry });
    n++;
  }
  assert.ok(n > 10);
});

test("values are plausible for their type: well-known types in their JSON forms, enums other than zero, names by the field's name", () => {
  const json = generateMessage(EverythingSchema, { seed: 1 }) as JsonObject;
  assert.match(String(json.createdAt), /^2026-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.match(String(json.ttl), /^\d+s$/);
  assert.match(String(json.int64Value), /^\d+$/);
  assert.notEqual(json.color, "COLOR_UNSPECIFIED");
  assert.ok(Array.isArray(json.tags) && json.tags.length >= 1);
  const nested = json.nested as JsonObject;
  assert.match(String(nested.name), /^[A-Z][a-z]+ [A-Z][a-z]+$/);
});

test("deterministic for a seed: the same seed and index give the same message, another seed or index another", () => {
  const a = generateMessage(EverythingSchema, { seed: 42 });
  assert.deepEqual(generateMessage(EverythingSchema, { seed: 42 }), a);
  assert.notDeepEqual(generateMessage(EverythingSchema, { seed: 43 }), a);
  assert.notDeepEqual(generateMessage(EverythingSchema, { seed: 42, index: 1 }), a);
});
