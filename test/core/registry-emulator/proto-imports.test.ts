import assert from "node:assert/strict";
import { test } from "node:test";
import { protoImports } from "../../../src/core/registry-emulator/proto-imports";

test("imports, public and weak imports, adjacent strings; not in comments, strings or field names", () => {
  const text = [
    '// import "commented.proto";',
    'syntax = "proto3";',
    '/* import "block.proto"; */',
    "package a.b;",
    'import "a/b.proto";',
    "import public 'c.proto';",
    'import weak "d" "/e.proto";',
    'option go_package = "import \\"x.proto\\";";',
    "message M { string import = 1; }",
    'import "google/protobuf/empty.proto";',
  ].join("\n");
  assert.deepEqual(protoImports(text), ["a/b.proto", "c.proto", "d/e.proto", "google/protobuf/empty.proto"]);
  assert.deepEqual(protoImports('import "unterminated'), []);
});
