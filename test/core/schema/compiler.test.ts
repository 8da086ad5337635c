import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { ProtocallError } from "../../../src/core/errors";
import { clearBuildMemoryCache } from "../../../src/core/schema/build-cache";
import {
  buildWorkspace,
  CompilerError,
  type CompilerRunner,
  runCompiler,
} from "../../../src/core/schema/compiler";

const temp = mkdtempSync(join(tmpdir(), "protocall-compiler-test-"));
after(() => rmSync(temp, { recursive: true, force: true }));
let counter = 0;

/** Writes files (path → content) under a fresh directory and returns it. */
function tree(files: Record<string, string>): string {
  const root = join(temp, `t${counter++}`);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  mkdirSync(root, { recursive: true });
  return root;
}

function countingRunner(): { runner: CompilerRunner; runs: () => number } {
  let runs = 0;
  return {
    runner: (file, args, options) => {
      runs++;
      return runCompiler(file, args, options);
    },
    runs: () => runs,
  };
}

function fileNames(bytes: Uint8Array): string[] {
  return fromBinary(FileDescriptorSetSchema, bytes)
    .file.map((f) => f.name)
    .sort();
}

const greet = `syntax = "proto3";
package demo.v1;
import "google/protobuf/timestamp.proto";
// Greets people.
service GreetService {
  // Says hello.
  rpc Greet(GreetRequest) returns (GreetResponse);
}
message GreetRequest { string name = 1; }
message GreetResponse { string greeting = 1; google.protobuf.Timestamp at = 2; }
`;

async function expectCompilerError(dir: string): Promise<CompilerError> {
  try {
    await buildWorkspace(dir, { cacheDir: false });
  } catch (err) {
    assert.ok(err instanceof CompilerError, `expected CompilerError, got ${err}`);
    assert.ok(err instanceof ProtocallError);
    return err;
  }
  assert.fail("the build should have failed");
}

test("a plain folder builds with imports and source info", async () => {
  const dir = tree({ "demo/v1/greet.proto": greet });
  const { bytes, fromCache } = await buildWorkspace(dir, { cacheDir: false });
  assert.equal(fromCache, false);
  const set = fromBinary(FileDescriptorSetSchema, bytes);
  assert.deepEqual(set.file.map((f) => f.name).sort(), [
    "demo/v1/greet.proto",
    "google/protobuf/timestamp.proto",
  ]);
  const greetFile = set.file.find((f) => f.name === "demo/v1/greet.proto")!;
  assert.equal(greetFile.service[0].name, "GreetService");
  const comments = greetFile.sourceCodeInfo?.location.map((l) => l.leadingComments) ?? [];
  assert.ok(comments.includes(" Greets people.\n"), "service comment kept in source info");
});

test("--exclude-source-info leaves out source code info", async () => {
  const dir = tree({ "demo/v1/greet.proto": greet });
  const { bytes } = await buildWorkspace(dir, { cacheDir: false, excludeSourceInfo: true });
  const set = fromBinary(FileDescriptorSetSchema, bytes);
  assert.equal(set.file.length, 2);
  for (const file of set.file) assert.equal(file.sourceCodeInfo, undefined, file.name);
});

test("a buf.yaml v1 module builds", async () => {
  const dir = tree({ "buf.yaml": "version: v1\n", "acme/v1/a.proto": greet.replace("demo.v1", "acme.v1") });
  const { bytes } = await buildWorkspace(dir, { cacheDir: false });
  assert.deepEqual(fileNames(bytes), ["acme/v1/a.proto", "google/protobuf/timestamp.proto"]);
});

test("a buf.yaml v2 workspace with two modules builds, imports across modules resolved", async () => {
  const dir = tree({
    "buf.yaml": "version: v2\nmodules:\n  - path: proto\n  - path: vendor\n",
    "proto/app/v1/app.proto":
      'syntax = "proto3";\npackage app.v1;\nimport "lib/v1/lib.proto";\nmessage App { lib.v1.Lib lib = 1; }\n',
    "vendor/lib/v1/lib.proto": 'syntax = "proto3";\npackage lib.v1;\nmessage Lib {}\n',
  });
  const { bytes } = await buildWorkspace(dir, { cacheDir: false });
  assert.deepEqual(fileNames(bytes), ["app/v1/app.proto", "lib/v1/lib.proto"]);
});

test("a buf.work.yaml workspace builds, and a module inside it builds with its workspace's imports", async () => {
  const dir = tree({
    "buf.work.yaml": "version: v1\ndirectories:\n  - m1\n  - m2\n",
    "m1/buf.yaml": "version: v1\n",
    "m2/buf.yaml": "version: v1\n",
    "m1/a/a.proto": 'syntax = "proto3";\npackage a;\nimport "b/b.proto";\nmessage A { b.B b = 1; }\n',
    "m2/b/b.proto": 'syntax = "proto3";\npackage b;\nmessage B {}\n',
  });
  assert.deepEqual(fileNames((await buildWorkspace(dir, { cacheDir: false })).bytes), [
    "a/a.proto",
    "b/b.proto",
  ]);
  assert.deepEqual(fileNames((await buildWorkspace(join(dir, "m1"), { cacheDir: false })).bytes), [
    "a/a.proto",
    "b/b.proto",
  ]);
});

