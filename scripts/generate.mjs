#!/usr/bin/env node
// Regenerates src/gen from proto/ and examples/proto/ (the demo API) with the buf binary and
// protoc-gen-es from node_modules (no network).
// The google.rpc error-detail protos come from the google-proto-files package at generation time.
// Usage: node scripts/generate.mjs [--out DIR]   (default: src/gen)
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const outArg = process.argv.indexOf("--out");
const out = resolve(outArg > 0 ? process.argv[outArg + 1] : join(root, "src/gen"));

const buf = join(
  dirname(
    require.resolve(
      `@bufbuild/buf-${process.platform}-${process.arch === "x64" ? "x64" : process.arch}/package.json`,
    ),
  ),
  "bin",
  "buf",
);
const plugin = join(root, "node_modules/.bin/protoc-gen-es");
const googleProtos = join(dirname(require.resolve("google-proto-files/package.json")), "google/rpc");

const work = mkdtempSync(join(tmpdir(), "protocall-gen-"));
try {
  cpSync(join(root, "proto"), join(work, "proto"), { recursive: true });
  cpSync(join(root, "examples/proto"), join(work, "examples"), { recursive: true });
  for (const f of ["status.proto", "error_details.proto", "code.proto"]) {
    cpSync(join(googleProtos, f), join(work, "proto/google/rpc", f));
  }
  writeFileSync(join(work, "buf.yaml"), "version: v2\nmodules:\n  - path: proto\n  - path: examples\n");
  const template = {
    version: "v2",
    clean: true,
    plugins: [{ local: plugin, out, opt: ["target=ts", "import_extension=none"] }],
  };
  rmSync(out, { recursive: true, force: true });
  execFileSync(buf, ["generate", "--template", JSON.stringify(template)], { cwd: work, stdio: "inherit" });
} finally {
  rmSync(work, { recursive: true, force: true });
}
