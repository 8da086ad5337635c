import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import {
  enclosingWorkspace,
  findBuildRoot,
  findWorkspaceRoots,
  listProtoFiles,
} from "../../../src/core/schema/workspace";

const temp = mkdtempSync(join(tmpdir(), "protocall-workspace-"));
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

const proto = (pkg: string) => `syntax = "proto3";\npackage ${pkg};\n`;

test("findWorkspaceRoots returns each buf.yaml and buf.work.yaml root without searching inside it", async () => {
  const dir = tree({
    "services/buf.yaml": "version: v2\nmodules:\n  - path: proto\n",
    "services/proto/a/v1/a.proto": proto("a.v1"),
    "legacy/buf.work.yaml": "version: v1\ndirectories:\n  - m\n",
    "legacy/m/buf.yaml": "version: v1\n",
    "legacy/m/b/b.proto": proto("b"),
    "single/buf.yaml": "version: v1\n",
    "single/c.proto": proto("c"),
  });
  assert.deepEqual(await findWorkspaceRoots(dir), [
    join(dir, "legacy"),
    join(dir, "services"),
    join(dir, "single"),
  ]);
});

test("findWorkspaceRoots finds the import root of loose .proto files from their package", async () => {
  const dir = tree({
    "api/acme/pay/v1/pay.proto": proto("acme.pay.v1"),
    "api/acme/pay/v1/types.proto": proto("acme.pay.v1"),
    "api/acme/user/v1/user.proto": proto("acme.user.v1"),
    "misc/thing.proto": proto("unrelated.pkg"),
    "misc/nested/deeper.proto": proto("other"),
    "node_modules/dep/dep.proto": proto("dep"),
    ".hidden/h.proto": proto("h"),
  });
  assert.deepEqual(await findWorkspaceRoots(dir), [join(dir, "api"), join(dir, "misc")]);
});

test("findWorkspaceRoots of a folder that is itself a module is that folder", async () => {
  const dir = tree({ "buf.yaml": "version: v2\n", "x/x.proto": proto("x") });
  assert.deepEqual(await findWorkspaceRoots(dir), [dir]);
  assert.deepEqual(await findWorkspaceRoots(tree({ "readme.md": "#" })), []);
  assert.deepEqual(await findWorkspaceRoots(join(temp, "missing")), []);
});

test("findBuildRoot: the enclosing v2 workspace that lists the file's module", async () => {
  const dir = tree({
    "buf.yaml": "version: v2\nmodules:\n  - path: proto\n    excludes:\n      - proto/tmp\n",
    "proto/a/v1/a.proto": proto("a.v1"),
  });
  assert.deepEqual(await findBuildRoot(join(dir, "proto/a/v1/a.proto")), {
    root: dir,
    path: "proto/a/v1/a.proto",
  });
});

test("findBuildRoot: a buf.work.yaml above a v1 module wins; a v1 module alone is the root", async () => {
  const dir = tree({
    "buf.work.yaml": "version: v1\ndirectories:\n  - ./m1\n",
    "m1/buf.yaml": "version: v1\n",
    "m1/a/a.proto": proto("a"),
    "other/buf.yaml": "version: v1\n",
    "other/b/b.proto": proto("b"),
  });
  assert.deepEqual(await findBuildRoot(join(dir, "m1/a/a.proto")), { root: dir, path: "m1/a/a.proto" });
  // other/ is not listed in buf.work.yaml, so its own module is the root.
  assert.deepEqual(await findBuildRoot(join(dir, "other/b/b.proto")), {
    root: join(dir, "other"),
    path: "b/b.proto",
  });
});

test("findBuildRoot: without any buf config, the file's folder", async () => {
  const dir = tree({ "x/y/z.proto": proto("x.y") });
  assert.deepEqual(await findBuildRoot(join(dir, "x/y/z.proto")), {
    root: join(dir, "x/y"),
    path: "z.proto",
  });
});

