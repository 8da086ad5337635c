#!/usr/bin/env node
// Bundles the entry points into one file each: dist/extension.js, dist/server.js, dist/cli.js
// (every command), dist/curl.js (`protocall curl` only), dist/protoc-gen-rpc.js.
// `node esbuild.mjs --release` minifies; source maps are always written. `--watch` rebuilds on change.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import * as esbuild from "esbuild";

const release = process.argv.includes("--release");
const watch = process.argv.includes("--watch");

const entries = [
  { in: "src/extension/extension.ts", out: "extension", external: ["vscode"] },
  { in: "src/server/server.ts", out: "server", external: [] },
  { in: "src/cli/main.ts", out: "cli", external: [], banner: "#!/usr/bin/env node" },
  // `protocall curl` alone (bin/protocall.js runs it for that command): start-up time is a
  // requirement, and a bundle of one command reads, compiles and initialises less.
  { in: "src/cli/curl-main.ts", out: "curl", external: [], banner: "#!/usr/bin/env node" },
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

// Node built-ins that a call needs only sometimes (TLS for https, zlib for compression, a child
// process for building .proto files, tty for a terminal), and that cost start-up time to load. In the
// CLI bundles they load on first use of an export: the module is an object of getters, one per export
// of the built-in (listed when bundling), each loading the real module the first time it is read.
const lazyBuiltins = ["tls", "crypto", "child_process", "tty", "zlib", "https", "http2"];
const lazyBuiltinsPlugin = {
  name: "lazy-builtins",
  setup(build) {
    const filter = new RegExp(`^(node:)?(${lazyBuiltins.join("|")})$`);
    build.onResolve({ filter }, (args) => {
      if (args.namespace === "lazy-builtin") return undefined; // the real module, external
      return { path: args.path.replace(/^node:/, ""), namespace: "lazy-builtin" };
    });
    build.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => {
      const names = Object.keys(createRequire(import.meta.url)(`node:${args.path}`)).filter(
        (name) => name !== "default" && name !== "__esModule",
      );
      const getters = names
        .map(
          (name) =>
            `  ${JSON.stringify(name)}: { enumerable: true, get: () => load()[${JSON.stringify(name)}] },`,
        )
        .join("\n");
      return {
        contents: [
          "let real;",
          `const load = () => real ?? (real = require("node:${args.path}"));`,
          `module.exports = Object.defineProperties({}, {\n${getters}\n});`,
        ].join("\n"),
        loader: "js",
      };
    });
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
    plugins:
      entry.out === "protoc-gen-rpc"
        ? []
        : entry.out === "cli" || entry.out === "curl"
          ? [withoutTranspiler, lazyBuiltinsPlugin]
          : [withoutTranspiler],
  };
  if (watch) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
  } else {
    builds.push(esbuild.build(options));
  }
}
await Promise.all(builds);
