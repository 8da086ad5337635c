// The schema inputs of `protocall curl` as a user meets them: a set written by `protocall build`, its
// JSON form, a plugin request and stdin, told apart by content whatever their names; and bad inputs
// (random or truncated bytes, JSON that is not a set, a missing import, an import cycle, a compiler
// error, a reflection server that sends garbage or closes mid-stream), each one clear error, exit 1
// or the RPC code's exit status, never a stack trace or a hang.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { create, fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { runBuf } from "../support/buf";
import { type RunOptions, type RunResult, runCli } from "../support/cli";
import { schemaFixturesDir } from "../support/schema-fixtures";

const temp = mkdtempSync(join(tmpdir(), "protocall-schema-cli-"));
// A private build cache, so that these runs do not depend on (or fill) the shared one.
const env = { TMPDIR: join(temp, "tmp"), PROTOCALL_DEBUG: undefined };
mkdirSync(env.TMPDIR);
/** Runs the CLI, bounded generously: a loaded CI machine must not turn a slow start into a failure. */
const cli = (args: string[], options: RunOptions = {}) =>
  runCli(args, { env, timeoutMs: 60_000, ...options });
after(() => rmSync(temp, { recursive: true, force: true }));

let setPath: string;
let setBytes: Uint8Array;

const expectedMethods = [
  "fixtures.editions.Configurator/Configure",
  "fixtures.options.AnnotatedService/Do",
  "fixtures.v1.Greeter/Chat",
  "fixtures.v1.Greeter/Collect",
  "fixtures.v1.Greeter/Greet",
  "fixtures.v1.Greeter/ListGreetings",
  "fixtures.v1.Greeter/Ping",
];

