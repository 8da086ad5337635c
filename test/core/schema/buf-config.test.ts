// buf.yaml (v1, v1beta1, v2) and buf.work.yaml as a YAML parser reads them: every form YAML allows
// (comments, quoting, flow sequences, anchors, CRLF), and files buf would refuse rejected with
// file:line:column and what to fix.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import {
  parseBufWorkYaml,
  parseBufYaml,
  readBufWorkYaml,
  readBufYaml,
} from "../../../src/core/schema/buf-config";

const temp = mkdtempSync(join(tmpdir(), "protocall-buf-config-"));
after(() => rmSync(temp, { recursive: true, force: true }));

/** Asserts that parsing rejects with a ProtocallError whose one-line message matches `pattern`. */
async function rejects(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(p, (err: Error) => {
    assert.ok(err instanceof ProtocallError, String(err));
    assert.doesNotMatch(err.message, /\n/);
    assert.match(err.message, pattern);
    return true;
  });
}

describe("buf.yaml v2", () => {
  test("modules with paths and excludes, deps, comments, quoted strings and flow sequences", async () => {
    const text = [
      "# The workspace.",
      "version: 'v2' # quoted, with a comment",
      "modules:",
      '  - path: "./proto/"   # normalised to proto',
      "    name: buf.build/acme/api",
      "    excludes: [proto/tmp, 'proto/generated/']",
      "    lint:",
      "      use: [STANDARD]",
      "  - {path: vendor/third_party}",
      "  - path: tools",
      "    excludes:",
      "      - tools/scratch # block list",
      "deps:",
      "  - buf.build/googleapis/googleapis",
      '  - "buf.build/bufbuild/protovalidate"',
      "",
    ].join("\n");
    assert.deepEqual(await parseBufYaml(text, "/w/buf.yaml"), {
      file: "/w/buf.yaml",
      version: "v2",
      modules: [
        { path: "proto", excludes: ["proto/tmp", "proto/generated"] },
        { path: "vendor/third_party", excludes: [] },
        { path: "tools", excludes: ["tools/scratch"] },
      ],
      deps: ["buf.build/googleapis/googleapis", "buf.build/bufbuild/protovalidate"],
    });
  });

  test("without modules, the folder itself is the one module; CRLF, a BOM and anchors read too", async () => {
    assert.deepEqual(await parseBufYaml("version: v2\n", "/w/buf.yaml"), {
      file: "/w/buf.yaml",
      version: "v2",
      modules: [{ path: ".", excludes: [] }],
      deps: [],
    });
    const crlf =
      "\uFEFFversion: v2\r\nmodules:\r\n  - path: a\r\n    excludes: &skip [a/x]\r\n  - path: b\r\n";
    const parsed = await parseBufYaml(crlf, "/w/buf.yaml");
    assert.deepEqual(parsed.modules, [
      { path: "a", excludes: ["a/x"] },
      { path: "b", excludes: [] },
    ]);
    const aliased = await parseBufYaml(
      "version: v2\nmodules:\n  - path: a\n    excludes: &skip [a/x]\n  - path: b\n    excludes: *skip\n",
      "/w/buf.yaml",
    );
    assert.deepEqual(aliased.modules[1], { path: "b", excludes: ["a/x"] });
  });
});

describe("buf.yaml v1 and v1beta1", () => {
  test("one module, the folder itself, with build.excludes and deps", async () => {
    const text = [
      "version: v1",
      "name: buf.build/acme/legacy",
      "deps:",
      "  - buf.build/googleapis/googleapis",
      "build:",
      "  excludes:",
      "    - vendor",
      "    - ./generated/",
      "breaking:",
      "  use: [FILE]",
    ].join("\n");
    assert.deepEqual(await parseBufYaml(text, "/m/buf.yaml"), {
      file: "/m/buf.yaml",
      version: "v1",
      modules: [{ path: ".", excludes: ["vendor", "generated"] }],
      deps: ["buf.build/googleapis/googleapis"],
    });
    const beta = await parseBufYaml('version: "v1beta1"\nbuild:\n  roots: [proto]\n', "/m/buf.yaml");
    assert.equal(beta.version, "v1beta1");
    assert.deepEqual(beta.modules, [{ path: ".", excludes: [] }]);
  });
});

describe("buf.work.yaml", () => {
  test("directories in block and flow form, quoted and with ./ prefixes, and comments", async () => {
    assert.deepEqual(
      await parseBufWorkYaml(
        "version: v1\ndirectories:\n  - ./proto   # the API\n  - 'vendor/'\n",
        "/w/buf.work.yaml",
      ),
      { file: "/w/buf.work.yaml", version: "v1", directories: ["proto", "vendor"] },
    );
    const flow = await parseBufWorkYaml('version: v1\ndirectories: [a, "b/c"]\n', "/w/buf.work.yaml");
    assert.deepEqual(flow.directories, ["a", "b/c"]);
  });
});

