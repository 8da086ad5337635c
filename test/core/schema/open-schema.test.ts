import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import { after, test } from "node:test";
import { fromBinary, toJsonString } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { ProtocallError } from "../../../src/core/errors";
import { provideRegistryModules } from "../../../src/core/registry/provide";
import { buildWorkspace, CompilerError } from "../../../src/core/schema/compiler";
import { openSchema } from "../../../src/core/schema/open-schema";

const temp = mkdtempSync(join(tmpdir(), "protocall-open-schema-"));
after(() => rmSync(temp, { recursive: true, force: true }));
let counter = 0;
const noStdin = () => Readable.from([]);

function tree(files: Record<string, string>): string {
  const root = join(temp, `t${counter++}`);
  mkdirSync(root, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const greet = `syntax = "proto3";
package demo.v1;
// Greets people.
service GreetService {
  rpc Greet(GreetRequest) returns (GreetResponse);
}
message GreetRequest { string name = 1; }
message GreetResponse { string greeting = 1; }
`;
const other = `syntax = "proto3";
package other.v1;
service OtherService {
  rpc Ping(PingRequest) returns (PingRequest);
}
message PingRequest {}
`;

test("a directory opens as a workspace build with source info", async () => {
  const dir = tree({ "proto/demo/v1/greet.proto": greet, "proto/other/v1/other.proto": other });
  const source = await openSchema("proto", { cwd: dir, stdin: noStdin(), cacheDir: false });
  try {
    assert.equal(source.label, "workspace proto");
    assert.deepEqual(await source.listServices(), ["demo.v1.GreetService", "other.v1.OtherService"]);
    const service = await source.findType("demo.v1.GreetService");
    assert.equal(service?.kind, "service");
    const file = await source.findFile("demo.v1.GreetService");
    assert.equal(file?.name, "demo/v1/greet");
    const comments = file?.proto.sourceCodeInfo?.location.map((l) => l.leadingComments) ?? [];
    assert.ok(comments.includes(" Greets people.\n"), "the service comment is in the source info");
  } finally {
    await source.close();
  }
});

test("a .proto file opens as a build of that file and its imports within its v2 workspace", async () => {
  const dir = tree({
    "buf.yaml": "version: v2\nmodules:\n  - path: proto\n  - path: vendor\n",
    "proto/app/v1/app.proto":
      'syntax = "proto3";\npackage app.v1;\nimport "lib/v1/lib.proto";\nservice App { rpc Get(lib.v1.Lib) returns (lib.v1.Lib); }\n',
    "proto/app/v1/unrelated.proto": other.replace("other.v1", "app.v1"),
    "vendor/lib/v1/lib.proto": 'syntax = "proto3";\npackage lib.v1;\nmessage Lib { string id = 1; }\n',
  });
  const source = await openSchema("proto/app/v1/app.proto", { cwd: dir, stdin: noStdin(), cacheDir: false });
  try {
    assert.deepEqual(await source.listServices(), ["app.v1.App"]);
    const lib = await source.findType("lib.v1.Lib");
    assert.equal(lib?.kind, "message");
    assert.equal(source.label, "schema proto/app/v1/app.proto");
  } finally {
    await source.close();
  }
});

test("a .proto file outside any buf config builds in its own folder", async () => {
  const dir = tree({ "loose/demo.proto": greet, "loose/ignored.proto": other });
  const source = await openSchema(join(dir, "loose/demo.proto"), {
    cwd: temp,
    stdin: noStdin(),
    cacheDir: false,
  });
  try {
    assert.deepEqual(await source.listServices(), ["demo.v1.GreetService"]);
  } finally {
    await source.close();
  }
});

test("a .proto file with errors gives compiler diagnostics", async () => {
  const dir = tree({ "bad.proto": 'syntax = "proto3";\nmessage Bad { Nope n = 1; }\n' });
  await assert.rejects(openSchema("bad.proto", { cwd: dir, stdin: noStdin(), cacheDir: false }), (err) => {
    assert.ok(err instanceof CompilerError);
    assert.deepEqual(
      err.diagnostics.map((d) => `${d.file}:${d.line}:${d.column}`),
      ["bad.proto:2:15"],
    );
    return true;
  });
});

test("descriptor-set files open by content: binary and JSON", async () => {
  const dir = tree({ "api/demo/v1/greet.proto": greet });
  const { bytes } = await buildWorkspace(join(dir, "api"), { cacheDir: false });
  writeFileSync(join(dir, "set.bin"), bytes);
  writeFileSync(
    join(dir, "set.json"),
    toJsonString(FileDescriptorSetSchema, fromBinary(FileDescriptorSetSchema, bytes)),
  );
  for (const name of ["set.bin", "set.json"]) {
    const source = await openSchema(name, { cwd: dir, stdin: noStdin() });
    try {
      assert.deepEqual(await source.listServices(), ["demo.v1.GreetService"], name);
      assert.equal((await source.findType("demo.v1.GreetRequest"))?.kind, "message");
    } finally {
      await source.close();
    }
  }
});

test("- reads a descriptor set from stdin", async () => {
  const dir = tree({ "demo/v1/greet.proto": greet });
  const { bytes } = await buildWorkspace(dir, { cacheDir: false });
  const stdin = Readable.from([Buffer.from(bytes.subarray(0, 10)), Buffer.from(bytes.subarray(10))]);
  const source = await openSchema("-", { cwd: dir, stdin });
  try {
    assert.deepEqual(await source.listServices(), ["demo.v1.GreetService"]);
  } finally {
    await source.close();
  }
});

test("a value naming a registry module that is not a local path is fetched from that registry", async () => {
  provideRegistryModules();
  // Nothing listens on port 1: the failure shows the value went to the registry client.
  await assert.rejects(
    openSchema("localhost:1/acme/weather:v1", {
      cwd: temp,
      stdin: noStdin(),
      env: { HOME: temp },
      registryCacheDir: false,
    }),
    (err) => {
      assert.ok(err instanceof ProtocallError);
      assert.match(
        err.message,
        /^the server hosted at that remote is unavailable \(https:\/\/localhost:1: connection refused\)/,
      );
      return true;
    },
  );
});

test("a local directory named like a registry module is used as a directory", async () => {
  const dir = tree({ "buf.build/acme/weather/demo/v1/greet.proto": greet });
  const source = await openSchema("buf.build/acme/weather", { cwd: dir, stdin: noStdin(), cacheDir: false });
  try {
    assert.deepEqual(await source.listServices(), ["demo.v1.GreetService"]);
  } finally {
    await source.close();
  }
});

test("a missing path is an error naming it", async () => {
  await assert.rejects(
    openSchema("nope/api.binpb", { cwd: temp, stdin: noStdin() }),
    /^ProtocallError: schema nope\/api\.binpb does not exist; give a directory/,
  );
  await assert.rejects(openSchema("", { cwd: temp, stdin: noStdin() }), /--schema needs a value/);
});

test("the schema fixtures (proto2, proto3, editions, custom options) build and open", async () => {
  const fixtures = resolve(__dirname, "../../fixtures/schema");
  const source = await openSchema(fixtures, { cwd: temp, stdin: noStdin(), cacheDir: false });
  try {
    const services = await source.listServices();
    assert.ok(services.includes("fixtures.v1.Greeter"), services.join(", "));
    assert.ok(services.includes("fixtures.editions.Configurator"), services.join(", "));
    assert.ok(services.includes("fixtures.options.AnnotatedService"), services.join(", "));
  } finally {
    await source.close();
  }
});
