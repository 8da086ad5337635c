// protoc names files by their path inside the include path that holds them; diagnostics must name
// the files as the user knows them. The stderr below is what protoc 3.21 prints for these files.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { CompilerError } from "../../../src/core/schema/compiler-diagnostics";
import { protocFailure, protocLocator } from "../../../src/core/schema/protoc-build";

const temp = mkdtempSync(join(tmpdir(), "protocall-protoc-paths-"));
after(() => rmSync(temp, { recursive: true, force: true }));

// <temp>/ws/proto/acme/v1/a.proto, built as the directory ws/proto/acme/v1 with -I ws/proto and
// -I ws/third_party (which holds vendor/v.proto).
mkdirSync(join(temp, "ws/proto/acme/v1"), { recursive: true });
mkdirSync(join(temp, "ws/third_party/vendor"), { recursive: true });
writeFileSync(join(temp, "ws/proto/acme/v1/a.proto"), 'syntax = "proto3";\n');
writeFileSync(join(temp, "ws/third_party/vendor/v.proto"), 'syntax = "proto3";\n');
const includes = [join(temp, "ws/proto"), join(temp, "ws/third_party")];

const stderr = [
  'acme/v1/a.proto:3:1: Import "gone/g.proto" was not found or had errors.',
  'acme/v1/a.proto:5:3: "Nope" is not defined.',
  'vendor/v.proto:2:9: Expected ";".',
  "gone/g.proto: File not found.",
  "",
].join("\n");

test("protocLocator finds protoc's names in the include paths, relative to the working directory", () => {
  const locate = protocLocator(includes, temp, "ws/proto/acme/v1");
  assert.equal(locate("acme/v1/a.proto"), join("ws/proto/acme/v1/a.proto"));
  assert.equal(locate("vendor/v.proto"), join("ws/third_party/vendor/v.proto"));
  assert.equal(locate("gone/g.proto"), undefined);
  assert.equal(locate("/abs/x.proto"), "/abs/x.proto");
  // An absolute directory built, or a file outside the working directory: absolute paths.
  assert.equal(
    protocLocator(includes, temp, join(temp, "ws/proto"))("acme/v1/a.proto"),
    join(temp, "ws/proto/acme/v1/a.proto"),
  );
  assert.equal(
    protocLocator(includes, join(temp, "ws/proto/acme"), "v1")("vendor/v.proto"),
    join(temp, "ws/third_party/vendor/v.proto"),
  );
});

test("protoc diagnostics name the files where they are, not under the directory built", () => {
  const err = protocFailure(stderr, "ws/proto/acme/v1", 1, protocLocator(includes, temp, "ws/proto/acme/v1"));
  assert.ok(err instanceof CompilerError);
  assert.deepEqual(
    err.diagnostics.map((d) => `${d.file}:${d.line}:${d.column}`),
    [
      "ws/proto/acme/v1/a.proto:3:1",
      "ws/proto/acme/v1/a.proto:5:3",
      "ws/third_party/vendor/v.proto:2:9",
      // An import no include path holds keeps the name protoc gave it.
      "gone/g.proto:0:0",
    ],
  );
  assert.match(err.message, /^compiling ws\/proto\/acme\/v1 failed with 4 errors:\n/);
  assert.ok(err.message.includes('\nws/proto/acme/v1/a.proto:5:3: "Nope" is not defined.\n'), err.message);
});
