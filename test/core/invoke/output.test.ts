// Response JSON must match `buf curl` byte for byte. The *.buf.txt fixtures are what buf 1.75 printed
// for the request in the matching .json fixture (echoed by demo.v1.DemoService/Echo).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createRegistry, fromJson } from "@bufbuild/protobuf";
import { file_google_protobuf_any, file_google_protobuf_duration } from "@bufbuild/protobuf/wkt";
import {
  formatDouble,
  formatFloat,
  formatJsonValue,
  formatMessageJson,
} from "../../../src/core/invoke/output";
import { file_demo_v1_greet } from "../../../src/gen/demo/v1/greet_pb";
import { EverythingSchema, file_demo_v1_types } from "../../../src/gen/demo/v1/types_pb";

const fixtures = join(__dirname, "fixtures");
const registry = createRegistry(file_demo_v1_types, file_demo_v1_greet, file_google_protobuf_duration);
const resolveAny = (name: string) => registry.getMessage(name);
const anyRegistry = createRegistry(registry, file_google_protobuf_any);

function echo(json: unknown, emitDefaults = false): string {
  const message = fromJson(EverythingSchema, json as never, { registry });
  return `${formatMessageJson(EverythingSchema, message, { emitDefaults, resolveAny })}\n`;
}

function fixture(name: string): string {
  return readFileSync(join(fixtures, name), "utf8");
}

test("a message with a field of every kind prints as buf prints it", () => {
  assert.equal(echo(JSON.parse(fixture("everything.json"))), fixture("everything.buf.txt"));
});

test("edge cases: NaN and infinities, -0, sorted map and Struct keys by UTF-8 bytes, WKTs in Any", () => {
  assert.equal(echo(JSON.parse(fixture("edge.json"))), fixture("edge.buf.txt"));
});

test("--emit-defaults on an empty message", () => {
  assert.equal(echo({}, true), fixture("everything-defaults.buf.txt"));
});

test("--emit-defaults inside set messages and maps; oneof and optional members stay out unless set", () => {
  const json = { nested: {}, choiceText: "", maybeNumber: 0, byId: { "1": {} } };
  assert.equal(echo(json, true), fixture("partial-defaults.buf.txt"));
});

test("an empty message is {}", () => {
  assert.equal(echo({}), "{}\n");
});

test("float32 values print with float32's shortest digits", () => {
  assert.equal(formatFloat(Math.fround(0.1)), "0.1");
  assert.equal(formatFloat(Math.fround(16777217)), "16777216");
  assert.equal(formatFloat(Math.fround(3.4028235e38)), "3.4028235e+38");
  assert.equal(formatFloat(Math.fround(1e-7)), "1e-7");
  assert.equal(formatFloat(Math.fround(123456.78)), "123456.78");
  assert.equal(formatFloat(-0), "-0");
  assert.equal(formatFloat(Number.NaN), '"NaN"');
});

test("doubles print like Go's protojson", () => {
  assert.equal(formatDouble(1e21), "1e+21");
  assert.equal(formatDouble(1e-7), "1e-7");
  assert.equal(formatDouble(0.000001), "0.000001");
  assert.equal(formatDouble(-0), "-0");
  assert.equal(formatDouble(Number.POSITIVE_INFINITY), '"Infinity"');
  assert.equal(formatDouble(Number.NEGATIVE_INFINITY), '"-Infinity"');
});

test("an Any whose type is unknown is an error that says how to fix it", () => {
  const message = fromJson(
    EverythingSchema,
    { extra: { "@type": "type.googleapis.com/demo.v1.GreetResponse", greeting: "x" } },
    { registry },
  );
  assert.throws(() => formatMessageJson(EverythingSchema, message), /unable to resolve .*--schema/);
});

test("plain JSON values use the same layout", () => {
  assert.equal(
    formatJsonValue({ a: [1, {}], b: [] }, "   "),
    '{\n   "a": [\n      1,\n      {}\n   ],\n   "b": []\n}',
  );
});

test("an Any holding an Any nests its value one level deeper", () => {
  const message = fromJson(
    EverythingSchema,
    {
      extra: {
        "@type": "type.googleapis.com/google.protobuf.Any",
        value: { "@type": "type.googleapis.com/demo.v1.GreetResponse", greeting: "in" },
      },
    },
    { registry: anyRegistry },
  );
  assert.equal(
    formatMessageJson(EverythingSchema, message, { resolveAny: (n) => anyRegistry.getMessage(n) }),
    '{\n  "extra": {\n    "@type": "type.googleapis.com/google.protobuf.Any",\n    "value": {\n      "@type": "type.googleapis.com/demo.v1.GreetResponse",\n      "greeting": "in"\n    }\n  }\n}',
  );
});
