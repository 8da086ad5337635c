#!/usr/bin/env node
// Bundles the three entry points into one file each: dist/extension.js, dist/server.js, dist/cli.js.
// `node esbuild.mjs --release` minifies; source maps are always written. `--watch` rebuilds on change.
import { existsSync } from "node:fs";
import * as esbuild from "esbuild";

const release = process.argv.includes("--release");
const watch = process.argv.includes("--watch");

const entries = [
  { in: "src/extension/extension.ts", out: "extension", external: ["vscode"] },
  { in: "src/server/server.ts", out: "server", external: [] },
  { in: "src/cli/main.ts", out: "cli", external: [], banner: "#!/usr/bin/env node" },
  // protoc-gen-rpc never transpiles, so the TypeScript compiler that @bufbuild/protoplugin depends on
  // (and installs with it) stays out of the bundle.
  {
    in: "src/plugin/protoc-gen-rpc.ts",
    out: "protoc-gen-rpc",
    external: ["typescript", "@typescript/vfs"],
    banner: "#!/usr/bin/env node",
  },
];

// @bufbuild/protoplugin (comments and declarations for hover docs) imports @typescript/vfs for its
// transpiler, which the CLI and the language server never call. Resolving it to an empty module keeps
// that code (and its require.resolve of the TypeScript compiler) out of those bundles.
const withoutTranspiler = {
  name: "without-typescript-transpiler",
  setup(build) {
    build.onResolve({ filter: /^@typescript\/vfs$/ }, () => ({ path: "typescript-vfs", namespace: "empty" }));
    build.onLoad({ filter: /.*/, namespace: "empty" }, () => ({
      contents: "module.exports = {};",
      loader: "js",
    }));
  },
};

const builds = [];
for (const entry of entries) {
  if (!existsSync(entry.in)) continue;
  const options = {
    entryPoints: { [entry.out]: entry.in },
    outdir: "dist",
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    sourcemap: true,
    minify: release,
    keepNames: false,
    legalComments: "none",
    external: entry.external,
    banner: entry.banner ? { js: entry.banner } : undefined,
    logLevel: "warning",
    define: { "process.env.PROTOCALL_BUNDLED": '"1"' },
    plugins: entry.out === "protoc-gen-rpc" ? [] : [withoutTranspiler],
  };
  if (watch) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
  } else {
    builds.push(esbuild.build(options));
  }
}
await Promise.all(builds);