before(async () => {
  setPath = join(temp, "set.binpb");
  const r = await cli(["build", schemaFixturesDir, "-o", setPath], { env, timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  setBytes = new Uint8Array(readFileSync(setPath));
});

function write(name: string, content: string | Uint8Array): string {
  const path = join(temp, name);
  writeFileSync(path, content);
  return path;
}

/** The set re-encoded after `edit` changed its files. */
function editedSet(edit: (files: ReturnType<typeof fromBinary<typeof FileDescriptorSetSchema>>) => void) {
  const set = fromBinary(FileDescriptorSetSchema, setBytes);
  edit(set);
  return toBinary(FileDescriptorSetSchema, set);
}

/** One line on stderr, `protocall: …` matching `message`, nothing on stdout, no stack trace. */
function assertOneLineError(r: RunResult, message: RegExp, code = 1) {
  assert.equal(r.timedOut, false, "must not hang");
  assert.equal(r.code, code, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^protocall: [^\n]+\n$/, r.stderr);
  assert.match(r.stderr, message);
  assert.doesNotMatch(r.stderr, /\n\s+at |Error:|TypeError|RangeError/, "no stack trace");
}

describe("protocall curl --schema: formats by content", () => {
  test("a set from protocall build lists every method", async () => {
    const r = await cli(["curl", "--schema", setPath, "--list-methods"], { env });
    assert.equal(r.stderr, "");
    assert.equal(r.code, 0);
    assert.deepEqual(r.stdout.trimEnd().split("\n"), expectedMethods);
  });

  test("the JSON form, a plugin request and stdin, under misleading names", async () => {
    const set = fromBinary(FileDescriptorSetSchema, setBytes);
    // JSON in a file named like a binary set; a plugin request named like JSON.
    const json = write("looks-binary.binpb", toJsonString(FileDescriptorSetSchema, set, { prettySpaces: 1 }));
    const request = toBinary(
      CodeGeneratorRequestSchema,
      create(CodeGeneratorRequestSchema, {
        fileToGenerate: ["fixtures/v1/greeter.proto"],
        parameter: "x=y",
        protoFile: set.file,
      }),
    );
    const requestFile = write("looks-json.json", request);
    const binaryNamedJson = write("set.json", setBytes);
    const paths = [json, requestFile, binaryNamedJson];
    const byPath = await Promise.all(
      paths.map((p) => cli(["curl", "--schema", p, "--list-methods"], { env })),
    );
    for (const [i, r] of byPath.entries()) {
      const path = paths[i];
      assert.equal(r.stderr, "", path);
      assert.equal(r.code, 0, path);
      assert.deepEqual(r.stdout.trimEnd().split("\n"), expectedMethods, path);
    }
    const fromStdin = await Promise.all(
      [request, setBytes, readFileSync(json)].map((stdin) =>
        cli(["curl", "--schema", "-", "--list-services"], { env, stdin }),
      ),
    );
    for (const r of fromStdin) {
      assert.equal(r.stderr, "");
      assert.equal(r.code, 0);
      assert.deepEqual(r.stdout.trimEnd().split("\n"), [
        "fixtures.editions.Configurator",
        "fixtures.options.AnnotatedService",
        "fixtures.v1.Greeter",
      ]);
    }
  });

  test("a set built without source info works the same", async () => {
    const bare = join(temp, "bare.binpb");
    const b = await cli(["build", schemaFixturesDir, "-o", bare, "--exclude-source-info"], {
      env,
      timeoutMs: 60_000,
    });
    assert.equal(b.code, 0, b.stderr);
    assert.ok(readFileSync(bare).length < setBytes.length, "smaller without source info");
    const r = await cli(["curl", "--schema", bare, "--list-methods"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trimEnd().split("\n"), expectedMethods);
  });
});

describe("protocall curl --schema: bad input is one clear error", () => {
  const list = (schema: string) => ["curl", "--schema", schema, "--list-methods"];

  test("random bytes name the file and what was expected", async () => {
    const bytes = new Uint8Array(2048);
    let x = 7;
    for (let i = 0; i < bytes.length; i++) bytes[i] = x = (x * 1103515245 + 12345) & 0xff;
    const path = write("random.pb", bytes);
    assertOneLineError(
      await cli(list(path), { env }),
      /descriptor set .*random\.pb is not a descriptor set, image or plugin request: .* at byte \d+\. Expected a descriptor set/,
    );
  });

  test("a truncated set says it is truncated", async () => {
    const path = write("truncated.binpb", setBytes.subarray(0, Math.floor(setBytes.length / 3)));
    assertOneLineError(await cli(list(path), { env }), /truncated\.binpb .*truncated/);
  });

  test("an empty file, a missing file and stdin with garbage", async () => {
    const [empty, gone, stdin] = await Promise.all([
      cli(list(write("empty.desc", "")), { env }),
      cli(list(join(temp, "gone.binpb")), { env }),
      cli(list("-"), { env, stdin: Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2]) }),
    ]);
    assertOneLineError(empty, /empty\.desc is empty/);
    assertOneLineError(gone, /gone\.binpb does not exist/);
    assertOneLineError(stdin, /descriptor set from stdin is not a descriptor set/);
  });

  test("JSON that is not a descriptor set, and a .proto file under another name", async () => {
    const [config, broken, source] = await Promise.all([
      cli(list(write("config.json", '{"files": [], "name": "x"}')), { env }),
      cli(list(write("broken.json", '{"file": [{"name": ')), { env }),
      cli(list(write("api.protoset", 'syntax = "proto3";\npackage a;\nmessage M {}\n')), { env }),
    ]);
    assertOneLineError(
      config,
      /config\.json is JSON but not a descriptor set: it needs a top-level "file" array/,
    );
    assertOneLineError(broken, /broken\.json starts like JSON but is not valid JSON/);
    assertOneLineError(source, /api\.protoset .*looks like a \.proto source file/);
  });

  test("a set missing an import names the file and its importer", async () => {
    const path = write(
      "missing.binpb",
      editedSet((set) => {
        set.file = set.file.filter((f) => f.name !== "fixtures/options/annotations.proto");
      }),
    );
    assertOneLineError(
      await cli(
        ["curl", "--schema", path, "-d", "{}", "http://127.0.0.1:9/fixtures.options.AnnotatedService/Do"],
        {
          env,
        },
      ),
      /"fixtures\/options\/annotated\.proto" imports "fixtures\/options\/annotations\.proto", which is missing/,
    );
  });

  test("a set with an import cycle names the files of the cycle", async () => {
    const path = write(
      "cycle.binpb",
      editedSet((set) => {
        const a = set.file.find((f) => f.name === "fixtures/options/annotations.proto");
        a?.dependency.push("fixtures/options/annotated.proto");
      }),
    );
    assertOneLineError(
      await cli(
        ["curl", "--schema", path, "-d", "{}", "http://127.0.0.1:9/fixtures.options.AnnotatedService/Do"],
        {
          env,
        },
      ),
      /import cycle.*fixtures\/options\/annotated\.proto.*fixtures\/options\/annotations\.proto/,
    );
  });

  test("a directory with a syntax error: file:line:column diagnostics, exit 1, no stack trace", async () => {
    const dir = join(temp, "bad-proto");
    mkdirSync(dir);
    writeFileSync(join(dir, "a.proto"), 'syntax = "proto3";\npackage a;\nmessage A { int32 x = 1 }\n');
    const r = await cli(list(dir), { env, timeoutMs: 60_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, "");
    const lines = r.stderr.trimEnd().split("\n");
    assert.match(lines[0], /^protocall: compiling .*bad-proto failed with 1 error/);
    assert.ok(
      lines.some((l) => /bad-proto\/a\.proto:3:25: /.test(l)),
      r.stderr,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    // The same through protocall build.
    const b = await cli(["build", dir, "-o", join(temp, "never.binpb")], { env, timeoutMs: 60_000 });
    assert.equal(b.code, 1);
    assert.match(
      b.stderr,
      /^.*bad-proto\/a\.proto:3:25: .+\nprotocall: build of .*bad-proto failed with 1 error/,
    );
  });
});

/** An h2c server whose every stream is handled by `onStream` (for reflection that misbehaves). */
async function rawServer(onStream: (stream: http2.ServerHttp2Stream) => void) {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream) => {
    stream.on("error", () => {});
    onStream(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function grpcFrame(payload: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, Buffer.from(payload)]);
}

describe("protocall curl with a reflection server that misbehaves", () => {
  test("garbage in the reflection stream: one line, no hang", async () => {
    const server = await rawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.on("data", () => stream.write(grpcFrame(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 7, 7]))));
    });
    try {
      const r = await cli(
        ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "--list-services", server.url],
        {
          env,
          timeoutMs: 20_000,
        },
      );
      assert.equal(r.timedOut, false);
      assert.notEqual(r.code, 0);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /^protocall: [^\n]*list_services[^\n]*\n$/);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    } finally {
      await server.close();
    }
  });

  test("a server that resets the reflection stream: one line, no hang", async () => {
    const server = await rawServer((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.on("data", () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    });
    try {
      const r = await cli(
        ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "-d", "{}", `${server.url}/a.B/C`],
        { env, timeoutMs: 20_000 },
      );
      assert.equal(r.timedOut, false);
      assert.notEqual(r.code, 0);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /^protocall: [^\n]+\n$/);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    } finally {
      await server.close();
    }
  });
});