test("paths restrict the build to one file and the files it imports", async () => {
  const dir = tree({
    "a.proto": 'syntax = "proto3";\npackage p;\nimport "b.proto";\nmessage A { B b = 1; }\n',
    "b.proto": 'syntax = "proto3";\npackage p;\nmessage B {}\n',
    "c.proto": 'syntax = "proto3";\npackage p;\nmessage C {}\n',
  });
  const { bytes } = await buildWorkspace(dir, { cacheDir: false, paths: ["a.proto"] });
  assert.deepEqual(fileNames(bytes), ["a.proto", "b.proto"]);
  await assert.rejects(
    buildWorkspace(dir, { cacheDir: false, paths: ["nope.proto"] }),
    /nope\.proto: no such file/,
  );
  await assert.rejects(buildWorkspace(dir, { cacheDir: false, paths: ["../x.proto"] }), /outside/);
});

test("a syntax error is a diagnostic with file, line and column", async () => {
  const dir = tree({ "bad.proto": 'syntax = "proto3";\npackage p;\nmessage A { int32 x = 1 }\n' });
  const err = await expectCompilerError(dir);
  assert.equal(err.diagnostics.length, 1);
  const [d] = err.diagnostics;
  assert.equal(d.file, join(dir, "bad.proto"));
  assert.equal(d.line, 3);
  assert.equal(d.column, 25);
  assert.match(d.message, /unexpected/);
  assert.match(
    err.message,
    new RegExp(`${join(dir, "bad.proto").replace(/[\\/.]/g, "\\$&")}:3:25: unexpected`),
  );
  assert.match(err.message, /fix .*bad\.proto and build again/);
});

test("an unknown type is a diagnostic naming the type", async () => {
  const dir = tree({ "x/u.proto": 'syntax = "proto3";\npackage x;\n\nmessage U {\n  Missing m = 1;\n}\n' });
  const err = await expectCompilerError(dir);
  assert.deepEqual(
    err.diagnostics.map((d) => [d.file, d.line, d.column]),
    [[join(dir, "x/u.proto"), 5, 3]],
  );
  assert.match(err.diagnostics[0].message, /Missing/);
});

test("a missing import is a diagnostic naming the import", async () => {
  const dir = tree({
    "i.proto": 'syntax = "proto3";\npackage i;\nimport "gone/away.proto";\nmessage I {}\n',
  });
  const err = await expectCompilerError(dir);
  const d = err.diagnostics.find((x) => /gone\/away\.proto/.test(x.message));
  assert.ok(d, JSON.stringify(err.diagnostics));
  assert.equal(d.file, join(dir, "i.proto"));
  assert.equal(d.line, 3);
  assert.equal(d.column, 1);
  assert.match(d.message, /imported file "gone\/away\.proto" does not exist/);
});

test("a relative directory gives diagnostic paths relative to it", async () => {
  const dir = tree({ "r.proto": 'syntax = "proto3";\nmessage R { Nope n = 1; }\n' });
  const rel = dir.slice(temp.length + 1);
  await assert.rejects(buildWorkspace(rel, { cwd: temp, cacheDir: false }), (err) => {
    assert.ok(err instanceof CompilerError);
    assert.equal(err.diagnostics[0].file, join(rel, "r.proto"));
    assert.match(err.message, new RegExp(`^compiling ${rel} failed with 1 error:\\n${rel}/r\\.proto:2:13: `));
    return true;
  });
});

test("a missing directory, a file, and a folder without .proto files are clear errors", async () => {
  await assert.rejects(buildWorkspace(join(temp, "does-not-exist"), { cacheDir: false }), (err) => {
    assert.ok(err instanceof ProtocallError && !(err instanceof CompilerError));
    assert.match(err.message, /does-not-exist: the directory does not exist/);
    return true;
  });
  const dir = tree({ "readme.txt": "no protos" });
  await assert.rejects(buildWorkspace(join(dir, "readme.txt"), { cacheDir: false }), /not a directory/);
  await assert.rejects(buildWorkspace(dir, { cacheDir: false }), /has no \.proto files to build/);
});

