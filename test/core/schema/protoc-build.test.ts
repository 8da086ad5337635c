// protoc is not installed here or in CI, so its invocation is tested as what it is: arguments built
// from protoc's documented command line, and its documented error output parsed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { CompilerError } from "../../../src/core/schema/compiler-diagnostics";
import { protocArgs, protocFailure } from "../../../src/core/schema/protoc-build";

test("protocArgs: include paths, imports, source info, output, then the files", () => {
  assert.deepEqual(
    protocArgs({
      includePaths: ["/ws/proto", "/ws/third_party"],
      files: ["/ws/proto/a/v1/a.proto", "/ws/proto/b/v1/b.proto"],
      out: "/tmp/x/set.binpb",
    }),
    [
      "-I",
      "/ws/proto",
      "-I",
      "/ws/third_party",
      "--include_imports",
      "--include_source_info",
      "-o",
      "/tmp/x/set.binpb",
      "/ws/proto/a/v1/a.proto",
      "/ws/proto/b/v1/b.proto",
    ],
  );
});

test("protocArgs: excludeSourceInfo drops --include_source_info but keeps imports", () => {
  const args = protocArgs({
    includePaths: ["/p"],
    files: ["/p/a.proto"],
    out: "/o",
    excludeSourceInfo: true,
  });
  assert.deepEqual(args, ["-I", "/p", "--include_imports", "-o", "/o", "/p/a.proto"]);
});

test("protocArgs: no files or no include path is a clear error", () => {
  assert.throws(
    () => protocArgs({ includePaths: ["/p"], files: [], out: "/o" }),
    /no \.proto files to compile under \/p/,
  );
  assert.throws(
    () => protocArgs({ includePaths: [], files: ["/a.proto"], out: "/o" }),
    /at least one include path/,
  );
});

test("protocFailure parses file:line:column: message lines into diagnostics, skipping warnings", () => {
  const stderr = [
    'a/v1/a.proto:5:3: "Nope" is not defined.',
    'a/v1/a.proto:3:1: Import "gone.proto" was not found or had errors.',
    "a/v1/a.proto:1:1: warning: Import b.proto is unused.",
    "gone.proto: File not found.",
    "",
  ].join("\n");
  const err = protocFailure(stderr, "proto", 1);
  assert.ok(err instanceof CompilerError);
  assert.deepEqual(err.diagnostics, [
    { file: "proto/a/v1/a.proto", line: 5, column: 3, message: '"Nope" is not defined.' },
    {
      file: "proto/a/v1/a.proto",
      line: 3,
      column: 1,
      message: 'Import "gone.proto" was not found or had errors.',
    },
    { file: "proto/gone.proto", line: 0, column: 0, message: "File not found." },
  ]);
  assert.match(
    err.message,
    /^compiling proto failed with 3 errors:\nproto\/a\/v1\/a\.proto:5:3: "Nope" is not defined\./,
  );
  assert.match(err.message, /\nproto\/gone\.proto: File not found\.\n/);
});

test("protocFailure without file diagnostics keeps protoc's message", () => {
  const err = protocFailure("Missing output directives.\n", "proto", 1);
  assert.ok(err instanceof ProtocallError);
  assert.ok(!(err instanceof CompilerError));
  assert.equal(
    err.message,
    "protoc failed on proto (exit 1): Missing output directives.; check the include paths and files",
  );
});
