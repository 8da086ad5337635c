// Shared by the benchmarks: the bundled buf binary, and the descriptor set of google-proto-files
// (about 83 MB with source info), built once with buf and cached under node_modules/.cache.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(join(root, "package.json"));

/** The buf binary shipped in @bufbuild/buf for this platform. */
export function bufBinary() {
  const arch = process.arch === "x64" ? "x64" : process.arch === "arm64" ? "aarch64" : process.arch;
  return join(
    dirname(require.resolve(`@bufbuild/buf-${process.platform}-${arch}/package.json`)),
    "bin",
    "buf",
  );
}

// Directories buf cannot build (or that duplicate the well-known types).
const excluded = [
  "build",
  "gapic",
  "grafeas",
  "google/protobuf",
  "google/cloud/binaryauthorization",
  "google/devtools/containeranalysis",
];

/** Builds the google-proto-files descriptor set once; returns its path. */
export async function ensureLargeSchemaSet() {
  const gpf = dirname(require.resolve("google-proto-files/package.json"));
  const version = JSON.parse(readFileSync(join(gpf, "package.json"), "utf8")).version;
  const cache = join(root, "node_modules/.cache/protocall-bench");
  const path = join(cache, `google-proto-files-${version}.binpb`);
  if (existsSync(path)) return path;
  mkdirSync(cache, { recursive: true });
  const partial = `${path}.${process.pid}.tmp`;
  process.stderr.write(`building ${path} with buf (once)...\n`);
  const args = ["build", gpf, ...excluded.flatMap((e) => ["--exclude-path", join(gpf, e)]), "-o", partial];
  await new Promise((resolve, reject) => {
    execFile(bufBinary(), args, { timeout: 600_000, maxBuffer: 64 << 20 }, (err, _stdout, stderr) =>
      err ? reject(new Error(`buf build failed:\n${stderr || err.message}`)) : resolve(),
    );
  });
  renameSync(partial, path);
  return path;
}
