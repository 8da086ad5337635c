// Requirements of `protocall curl` checked against the real buf curl where its output is the
// reference: extension fields in responses print as "[pkg.ext]", undeclared fields are dropped and
// reported in verbose output by size, proto2 fields with presence print null under --emit-defaults,
// and a repeated -H name reaches the server as separate header fields.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createFileRegistry, fromBinary, type Message } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { registerReflection } from "../../../src/core/schema/reflection-server";
import { type DemoServer, startDemoServer } from "../../../src/demo/server";
import { runBuf, runBufCurl } from "../../support/buf";
import { curl } from "./support";

const PROTO = `syntax = "proto2";
package ext.v1;
message Thing {
  optional string name = 1;
  optional int32 count = 2;
  optional bool flag = 3;
  optional Inner inner = 4;
  repeated int32 nums = 5;
  optional int32 withdef = 6 [default = 7];
  required string req = 7;
  extensions 100 to 200;
}
message Inner {
  optional string x = 1;
  extensions 100 to 200;
}
extend Thing {
  optional string note = 100;
  optional Inner inner_ext = 101;
  repeated int32 rep_ext = 102;
}
extend Inner {
  optional int64 big = 100;
}
service EchoService { rpc Echo(Thing) returns (Thing); }
`;

let dir: string;
let schema: string;
let server: http.Server;
let url: string;
let demo: DemoServer;
let reflecting: http2.Http2Server;
let reflectUrl: string;