test("an unchanged workspace is not compiled again; a changed file is", async () => {
  const dir = tree({ "demo/v1/greet.proto": greet });
  const { runner, runs } = countingRunner();
  const first = await buildWorkspace(dir, { cacheDir: false, runner });
  assert.equal(first.fromCache, false);
  assert.equal(runs(), 1);
  const second = await buildWorkspace(dir, { cacheDir: false, runner });
  assert.equal(second.fromCache, true);
  assert.equal(runs(), 1, "no compiler run for an unchanged workspace");
  assert.deepEqual(second.bytes, first.bytes);

  writeFileSync(
    join(dir, "demo/v1/greet.proto"),
    greet.replace("string name = 1;", "string name = 1; int32 age = 2;"),
  );
  const third = await buildWorkspace(dir, { cacheDir: false, runner });
  assert.equal(third.fromCache, false);
  assert.equal(runs(), 2);
  const msg = fromBinary(FileDescriptorSetSchema, third.bytes).file.find(
    (f) => f.name === "demo/v1/greet.proto",
  )!;
  assert.deepEqual(
    msg.messageType[0].field.map((f) => f.name),
    ["name", "age"],
  );

  // Options are part of the key: excluding source info is a different build.
  const fourth = await buildWorkspace(dir, { cacheDir: false, runner, excludeSourceInfo: true });
  assert.equal(fourth.fromCache, false);
  assert.equal(runs(), 3);

  // A new file and a config file change the key too.
  writeFileSync(join(dir, "demo/v1/more.proto"), 'syntax = "proto3";\npackage demo.v1;\nmessage More {}\n');
  assert.equal((await buildWorkspace(dir, { cacheDir: false, runner })).fromCache, false);
  writeFileSync(join(dir, "buf.yaml"), "version: v2\n");
  assert.equal((await buildWorkspace(dir, { cacheDir: false, runner })).fromCache, false);
  assert.equal(runs(), 5);
});

test("concurrent builds of the same workspace share one compiler run", async () => {
  const dir = tree({ "demo/v1/greet.proto": greet });
  const { runner, runs } = countingRunner();
  const results = await Promise.all([1, 2, 3].map(() => buildWorkspace(dir, { cacheDir: false, runner })));
  assert.equal(runs(), 1);
  assert.equal(results.filter((r) => !r.fromCache).length, 1);
  for (const r of results) assert.deepEqual(r.bytes, results[0].bytes);
});

test("the on-disk cache serves a build after the memory cache is gone", async () => {
  const dir = tree({ "demo/v1/greet.proto": greet });
  const cacheDir = join(temp, `cache${counter++}`);
  const { runner, runs } = countingRunner();
  const first = await buildWorkspace(dir, { cacheDir, runner });
  assert.equal(first.fromCache, false);
  const stored = readdirSync(cacheDir);
  assert.equal(stored.length, 1);
  assert.match(stored[0], /^[0-9a-f]{64}\.binpb$/);
  clearBuildMemoryCache();
  const second = await buildWorkspace(dir, { cacheDir, runner });
  assert.equal(second.fromCache, true);
  assert.equal(runs(), 1);
  assert.deepEqual(second.bytes, first.bytes);
});

test("failed builds are not cached", async () => {
  const dir = tree({ "bad.proto": 'syntax = "proto3";\nmessage B { Nope n = 1; }\n' });
  const { runner, runs } = countingRunner();
  await assert.rejects(buildWorkspace(dir, { cacheDir: false, runner }), CompilerError);
  await assert.rejects(buildWorkspace(dir, { cacheDir: false, runner }), CompilerError);
  assert.equal(runs(), 2);
});

test("a configured protoc that does not exist is a clear error", async () => {
  const dir = tree({ "a.proto": 'syntax = "proto3";\n' });
  await assert.rejects(
    buildWorkspace(dir, { cacheDir: false, protocPath: join(temp, "no-protoc") }),
    /the configured protoc .*no-protoc does not exist/,
  );
});

test("a single .proto file builds within its workspace, with only what it imports", async () => {
  const dir = tree({
    "buf.yaml": "version: v2\nmodules:\n  - path: proto\n",
    "proto/a/v1/a.proto":
      'syntax = "proto3";\npackage a.v1;\nimport "a/v1/b.proto";\nmessage A { B b = 1; }\n',
    "proto/a/v1/b.proto": 'syntax = "proto3";\npackage a.v1;\nmessage B {}\n',
    "proto/a/v1/c.proto": 'syntax = "proto3";\npackage a.v1;\nmessage C { Nope n = 1; }\n',
  });
  const { bytes } = await buildWorkspace("proto/a/v1/a.proto", { cwd: dir, cacheDir: false });
  assert.deepEqual(fileNames(bytes), ["a/v1/a.proto", "a/v1/b.proto"]);
  await assert.rejects(buildWorkspace("proto/a/v1/c.proto", { cwd: dir, cacheDir: false }), (err) => {
    assert.ok(err instanceof CompilerError);
    assert.deepEqual(
      err.diagnostics.map((d) => `${d.file}:${d.line}:${d.column}`),
      ["proto/a/v1/c.proto:3:13"],
    );
    return true;
  });
});

test("a missing import in a workspace with unresolved dependencies says how to resolve them", async () => {
  const dir = tree({
    "buf.yaml": "version: v2\ndeps:\n  - buf.build/googleapis/googleapis\n",
    "a.proto": 'syntax = "proto3";\nimport "google/api/annotations.proto";\nmessage A {}\n',
  });
  const err = await expectCompilerError(dir);
  assert.equal(err.diagnostics[0].message, 'imported file "google/api/annotations.proto" does not exist');
  assert.match(
    err.message,
    /\n.*buf\.yaml declares dependencies but there is no buf\.lock; run `buf dep update` there to resolve them$/,
  );
});
