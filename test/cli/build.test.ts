import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

const cli = resolve(__dirname, "../../dist/cli.js");
const temp = mkdtempSync(join(tmpdir(), "protocall-build-cli-"));
after(() => rmSync(temp, { recursive: true, force: true }));
let counter = 0;

function tree(files: Record<string, string>): string {
  const root = join(temp, `t${counter++}`);
  mkdirSync(root, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

function run(args: string[], cwd: string): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [cli, ...args],
      // A private cache directory keeps runs independent of earlier builds.
      { cwd, encoding: "buffer", timeout: 30_000, env: { ...process.env, TMPDIR: join(temp, "tmp") } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        done({ code, stdout, stderr: stderr.toString("utf8") });
      },
    );
  });
}

const greet = `syntax = "proto3";
package demo.v1;
import "google/protobuf/empty.proto";
// Greets.
service GreetService {
  rpc Greet(GreetRequest) returns (google.protobuf.Empty);
}
message GreetRequest { string name = 1; }
`;

test("build -o writes a loadable binary descriptor set with imports and source info", async () => {
  const dir = tree({ "proto/demo/v1/greet.proto": greet });
  const r = await run(["build", "proto", "-o", "out.binpb"], dir);
  assert.equal(r.stderr, "");
  assert.equal(r.code, 0);
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(join(dir, "out.binpb")));
  assert.deepEqual(set.file.map((f) => f.name).sort(), [
    "demo/v1/greet.proto",
    "google/protobuf/empty.proto",
  ]);
  const file = set.file.find((f) => f.name === "demo/v1/greet.proto")!;
  assert.ok(file.sourceCodeInfo && file.sourceCodeInfo.location.length > 0);
});

test("build --exclude-source-info --output - writes the set to stdout without source info", async () => {
  const dir = tree({ "demo/v1/greet.proto": greet });
  const r = await run(["build", ".", "--exclude-source-info", "--output", "-"], dir);
  assert.equal(r.code, 0, r.stderr);
  const set = fromBinary(FileDescriptorSetSchema, r.stdout);
  assert.equal(set.file.length, 2);
  for (const f of set.file) assert.equal(f.sourceCodeInfo, undefined);
});

test("build prints compiler errors one per line as file:line:column: message and exits 1", async () => {
  const dir = tree({
    "api/a.proto": 'syntax = "proto3";\npackage a;\nimport "nope.proto";\nmessage A {\n  Unknown u = 1;\n}\n',
  });
  const r = await run(["build", "api", "-o", "out.binpb"], dir);
  assert.equal(r.code, 1);
  const lines = r.stderr.trimEnd().split("\n");
  assert.deepEqual(lines, [
    'api/a.proto:3:1: imported file "nope.proto" does not exist',
    "api/a.proto:5:3: cannot find `Unknown` in this scope",
    "protocall: build of api failed with 2 errors; fix the files above and build again",
  ]);
  assert.doesNotMatch(r.stderr, /\bat .*\.js:\d+/, "no stack trace");
  assert.equal(r.stdout.length, 0);
});

test("build errors for bad input are one line, exit 1", async () => {
  const dir = tree({ "a.proto": 'syntax = "proto3";\n' });
  const missing = await run(["build", "missing-dir", "-o", "x.binpb"], dir);
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, "protocall: cannot build missing-dir: the directory does not exist\n");
  const flag = await run(["build", "--nope"], dir);
  assert.equal(flag.code, 1);
  assert.match(
    flag.stderr,
    /^protocall: unknown flag --nope: run `protocall build --help` for the list of flags\n$/,
  );
  assert.equal(flag.stderr.trimEnd().split("\n").length, 1);
  const two = await run(["build", "a", "b"], dir);
  assert.equal(two.code, 1);
  assert.match(two.stderr, /build takes one directory or \.proto file, got 2/);
});

test("build --help shows usage with examples", async () => {
  const r = await run(["build", "--help"], temp);
  assert.equal(r.code, 0);
  const text = r.stdout.toString("utf8");
  assert.match(text, /Usage: protocall build/);
  assert.match(text, /--exclude-source-info/);
  assert.match(text, /Examples:\n {2}protocall build proto -o api\.binpb/);
});

test("build -o file.json writes the set as JSON", async () => {
  const dir = tree({ "demo/v1/greet.proto": greet });
  const r = await run(["build", "-o", "set.json"], dir);
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(readFileSync(join(dir, "set.json"), "utf8"));
  assert.deepEqual(json.file.map((f: { name: string }) => f.name).sort(), [
    "demo/v1/greet.proto",
    "google/protobuf/empty.proto",
  ]);
});

test("build of a single .proto file writes that file and its imports", async () => {
  const dir = tree({
    "proto/demo/v1/greet.proto": greet,
    "proto/demo/v1/other.proto": 'syntax = "proto3";\n',
  });
  const r = await run(["build", "proto/demo/v1/greet.proto", "-o", "-"], dir);
  assert.equal(r.code, 0, r.stderr);
  const set = fromBinary(FileDescriptorSetSchema, r.stdout);
  assert.deepEqual(set.file.map((f) => f.name).sort(), ["google/protobuf/empty.proto", "greet.proto"]);
});

test("build of a workspace with unresolved dependencies says to run buf dep update", async () => {
  const dir = tree({
    "buf.yaml": "version: v2\ndeps:\n  - buf.build/googleapis/googleapis\n",
    "a.proto": 'syntax = "proto3";\nimport "google/api/annotations.proto";\nmessage A {}\n',
  });
  const r = await run(["build"], dir);
  assert.equal(r.code, 1);
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines[0], 'a.proto:2:1: imported file "google/api/annotations.proto" does not exist');
  assert.match(
    lines[1],
    /^protocall: build of \. failed with 1 error; .*no buf\.lock; run `buf dep update` there/,
  );
  assert.equal(lines.length, 2);
});

test("build of a workspace whose buf.yaml is malformed says where, in one line", async () => {
  const dir = tree({
    "buf.yaml": "version: v2\nmodules:\n  - path: proto\n   excludes: [tmp\n",
    "proto/a.proto": 'syntax = "proto3";\nmessage A {}\n',
  });
  const r = await run(["build", "-o", "-"], dir);
  assert.equal(r.code, 1);
  assert.equal(r.stdout.length, 0);
  assert.match(
    r.stderr,
    /^protocall: \S*buf\.yaml:4:1: invalid YAML: [^\n]+; fix the file \(buf cannot read it either\)\n$/,
  );
});
