#!/usr/bin/env node
// `npm run package`: builds the release bundles and packs the extension with @vscode/vsce into
//   protocall-<version>.vsix            every platform; compiles with protocall.bufPath or buf on PATH
//   protocall-linux-x64-<version>.vsix  linux-x64, carrying the buf binary of @bufbuild/buf-linux-x64
// The extension's code is bundled (dist/extension.js, loading dist/extension-lazy.js on first use;
// dist/server.js), so the only file a package
// needs from node_modules is the platform's buf, which dist/server.js finds with
// require.resolve("@bufbuild/buf-<platform>/bin/buf"). vsce never packs node_modules with
// --no-dependencies, so each package is staged in a temp folder whose package.json depends on that
// one platform package (the linux-x64 package) or on nothing (the universal one).
// Usage: npm run package [-- --no-build] [--out DIR] [--only universal|linux-x64]
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const outIndex = argv.indexOf("--out");
const outDir = resolve(outIndex >= 0 ? argv[outIndex + 1] : root);
const onlyIndex = argv.indexOf("--only");
const only = onlyIndex >= 0 ? argv[onlyIndex + 1] : undefined;

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`${[cmd, ...args].join(" ")} failed (exit ${r.status})`);
}

/** The files of the extension (what .vscodeignore lets through), relative to the repository root. */
const files = [
  "package.json",
  "README.md",
  "language-configuration.json",
  "media",
  "syntaxes",
  "dist/extension.js",
  "dist/extension.js.map",
  "dist/extension-lazy.js",
  "dist/extension-lazy.js.map",
  "dist/server.js",
  "dist/server.js.map",
];

const bufPackages = { "linux-x64": "@bufbuild/buf-linux-x64" };

function stage(target) {
  const dir = mkdtempSync(join(tmpdir(), "protocall-package-"));
  for (const f of files) {
    if (existsSync(join(root, f))) cpSync(join(root, f), join(dir, f), { recursive: true });
  }
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  // Only what the packaged extension needs: no CLI bins, scripts or development dependencies.
  delete manifest.devDependencies;
  delete manifest.scripts;
  delete manifest.bin;
  delete manifest.allowScripts;
  // `files` says what the npm package carries; the staged folder holds exactly what the extension
  // ships, and vsce refuses `files` beside a .vscodeignore.
  delete manifest.files;
  manifest.dependencies = {};
  const bufPkg = target ? bufPackages[target] : undefined;
  if (bufPkg) {
    const from = join(root, "node_modules", bufPkg);
    const bin = join(from, "bin/buf");
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run npm install on ${target}`);
    const to = join(dir, "node_modules", bufPkg);
    mkdirSync(join(to, "bin"), { recursive: true });
    cpSync(join(from, "package.json"), join(to, "package.json"));
    cpSync(bin, join(to, "bin/buf"));
    const version = JSON.parse(readFileSync(join(from, "package.json"), "utf8")).version;
    manifest.dependencies[bufPkg] = version;
  }
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  // Links to other files of the repository mean nothing inside a package: keep their text.
  const readme = join(dir, "README.md");
  if (existsSync(readme)) {
    writeFileSync(
      readme,
      readFileSync(readme, "utf8").replace(/\[([^\]]+)\]\((?!https?:|#|mailto:)[^)]+\)/g, "$1"),
    );
  }
  // Everything staged is meant to ship; vsce's own defaults still apply.
  writeFileSync(join(dir, ".vscodeignore"), "node_modules/**/*.md\n");
  return { dir, manifest, bufPkg };
}

function vsce(dir, out, target, withDependencies) {
  const bin = join(root, "node_modules/@vscode/vsce/vsce");
  const args = [bin, "package", "--out", out, "--skip-license", "--allow-missing-repository"];
  if (target) args.push("--target", target);
  if (!withDependencies) args.push("--no-dependencies");
  run(process.execPath, args, dir);
}

function main() {
  if (!argv.includes("--no-build")) run(process.execPath, [join(root, "esbuild.mjs"), "--release"], root);
  for (const f of ["dist/extension.js", "dist/extension-lazy.js", "dist/server.js"]) {
    if (!existsSync(join(root, f))) throw new Error(`${f} is missing: the build did not make it`);
  }
  mkdirSync(outDir, { recursive: true });
  const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
  const made = [];
  const targets = [undefined, "linux-x64"].filter((t) => !only || (t ?? "universal") === only);
  for (const target of targets) {
    const { dir, bufPkg } = stage(target);
    try {
      const out = join(outDir, target ? `protocall-${target}-${version}.vsix` : `protocall-${version}.vsix`);
      vsce(dir, out, target, Boolean(bufPkg));
      made.push(`${out} (${(statSync(out).size / 1e6).toFixed(1)} MB)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  process.stdout.write(`\nPackaged:\n${made.map((m) => `  ${m}`).join("\n")}\n`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`package: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