describe("files buf would refuse: one line with file:line:column and the fix", () => {
  test("malformed YAML", async () => {
    await rejects(
      parseBufYaml("version: v2\nmodules:\n  - path: proto\n   excludes: [x\n", "/w/buf.yaml"),
      /^\/w\/buf\.yaml:4:\d+: invalid YAML: .+; fix the file/,
    );
    await rejects(
      parseBufWorkYaml('version: v1\ndirectories:\n  - "a\n', "/w/buf.work.yaml"),
      /^\/w\/buf\.work\.yaml:4:1: invalid YAML: Missing closing "quote; fix the file/,
    );
    await rejects(
      parseBufYaml("version: v2\nversion: v1\n", "/w/buf.yaml"),
      /^\/w\/buf\.yaml:2:1: invalid YAML: Map keys must be unique/,
    );
  });

  test("fields of the wrong shape name the field and its line", async () => {
    await rejects(
      parseBufYaml("version: v2\nmodules: 3\n", "/w/buf.yaml"),
      /^\/w\/buf\.yaml:2:10: "modules" must be a list/,
    );
    await rejects(
      parseBufYaml("version: v2\nmodules:\n  - proto\n", "/w/buf.yaml"),
      /^\/w\/buf\.yaml:3:5: "modules\[0\]" must be a mapping \(such as "path: proto"\)$/,
    );
    await rejects(
      parseBufYaml("version: v2\nmodules:\n  - path: [a]\n", "/w/buf.yaml"),
      /^\/w\/buf\.yaml:3:11: "modules\[0\]\.path" must be a string$/,
    );
    await rejects(
      parseBufWorkYaml("version: v1\ndirectories:\n  - a\n  - {x: 1}\n", "/w/buf.work.yaml"),
      /^\/w\/buf\.work\.yaml:4:5: "directories\[1\]" must be a string$/,
    );
    await rejects(parseBufYaml("- a\n", "/w/buf.yaml"), /^\/w\/buf\.yaml:1:1: expected a mapping of keys/);
  });

  test("no version, an unknown version, a path outside the folder", async () => {
    await rejects(
      parseBufYaml("deps: []\n", "/w/buf.yaml"),
      /^\/w\/buf\.yaml:1:1: "version" is not set; add "version: v2"/,
    );
    await rejects(parseBufYaml("", "/w/buf.yaml"), /"version" is not set/);
    await rejects(
      parseBufYaml("version: v3\n", "/w/buf.yaml"),
      /^\/w\/buf\.yaml:1:10: unknown version "v3"; use v2 \(known: v1beta1, v1, v2\)$/,
    );
    await rejects(parseBufWorkYaml("version: v2\n", "/w/buf.work.yaml"), /unknown version "v2"; use v1/);
    await rejects(
      parseBufYaml("version: v2\nmodules:\n  - path: ../x\n", "/w/buf.yaml"),
      /^\/w\/buf\.yaml:3:11: "\.\.\/x" is outside the folder of this file; use a path inside it$/,
    );
    await rejects(
      parseBufWorkYaml("version: v1\ndirectories: [/abs]\n", "/w/buf.work.yaml"),
      /^\/w\/buf\.work\.yaml:2:15: "\/abs" is outside the folder/,
    );
  });
});

test("readBufYaml and readBufWorkYaml read the folder's file, undefined when there is none", async () => {
  const dir = join(temp, "read");
  mkdirSync(dir);
  assert.equal(await readBufYaml(dir), undefined);
  assert.equal(await readBufWorkYaml(dir), undefined);
  assert.equal(await readBufYaml(join(temp, "missing")), undefined);
  writeFileSync(join(dir, "buf.yaml"), "version: v1\n");
  writeFileSync(join(dir, "buf.work.yaml"), "version: v1\ndirectories: [m]\n");
  assert.deepEqual((await readBufYaml(dir))?.modules, [{ path: ".", excludes: [] }]);
  assert.deepEqual((await readBufWorkYaml(dir))?.directories, ["m"]);
  writeFileSync(join(dir, "buf.yaml"), "version: v2\nmodules:\n  - path: a\n  path: b\n");
  await rejects(
    readBufYaml(dir),
    new RegExp(`^${join(dir, "buf.yaml").replace(/[./]/g, "\\$&")}:\\d+:\\d+: invalid YAML`),
  );
});