/** Undeclared field 300 (a string "abc"): 2 bytes of tag, 1 of length, 3 of data. */
const field300 = { no: 300, wireType: 2, data: new Uint8Array([3, 97, 98, 99]) };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "protocall-curl-responses-"));
  mkdirSync(join(dir, "ws/ext/v1"), { recursive: true });
  writeFileSync(join(dir, "ws/buf.yaml"), "version: v2\n");
  writeFileSync(join(dir, "ws/ext/v1/ext.proto"), PROTO);
  schema = join(dir, "ext.binpb");
  const built = await runBuf(["build", join(dir, "ws"), "-o", schema], { timeoutMs: 60_000 });
  assert.equal(built.code, 0, built.stderr);
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(schema)));
  const service = registry.getService("ext.v1.EchoService");
  assert.ok(service);
  // Echoes the request (extensions included, as undeclared fields pass through); a name of "unk"
  // or "unk-inner" adds an undeclared field at the top or in `inner`.
  const handler = connectNodeAdapter({
    routes: (router) =>
      router.service(service, {
        echo: (req: Message & { name?: string; inner?: Message }) => {
          if (req.name === "unk") req.$unknown = [...(req.$unknown ?? []), field300];
          if (req.name === "unk-inner" && req.inner) req.inner.$unknown = [field300];
          return req;
        },
      } as never),
  });
  server = http.createServer(handler);
  // The same service over h2c with server reflection: extensions are then found by reflection.
  const file = registry.getFile("ext/v1/ext.proto");
  assert.ok(file);
  reflecting = http2.createServer(
    connectNodeAdapter({
      routes: (router) => {
        router.service(service, { echo: (req: Message) => req } as never);
        registerReflection(router, [file]);
      },
    }),
  );
  await new Promise<void>((ok) => reflecting.listen(0, "127.0.0.1", ok));
  reflectUrl = `http://127.0.0.1:${(reflecting.address() as AddressInfo).port}/ext.v1.EchoService/Echo`;
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ext.v1.EchoService/Echo`;
  demo = await startDemoServer();
});

after(async () => {
  server?.closeAllConnections();
  await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
  await demo?.close();
  await new Promise<void>((ok) => (reflecting ? reflecting.close(() => ok()) : ok()));
  rmSync(dir, { recursive: true, force: true });
});

const withExtensions = JSON.stringify({
  req: "r",
  "[ext.v1.rep_ext]": [1, 2],
  "[ext.v1.note]": "hi",
  "[ext.v1.inner_ext]": { x: "y", "[ext.v1.big]": "9007199254740993" },
  inner: { "[ext.v1.big]": "5" },
});

describe("extension fields in responses", () => {
  test('print as "[pkg.ext]" after the declared fields, sorted by name, nested ones too', async () => {
    const r = await curl({ url, schemas: [schema], data: withExtensions });
    assert.equal(r.stderr, "");
    assert.equal(r.code, 0);
    assert.equal(
      r.stdout,
      [
        "{",
        '  "inner": {',
        '    "[ext.v1.big]": "5"',
        "  },",
        '  "req": "r",',
        '  "[ext.v1.inner_ext]": {',
        '    "x": "y",',
        '    "[ext.v1.big]": "9007199254740993"',
        "  },",
        '  "[ext.v1.note]": "hi",',
        '  "[ext.v1.rep_ext]": [',
        "    1,",
        "    2",
        "  ]",
        "}",
        "",
      ].join("\n"),
    );
  });

  test("print exactly as buf curl prints them, with and without --emit-defaults", async () => {
    for (const emitDefaults of [false, true]) {
      const ours = await curl({ url, schemas: [schema], data: withExtensions, emitDefaults });
      const args = ["--schema", schema, "-d", withExtensions, url];
      const theirs = await runBufCurl(emitDefaults ? ["--emit-defaults", ...args] : args, {
        timeoutMs: 20_000,
      });
      assert.equal(theirs.code, 0, theirs.stderr);
      assert.equal(ours.stdout, theirs.stdout, `--emit-defaults=${emitDefaults}`);
    }
  });
  test("are found through server reflection too", async () => {
    const schemaOut = await curl({ url, schemas: [schema], data: withExtensions });
    const r = await curl({ url: reflectUrl, data: withExtensions });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, schemaOut.stdout);
  });
});

describe("--emit-defaults with proto2 fields", () => {
  test("unset fields with presence print null (defaults ignored), lists [], as buf", async () => {
    const r = await curl({ url, schemas: [schema], data: '{"req":"r"}', emitDefaults: true });
    const expected = [
      "{",
      '  "name": null,',
      '  "count": null,',
      '  "flag": null,',
      '  "inner": null,',
      '  "nums": [],',
      '  "withdef": null,',
      '  "req": "r"',
      "}",
      "",
    ].join("\n");
    assert.equal(r.stdout, expected);
    const theirs = await runBufCurl(["--emit-defaults", "--schema", schema, "-d", '{"req":"r"}', url], {
      timeoutMs: 20_000,
    });
    assert.equal(theirs.stdout, expected);
  });
});

describe("undeclared response fields", () => {
  const line = (n: number) =>
    `protocall: Response message (ext.v1.Thing) contained ${n} bytes of unrecognized fields.`;

  test("are dropped from the output; verbose mode reports their size", async () => {
    const quiet = await curl({ url, schemas: [schema], data: '{"name":"unk","req":"r"}' });
    assert.equal(quiet.stdout, '{\n  "name": "unk",\n  "req": "r"\n}\n');
    assert.equal(quiet.stderr, "");
    const loud = await curl({ url, schemas: [schema], data: '{"name":"unk","req":"r"}', verbose: true });
    assert.equal(loud.stdout, quiet.stdout);
    assert.ok(loud.stderr.split("\n").includes(line(6)), loud.stderr);
  });

  test("inside nested messages count for the response message, as buf counts them", async () => {
    const data = '{"name":"unk-inner","req":"r","inner":{}}';
    const r = await curl({ url, schemas: [schema], data, verbose: true });
    assert.equal(r.stdout, '{\n  "name": "unk-inner",\n  "inner": {},\n  "req": "r"\n}\n');
    assert.ok(r.stderr.split("\n").includes(line(6)), r.stderr);
    const theirs = await runBufCurl(["-v", "--schema", schema, "-d", data, url], { timeoutMs: 20_000 });
    assert.ok(theirs.stderr.split("\n").includes(line(6).replace(/^protocall:/, "buf:")), theirs.stderr);
  });

  test("known extensions are not reported; nothing is reported without undeclared fields", async () => {
    for (const data of [withExtensions, '{"req":"r"}']) {
      const r = await curl({ url, schemas: [schema], data, verbose: true });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /unrecognized fields/);
    }
  });
});

describe("repeated header names", () => {
  const inspect = JSON.stringify({ headerNames: ["x-a", "x-b"] });
  const args = (protocol: "connect" | "grpc" | "grpcweb") => ({
    url: `${demo.url}/demo.v1.DemoService/Inspect`,
    protocol,
    data: inspect,
    headers: ["X-A: 1", "x-a:  2 ", "x-b: one, two"],
    verbose: true,
  });

  for (const protocol of ["connect", "grpc", "grpcweb"] as const) {
    test(`reach the server as separate header fields (${protocol}); commas are never split`, async () => {
      const r = await curl(args(protocol));
      assert.equal(r.code, 0, r.stderr);
      const got = JSON.parse(r.stdout) as { headers: { name: string; value: string }[] };
      assert.deepEqual(
        got.headers.map((h) => `${h.name}: ${h.value}`),
        ["x-a: 1", "x-a: 2", "x-b: one, two"],
      );
      const sent = r.stderr.split("\n").filter((l) => /^protocall: > \(#\d+\) X-[AB]:/.test(l));
      assert.deepEqual(
        sent.map((l) => l.replace(/\(#\d+\) /, "")),
        ["protocall: > X-A: 1", "protocall: > X-A: 2", "protocall: > X-B: one, two"],
      );
    });
  }

  test("a header sent once whose value looks like a joined pair stays one field", async () => {
    const r = await curl({ ...args("connect"), headers: ["x-a: 1, 2", "x-b: 1", "x-b: 2"] });
    const got = JSON.parse(r.stdout) as { headers: { name: string; value: string }[] };
    assert.deepEqual(
      got.headers.map((h) => `${h.name}: ${h.value}`),
      ["x-a: 1, 2", "x-b: 1", "x-b: 2"],
    );
  });
});
