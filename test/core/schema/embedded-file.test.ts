// The bundles build generated descriptors with the library's fileDesc() patched to decode with
// descriptor-decode.ts (scripts/embedded-file-desc.mjs): bundled here with that plugin, it must build
// the same file as the library's own from the same embedded descriptor, for every generated module of
// the project and every well-known file of @bufbuild/protobuf.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import type { DescFile } from "@bufbuild/protobuf";
import * as esbuild from "esbuild";
import { difference } from "../../support/descriptor-compare";

const root = join(import.meta.dirname, "../../..");
const require = createRequire(import.meta.url);

let fileDesc: (b64: string, imports?: DescFile[]) => DescFile;
let tmp: string;

before(async () => {
  const { embeddedFileDesc } = await import(join(root, "scripts/embedded-file-desc.mjs"));
  const built = await esbuild.build({
    stdin: { contents: 'export { fileDesc } from "@bufbuild/protobuf/codegenv2";', resolveDir: root },
    bundle: true,
    platform: "node",
    format: "cjs",
    write: false,
    logLevel: "error",
    plugins: [embeddedFileDesc],
  });
  const text = built.outputFiles[0].text;
  // The bundle decodes with descriptor-decode.ts and holds no descriptor of descriptor.proto.
  assert.match(text, /decodeFileDescriptorProto\(base64Decode\(b64\)\)/);
  assert.doesNotMatch(text, /bootFileDescriptorProto/);
  tmp = mkdtempSync(join(tmpdir(), "protocall-filedesc-"));
  writeFileSync(join(tmp, "file-desc.cjs"), text);
  fileDesc = require(join(tmp, "file-desc.cjs")).fileDesc;
});
after(() => rmSync(tmp, { recursive: true, force: true }));

function generatedModules(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) generatedModules(path, out);
    else if (/_pb\.(ts|js)$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** The embedded descriptor and the name of the exported file of a generated module. */
function embedded(path: string): { b64: string; exportName: string } | undefined {
  const text = readFileSync(path, "utf8");
  const m = /export const (file_\w+)(?:: GenFile)? = \/\*@__PURE__\*\/\s*fileDesc\("([A-Za-z0-9+/=]+)"/.exec(
    text,
  );
  return m ? { exportName: m[1], b64: m[2] } : undefined;
}

/** Compares two built files: the same descriptor and the same types with the same JSON names. */
function assertSameFile(ours: DescFile, theirs: DescFile, label: string): void {
  assert.equal(difference(ours.proto, theirs.proto), undefined, label);
  const shape = (f: DescFile) => [
    f.name,
    f.dependencies.map((d) => d.name),
    f.messages.map((m) => [m.typeName, m.fields.map((x) => `${x.name}:${x.jsonName}:${x.fieldKind}`)]),
    f.enums.map((e) => [e.typeName, e.values.map((v) => v.number)]),
    f.services.map((s) => [s.typeName, s.methods.map((x) => `${x.name}:${x.methodKind}`)]),
    f.extensions.map((x) => x.typeName),
  ];
  assert.deepEqual(shape(ours), shape(theirs), label);
}

test("every generated module of the project builds the same file both ways", async () => {
  const modules = generatedModules(join(root, "src/gen"));
  let checked = 0;
  for (const path of modules) {
    const found = embedded(path);
    if (!found) continue;
    const mod = (await import(path)) as Record<string, DescFile>;
    const theirs = mod[found.exportName];
    assertSameFile(fileDesc(found.b64, theirs.dependencies), theirs, path);
    checked++;
  }
  assert.ok(checked >= 10, `${checked} of ${modules.length} modules checked`);
});

test("every well-known file of @bufbuild/protobuf builds the same file both ways", async () => {
  const esm = join(dirname(require.resolve("@bufbuild/protobuf")), "../esm");
  const wktDir = join(esm, "wkt/google/protobuf");
  const dirs = [wktDir, join(wktDir, "compiler")];
  let checked = 0;
  for (const dir of dirs) {
    for (const name of readdirSync(dir).filter((n) => n.endsWith("_pb.js"))) {
      const path = join(dir, name);
      const found = embedded(path);
      // descriptor.proto boots itself (no fileDesc); every other well-known file is embedded.
      if (!found) {
        assert.equal(name, "descriptor_pb.js");
        continue;
      }
      const theirs = ((await import(path)) as Record<string, DescFile>)[found.exportName];
      assertSameFile(fileDesc(found.b64, theirs.dependencies), theirs, path);
      checked++;
    }
  }
  assert.ok(checked >= 13, `${checked} well-known files checked`);
});

test("a damaged embedded descriptor fails with the decoder's error", () => {
  assert.throws(() => fileDesc("CgR4"), /premature EOF/);
});

test("the build stops when an upgrade changed the lines the patch replaces", async () => {
  const { patchFileDesc } = await import(join(root, "scripts/embedded-file-desc.mjs"));
  const text = readFileSync(
    join(dirname(require.resolve("@bufbuild/protobuf")), "../esm/codegenv2/file.js"),
    "utf8",
  );
  assert.doesNotThrow(() => patchFileDesc(text));
  assert.throws(
    () => patchFileDesc(text.replace("fromBinary(FileDescriptorProtoSchema", "fromBinary(Other")),
    /no longer contains .*update scripts\/embedded-file-desc\.mjs/,
  );
});
