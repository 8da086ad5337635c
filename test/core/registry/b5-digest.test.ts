import assert from "node:assert/strict";
import { test } from "node:test";
import {
  b5Digest,
  filesDigest,
  formatB5,
  type ModuleFile,
  moduleManifest,
  parseB5,
  selectModuleFiles,
} from "../../../src/core/registry/b5-digest";

const file = (path: string, text: string): ModuleFile => ({ path, content: Buffer.from(text, "utf8") });

// The worked example that buf 1.75 accepted on download and wrote into buf.lock.
const tiny = [
  file("tiny/v1/tiny.proto", 'syntax = "proto3";\n\npackage tiny.v1;\n\nmessage Tiny {}\n'),
  file("LICENSE", "MIT\n"),
];
const tinyB5 =
  "b5:a7380f6dd41f94bca639ef3b9923c65e721401f3381b9e75e7537ccda8f71bc82eeba415047b42da5f56b8bcc07cf2d32fac474652f37adc0e2030a3997bcf33";
const tinydep = [
  file(
    "tinydep/v1/tinydep.proto",
    'syntax = "proto3";\n\npackage tinydep.v1;\n\nimport "tiny/v1/tiny.proto";\n\nmessage Wrap {\n  tiny.v1.Tiny t = 1;\n}\n',
  ),
];
const tinydepB5 =
  "b5:3ca0e7e059b9f02b303f8c0fe77c13387055df2f8b8ec1596e1ef1ba5d0c75a4ed37033238dee705c3fda86c7228fbf555b9844d0742adc67894714cda42f58e";

test("manifest: one line per file, sorted by path, hash, two spaces, path, newline", () => {
  assert.equal(
    moduleManifest(tiny),
    "shake256:bd2bc29e8175bfaf0efb660ce40c68486635fd2a125131a3e538f505cdd1819d8e5a973695498025ed5cc71ca3f1520dda5833936b57f02a5acd896fc98120bb  LICENSE\n" +
      "shake256:dc874f3276fadc23ecd8aba806109255f46faae9af73ae48535c4c676dcb1153b9e27e34d0b4d10e30f0a44018a9a6e91af29c19fbca900f83dad06ddd0a25b9  tiny/v1/tiny.proto\n",
  );
  assert.equal(
    Buffer.from(filesDigest(tiny)).toString("hex"),
    "8b5b63bf5f876232b31842747515722e8dbdf6eb950010778ef26d2cbe69f121554507f2f4944392bbab5fa9541c027d9696a30560380d49a1d6e187ef34d800",
  );
});

test("b5 of a module without dependencies (acme/tiny)", () => {
  assert.equal(formatB5(b5Digest(tiny)), tinyB5);
});

test("b5 of a module with a dependency covers the dependency's digest (acme/tinydep)", () => {
  assert.equal(
    Buffer.from(filesDigest(tinydep)).toString("hex"),
    "1fba9b39298d59b6abf52b627798fd4c12f31edce3c59b24f4c3955214bb74ad4e01f8fa64f461b987ab63c77aaa594cd6a07f4b00adc3f309a518c9017cfc5c",
  );
  assert.equal(formatB5(b5Digest(tinydep, [tinyB5])), tinydepB5);
  assert.equal(formatB5(b5Digest(tinydep, [parseB5(tinyB5)])), tinydepB5, "raw bytes and text agree");
  assert.notEqual(formatB5(b5Digest(tinydep)), tinydepB5, "the dependency changes the digest");
});

test("dependency digests are sorted and counted once", () => {
  const a = formatB5(b5Digest(tiny));
  const b = formatB5(b5Digest(tinydep, [a]));
  assert.equal(formatB5(b5Digest(tinydep, [a, b])), formatB5(b5Digest(tinydep, [b, a])));
  assert.equal(formatB5(b5Digest(tinydep, [a, a])), formatB5(b5Digest(tinydep, [a])));
});

test("only module files count: .proto, LICENSE and the first doc file", () => {
  const withExtras = [
    ...tiny,
    file("buf.yaml", "version: v2\n"),
    file("buf.lock", "# lock\n"),
    file("notes.txt", "x"),
    file("sub/LICENSE", "nested license is not the module's"),
  ];
  assert.equal(formatB5(b5Digest(withExtras)), tinyB5);
  const docs = [file("README.md", "readme"), file("buf.md", "bufmd"), file("README.markdown", "x")];
  assert.deepEqual(
    selectModuleFiles(docs).map((f) => f.path),
    ["buf.md"],
  );
  assert.deepEqual(
    selectModuleFiles([file("README.markdown", "x"), file("README.md", "y")]).map((f) => f.path),
    ["README.md"],
  );
  assert.notEqual(formatB5(b5Digest([...tiny, file("README.md", "doc")])), tinyB5, "a doc file counts");
});

test("paths sort in byte order, not locale order", () => {
  const files = [file("b.proto", ""), file("B.proto", ""), file("a.proto", "")];
  const paths = moduleManifest(files)
    .trimEnd()
    .split("\n")
    .map((line) => line.split("  ")[1]);
  assert.deepEqual(paths, ["B.proto", "a.proto", "b.proto"]);
});

test("parseB5 refuses what is not b5:<128 hex>", () => {
  assert.throws(() => parseB5("shake256:00"), /not a b5 digest/);
  assert.throws(() => parseB5(`b5:${"0".repeat(64)}`), /not a b5 digest/);
  assert.equal(parseB5(tinyB5).length, 64);
});