describe("protocall build: where the output cannot go", () => {
  test("a missing directory, a directory and a file in the path: one line each", async () => {
    const cases: [string, RegExp][] = [
      [join(temp, "no/such/dir/set.binpb"), /its directory .*no\/such\/dir does not exist/],
      [temp, /it is a directory; name a file/],
      [join(setPath, "x.binpb"), /a part of its path is a file, not a directory/],
    ];
    const results = await Promise.all(
      cases.map(([output]) => cli(["build", schemaFixturesDir, "-o", output], { env, timeoutMs: 60_000 })),
    );
    for (const [i, [output, message]] of cases.entries()) {
      const r = results[i];
      assertOneLineError(r, message);
      assert.ok(r.stderr.startsWith(`protocall: cannot write ${output}: `), r.stderr);
    }
  });
});

describe("protocall build outputs by name, as buf writes them", () => {
  test("-o set.json keeps custom options; -o set.binpb.gz is gzip; both load back", async () => {
    const json = join(temp, "built.json");
    const gz = join(temp, "built.binpb.gz");
    const [j, g, z] = await Promise.all([
      cli(["build", schemaFixturesDir, "-o", json], { env, timeoutMs: 60_000 }),
      cli(["build", schemaFixturesDir, "-o", gz], { env, timeoutMs: 60_000 }),
      cli(["build", schemaFixturesDir, "-o", join(temp, "built.binpb.zst")], { env, timeoutMs: 60_000 }),
    ]);
    assert.equal(j.code, 0, j.stderr);
    assert.equal(g.code, 0, g.stderr);
    const text = readFileSync(json, "utf8");
    assert.ok(text.includes('"[fixtures.options.method_rule]"'), "custom options are written");
    assert.deepEqual([...readFileSync(gz).subarray(0, 2)], [0x1f, 0x8b]);
    assertOneLineError(z, /cannot write .*built\.binpb\.zst: zstd output is not supported/);

    // buf's own gzip image, too.
    const bufGz = join(temp, "buf.binpb.gz");
    const b = await runBuf(["build", schemaFixturesDir, "-o", bufGz], { timeoutMs: 60_000 });
    assert.equal(b.code, 0, b.stderr);
    const results = await Promise.all(
      [json, gz, bufGz].map((schema) => cli(["curl", "--schema", schema, "--list-methods"], { env })),
    );
    for (const r of results) {
      assert.equal(r.stderr, "");
      assert.deepEqual(r.stdout.trimEnd().split("\n"), expectedMethods);
    }
  });
});
