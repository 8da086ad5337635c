// Parity with `buf curl` for how responses print: every field kind of demo.v1.Everything, the
// well-known types, map and field order, number formats, --emit-defaults, empty streams and -o.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type DemoServer, startDemoServer } from "../support/servers";
import { assertParity } from "./harness";

// Each value goes to Echo and comes back: protocall parses it, the server returns it, protocall prints it.
const echoed: [string, unknown][] = [
  ["empty message", {}],
  ["scalars", { text: 'héllo \u2028 "q" \\ <>&', flag: true, int32Value: -1, uint32Value: 4294967295 }],
  [
    "64-bit integers",
    {
      int64Value: "-9223372036854775808",
      uint64Value: "18446744073709551615",
      sint64Value: 5,
      fixed64Value: "1",
      sfixed64Value: -2,
    },
  ],
  ["integers given as strings and floats", { int32Value: "12", int64Value: 1e3, uint32Value: "7" }],
  ["doubles", { doubleValue: 0.1 }],
  ["large and small doubles", { doubleValue: 1e21, wrappedDouble: 1e-7 }],
  ["special doubles", { doubleValue: "NaN", wrappedDouble: "-Infinity" }],
  ["floats", { floatValue: 0.1 }],
  ["float precision", { floatValue: 3.4028234663852886e38 }],
  ["bytes, standard and URL-safe base64", { data: "AP8-_w==", wrappedBytes: "AP8+/w" }],
  ["enums by name and number", { color: 2, size: "SIZE_SMALL", colors: ["COLOR_RED", 3] }],
  ["unknown enum number", { color: 42 }],
  [
    "nested and repeated messages",
    {
      nested: { name: "n", values: [3, 2, 1], child: { child: { name: "deep" } } },
      items: [{}, { name: "x" }],
    },
  ],
  [
    "maps in insertion order b, a",
    { counts: { b: "1", a: "2", "": "0" }, colorByName: { z: "COLOR_RED", y: 1 } },
  ],
  ["map with integer keys", { byId: { "10": { name: "ten" }, "2": { name: "two" }, "-1": {} } }],
  ["oneof set to a zero value", { choiceNumber: "0" }],
  ["oneof message", { choiceNested: {} }],
  ["proto3 optional zero values", { maybeText: "", maybeNumber: 0 }],
  ["timestamps", { createdAt: "1970-01-01T00:00:00Z" }],
  ["timestamp with nanoseconds and offset", { createdAt: "2024-02-29T23:59:59.123456789+01:00" }],
  ["durations", { ttl: "-1.5s" }],
  ["duration with nanoseconds", { ttl: "0.000000001s" }],
  ["struct", { attributes: { a: 1, b: [true, null, "s", { c: {} }], e: 1.5e300 } }],
  ["value null", { value: null }],
  ["value number and list", { value: 3.5, list: [1, "a", null, [], {}] }],
  ["any with a demo message", { extra: { "@type": "type.googleapis.com/demo.v1.GreetRequest", name: "n" } }],
  [
    "any with a well-known type",
    { extra: { "@type": "type.googleapis.com/google.protobuf.Duration", value: "2s" } },
  ],
  [
    "any with a nested any",
    {
      extra: {
        "@type": "type.googleapis.com/google.protobuf.Any",
        value: { "@type": "type.googleapis.com/demo.v1.Everything", text: "in" },
      },
    },
  ],
  ["wrappers with zero values", { wrappedText: "", wrappedInt64: "0", wrappedBool: false, wrappedDouble: 0 }],
  ["field mask", { mask: "a,bC.d,e_f" }],
  ["empty", { nothing: {} }],
  [
    "deprecated field and json_name",
    { legacyName: "old", customJsonName: 7, late_field: "proto name accepted" },
  ],
];

describe("parity: output formatting", { concurrency: 4, timeout: 300_000 }, () => {
  let server: DemoServer;
  before(async () => {
    server = await startDemoServer();
  });
  after(() => server?.close());

  const echo = () => `${server.url}/demo.v1.DemoService/Echo`;

  for (const [name, value] of echoed) {
    test(`Echo: ${name}`, async () => {
      await assertParity(["-d", JSON.stringify(value), echo()]);
    });
    test(`Echo --emit-defaults: ${name}`, async () => {
      await assertParity(["--emit-defaults", "-d", JSON.stringify(value), echo()]);
    });
  }

  test("Sample: every field set, over each protocol", async () => {
    for (const protocol of ["connect", "grpc", "grpcweb"]) {
      await assertParity(["--protocol", protocol, "-d", "{}", `${server.url}/demo.v1.DemoService/Sample`], {
        code: 0,
      });
    }
  });

  test("no data sends one empty message; an empty stream prints nothing", async () => {
    await assertParity([echo()], { code: 0 });
    await assertParity(["--emit-defaults", echo()], { code: 0 });
    await assertParity(["-d", "", echo()], { code: 0 });
    await assertParity([`${server.url}/demo.v1.DemoService/Count`], { code: 0 });
    await assertParity(["--emit-defaults", "-d", '{"count": 2}', `${server.url}/demo.v1.DemoService/Count`], {
      code: 0,
    });
    await assertParity([`${server.url}/demo.v1.DemoService/Sum`], { code: 0 });
    await assertParity([`${server.url}/demo.v1.DemoService/Chat`], { code: 0 });
  });

  test("-o writes the responses to a file and nothing to stdout", async () => {
    const dir = mkdtempSync(join(tmpdir(), "protocall-parity-out-"));
    const ours = join(dir, "ours.json");
    const theirs = join(dir, "buf.json");
    const args = (file: string) => [
      "-o",
      file,
      "-d",
      '{"count": 2, "text": "t"}',
      `${server.url}/demo.v1.DemoService/Count`,
    ];
    const { runBufCurl } = await import("../support/buf");
    const { runCli } = await import("../support/cli");
    const [a, b] = await Promise.all([runCli(["curl", ...args(ours)]), runBufCurl(args(theirs))]);
    assert.equal(a.code, b.code);
    assert.equal(a.stdout, "");
    assert.equal(b.stdout, "");
    assert.equal(readFileSync(ours, "utf8"), readFileSync(theirs, "utf8"));
  });

  test("bad request data fails with exit code 1", async () => {
    await assertParity(["-d", '{"noSuchField": 1}', echo()], { code: 1 });
    await assertParity(["-d", '{"text": 1}', echo()], { code: 1 });
    await assertParity(["-d", '{"text": "a"', echo()], { code: 1 });
    await assertParity(["-d", '{"text": "a"} {"text": "b"}', echo()], { code: 1 });
    await assertParity(["-d", '{"int32Value": 1.5}', echo()], { code: 1 });
    await assertParity(["-d", '{"color": "COLOR_PURPLE"}', echo()], { code: 1 });
    await assertParity(["-d", "[1]", echo()], { code: 1 });
  });
});