test("enclosingWorkspace: the workspace a directory belongs to, else the directory", async () => {
  const dir = tree({
    "buf.work.yaml": "version: v1\ndirectories:\n  - m1\n",
    "m1/buf.yaml": "version: v1\n",
    "m1/a/a.proto": proto("a"),
    "loose/l.proto": proto("l"),
  });
  assert.equal(await enclosingWorkspace(join(dir, "m1")), dir);
  assert.equal(await enclosingWorkspace(join(dir, "m1/a")), dir);
  assert.equal(await enclosingWorkspace(join(dir, "loose")), join(dir, "loose"));
  assert.equal(await enclosingWorkspace(dir), dir);
});

test("listProtoFiles lists .proto files, skipping node_modules and hidden folders", async () => {
  const dir = tree({
    "b.proto": "",
    "sub/a.proto": "",
    "sub/notes.txt": "",
    "node_modules/x/x.proto": "",
    ".git/y.proto": "",
  });
  assert.deepEqual(await listProtoFiles(dir), [join(dir, "b.proto"), join(dir, "sub/a.proto")]);
});

test("findBuildRoot reads the config as YAML: excludes are not modules, flow and quoted forms count", async () => {
  const dir = tree({
    "buf.yaml": [
      "version: v2",
      "# - path: commented",
      "modules:",
      "  - path: proto",
      "    excludes:",
      "      - proto/tmp",
      "      - other",
      "",
    ].join("\n"),
    "proto/a/a.proto": proto("a"),
    "proto/tmp/t.proto": proto("t"),
    "other/o.proto": proto("o"),
    "commented/c.proto": proto("c"),
  });
  assert.deepEqual(await findBuildRoot(join(dir, "proto/a/a.proto")), { root: dir, path: "proto/a/a.proto" });
  // An excluded folder, an exclude item and a comment are no modules of the workspace.
  for (const file of ["proto/tmp/t.proto", "other/o.proto", "commented/c.proto"]) {
    assert.deepEqual(await findBuildRoot(join(dir, file)), {
      root: dirname(join(dir, file)),
      path: file.split("/").pop(),
    });
  }
  const flow = tree({
    "buf.work.yaml": "version: v1\ndirectories: [\"m1\", './m2/'] # two modules\n",
    "m2/buf.yaml": "version: v1\n",
    "m2/b/b.proto": proto("b"),
    "m3/buf.yaml": "version: v1\n",
    "m3/c.proto": proto("c"),
  });
  assert.deepEqual(await findBuildRoot(join(flow, "m2/b/b.proto")), { root: flow, path: "m2/b/b.proto" });
  assert.deepEqual(await findBuildRoot(join(flow, "m3/c.proto")), {
    root: join(flow, "m3"),
    path: "c.proto",
  });
  const mapped = tree({
    "buf.yaml": "version: v2\nmodules: [{path: a}]\n",
    "a/a.proto": proto("a"),
    "b/b.proto": proto("b"),
  });
  assert.equal(await enclosingWorkspace(join(mapped, "a")), mapped);
  assert.equal(await enclosingWorkspace(join(mapped, "b")), join(mapped, "b"));
});

test("a malformed buf.yaml or buf.work.yaml fails with its file:line:column", async () => {
  const dir = tree({
    "buf.yaml": "version: v2\nmodules:\n  - path: proto\n   excludes: [x\n",
    "proto/a.proto": proto("a"),
  });
  await assert.rejects(findBuildRoot(join(dir, "proto/a.proto")), {
    name: "ProtocallError",
    message: new RegExp(`^${join(dir, "buf.yaml").replace(/[./]/g, "\\$&")}:4:1: invalid YAML: `),
  });
  const work = tree({ "buf.work.yaml": "version: v1\ndirectories: 7\n", "m/a.proto": proto("a") });
  await assert.rejects(enclosingWorkspace(join(work, "m")), {
    message: `${join(work, "buf.work.yaml")}:2:14: "directories" must be a list; write its items as "- item" lines or [a, b]`,
  });
});
