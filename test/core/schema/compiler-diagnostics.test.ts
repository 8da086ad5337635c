import assert from "node:assert/strict";
import { test } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { bufBuildArgs, bufBuildFailure } from "../../../src/core/schema/buf-build";
import {
  CompilerError,
  formatDiagnostic,
  parseBufErrors,
} from "../../../src/core/schema/compiler-diagnostics";

test("parseBufErrors reads buf's JSON error lines and keeps other lines apart", () => {
  const stderr = [
    '{"path":"a/x.proto","start_line":4,"start_column":13,"end_line":4,"end_column":16,"type":"COMPILE","message":"cannot find `Foo` in this scope"}',
    "Failure: something else",
    '{"not":"a diagnostic"}',
    "",
  ].join("\n");
  const { diagnostics, other } = parseBufErrors(stderr, "ws");
  assert.deepEqual(diagnostics, [
    {
      file: "ws/a/x.proto",
      line: 4,
      column: 13,
      endLine: 4,
      endColumn: 16,
      message: "cannot find `Foo` in this scope",
    },
  ]);
  assert.deepEqual(other, ["Failure: something else", '{"not":"a diagnostic"}']);
  assert.equal(parseBufErrors(stderr, ".").diagnostics[0].file, "a/x.proto");
  assert.equal(parseBufErrors(stderr, "/abs/ws").diagnostics[0].file, "/abs/ws/a/x.proto");
});

test("formatDiagnostic: file:line:column: message, or file: message without a position", () => {
  assert.equal(formatDiagnostic({ file: "a.proto", line: 2, column: 7, message: "bad" }), "a.proto:2:7: bad");
  assert.equal(formatDiagnostic({ file: "a.proto", line: 0, column: 0, message: "bad" }), "a.proto: bad");
});

test("CompilerError lists every diagnostic and says which file to fix", () => {
  const one = new CompilerError([{ file: "a.proto", line: 1, column: 2, message: "m" }], "dir");
  assert.ok(one instanceof ProtocallError);
  assert.equal(one.exitCode, 1);
  assert.equal(
    one.message,
    "compiling dir failed with 1 error:\na.proto:1:2: m\nfix a.proto and build again",
  );
  const two = new CompilerError(
    [
      { file: "a.proto", line: 1, column: 2, message: "m" },
      { file: "b.proto", line: 3, column: 4, message: "n" },
    ],
    "dir",
  );
  assert.equal(
    two.message,
    "compiling dir failed with 2 errors:\na.proto:1:2: m\nb.proto:3:4: n\nfix the files listed above and build again",
  );
});

test("bufBuildArgs builds the current directory to binary on stdout with JSON errors", () => {
  assert.deepEqual(bufBuildArgs(), ["build", ".", "--error-format=json", "-o", "-#format=binpb"]);
  assert.deepEqual(bufBuildArgs({ excludeSourceInfo: true, paths: ["a/b.proto", "c"] }), [
    "build",
    ".",
    "--error-format=json",
    "-o",
    "-#format=binpb",
    "--exclude-source-info",
    "--path",
    "a/b.proto",
    "--path",
    "c",
  ]);
});

test("bufBuildFailure: buf's own failures become one clear message", () => {
  const noFiles = bufBuildFailure('Failure: Module "path: ".."" had no .proto files\n', "api", 1);
  assert.ok(!(noFiles instanceof CompilerError));
  assert.match(noFiles.message, /^api has no \.proto files to build/);
  const config = bufBuildFailure("Failure: decode buf.yaml: invalid version\n", "api", 1);
  assert.equal(
    config.message,
    "buf build of api failed (exit 1): decode buf.yaml: invalid version; fix the workspace configuration (buf.yaml, buf.work.yaml) or the files it names",
  );
});
