#!/usr/bin/env node
// Bundles the entry points into one file each: dist/extension.js, dist/server.js, dist/cli.js
// (every command), dist/curl.js (`protocall curl` only), dist/yaml.js (its YAML parser) and
// dist/openid-client.js (its OAuth2 client),
// dist/protoc-gen-rpc.js.
// `node esbuild.mjs --release` minifies; source maps are always written. `--watch` rebuilds on change.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { relative } from "node:path";
import * as esbuild from "esbuild";
import { embeddedFileDesc } from "./scripts/embedded-file-desc.mjs";

const release = process.argv.includes("--release");
const watch = process.argv.includes("--watch");

// The CLI bundles' second line names their build (a hash of the content, written once built):
// bin/protocall.js keys its code cache on it. Same length as the id, so the source map stays true;
// not hexadecimal, so a watch build (never stamped) is keyed on its size and mtime instead.
const buildIdPlaceholder = `//protocall-build ${".".repeat(16)}`;

const entries = [
  { in: "src/extension/extension.ts", out: "extension", external: ["vscode"] },
  { in: "src/server/server.ts", out: "server", external: [] },
  { in: "src/cli/main.ts", out: "cli", external: [], banner: `#!/usr/bin/env node\n${buildIdPlaceholder}` },
  // `protocall curl` alone (bin/protocall.js runs it for that command): start-up time is a
  // requirement, and a bundle of one command reads, compiles and initialises less.
  {
    in: "src/cli/curl-main.ts",
    out: "curl",
    external: [],
    banner: `#!/usr/bin/env node\n${buildIdPlaceholder}`,
  },
  // The YAML parser alone, for dist/curl.js (see `yamlFromDist`).
  { in: createRequire(import.meta.url).resolve("yaml"), out: "yaml", external: [] },
  // The OAuth2 client alone, for dist/curl.js (see `fromDist`).
  { in: createRequire(import.meta.url).resolve("openid-client"), out: "openid-client", external: [] },
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

// dist/curl.js loads the `yaml` package from dist/yaml.js (a bundle of it alone) when it first needs
// it: only a --schema directory reads a buf.yaml, and 160 KB of parser in the curl bundle would cost
// every call its reading and code-cache space (page faults are much of a cold start).
// The same for `openid-client` (with oauth4webapi and jose, ~160 KB): only an --auth call needs it.
const fromDist = (name) => ({
  name: `${name}-from-dist`,
  setup(build) {
    const namespace = `dist-${name}`;
    const file = `./${name}.js`;
    // Through require(): a dynamic import() in a vm.Script (bin/protocall.js) warns that it is experimental.
    build.onResolve({ filter: new RegExp(`^${name}$`) }, () => ({ path: name, namespace }));
    build.onLoad({ filter: /.*/, namespace }, () => ({
      contents: `module.exports = require(${JSON.stringify(file)});`,
      loader: "js",
    }));
    build.onResolve({ filter: new RegExp(`^\\./${name}\\.js$`) }, (args) =>
      args.namespace === namespace ? { path: file, external: true } : undefined,
    );
  },
});
const yamlFromDist = fromDist("yaml");
const openidClientFromDist = fromDist("openid-client");

// Generated _pb modules and well-known files build their descriptors without the library's descriptor
// of descriptor.proto (~12 ms of a cold start): see scripts/embedded-file-desc.mjs.

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

// Generated Protobuf modules (the well-known types of @bufbuild/protobuf, Connect's own, and src/gen)
// build their descriptors when they are initialised: decoding the embedded file and creating its
// registry costs milliseconds per file, and @bufbuild/protobuf's JSON code imports all the well-known
// types through one index. Connect's index likewise initialises its server side (the router and the
// handlers of three protocols) for a client that never serves. In the CLI bundles each such module is
// a lazy module (an object of getters, one per export, that initialises the real module the first
// time one is read), so a call initialises only what it uses.
const lazyInCli = [
  /[\\/]node_modules[\\/]@bufbuild[\\/]protobuf[\\/]dist[\\/]esm[\\/]wkt[\\/]google[\\/]protobuf[\\/].*_pb\.js$/,
  /[\\/]node_modules[\\/]@connectrpc[\\/]connect[\\/]dist[\\/]esm[\\/].*[\\/]gen[\\/][^\\/]*_pb\.js$/,
  /[\\/]node_modules[\\/]@connectrpc[\\/]connect[\\/]dist[\\/]esm[\\/]router(-transport)?\.js$/,
  /[\\/]src[\\/]gen[\\/].*_pb\.ts$/,
];
const lazyGeneratedPlugin = {
  name: "lazy-generated",
  setup(build) {
    build.onResolve({ filter: /(_pb|router|router-transport)(\.js)?$/ }, async (args) => {
      if (args.pluginData?.real || args.namespace === "lazy-generated") return undefined;
      const real = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: { real: true },
      });
      if (real.errors.length > 0 || real.external || !lazyInCli.some((re) => re.test(real.path)))
        return undefined;
      // Named by its path in the project (the bundle holds no path of the machine that built it).
      const key = relative(process.cwd(), real.path).replaceAll("\\", "/");
      return { path: key, namespace: "lazy-generated", pluginData: { file: real.path } };
    });
    build.onLoad({ filter: /.*/, namespace: "lazy-generated" }, async (args) => {
      const file = args.pluginData.file;
      const names = (await exportsOf(file)).filter((n) => n !== "default" && n !== "__esModule");
      const getters = names
        .map((n) => `  ${JSON.stringify(n)}: { enumerable: true, get: () => load()[${JSON.stringify(n)}] },`)
        .join("\n");
      return {
        contents: [
          "let real;",
          `const load = () => real ?? (real = require(${JSON.stringify(file)}));`,
          `module.exports = Object.defineProperties({ __esModule: true }, {\n${getters}\n});`,
        ].join("\n"),
        loader: "js",
      };
    });
    build.onResolve({ filter: /.*/ }, (args) =>
      args.namespace === "lazy-generated" && args.kind === "require-call" ? { path: args.path } : undefined,
    );
  },
};

// The extension's activation time is a requirement (≤ 50 ms), and activate() only registers commands,
// views and a language client: the code behind them (calls over Connect/gRPC, schemas, the webhook
// client, listener and local registry, their Protobuf descriptors, self-signed certificates) runs on a
// user's first click. In the extension bundle every module outside src/extension that a file of src/
// imports is therefore a lazy module: an object of getters, one per export (listed when bundling),
// that initialises the real module (and what it imports) the first time one of them is read. Modules
// only reached that way are evaluated on first use; their code is still in the one bundle file.
// (src/ has no import for side effects only, which a lazy module would never run.)
const eagerForExtension = /^(vscode|node:.*)$/;
const exportNames = new Map();
async function exportsOf(path) {
  if (!exportNames.has(path)) {
    const r = await esbuild.build({
      entryPoints: [path],
      bundle: true,
      write: false,
      metafile: true,
      format: "esm",
      platform: "node",
      packages: "external",
      logLevel: "silent",
    });
    exportNames.set(path, Object.values(r.metafile.outputs)[0].exports);
  }
  return exportNames.get(path);
}
// Small modules of src/ that activation itself runs: they stay in dist/extension.js (so activating
// does not load dist/extension-lazy.js at all), which exports them for the lazy bundle to share (one
// instance of each: ProtocallError stays one class).
const activationModules = [
  "src/core/errors.ts",
  // provideRegistryModules: activate() gives the schema layer its registry-module opener (loaded lazily).
  "src/core/registry/provide.ts",
  "src/core/schema/registry-modules.ts",
  "src/core/rpcfile/environment.ts",
  "src/core/webhooks/listener-session.ts",
];

/** The exports of a CommonJS module that needs `vscode`: listed by loading it in a child process with a stand-in. */
function commonjsExportsOf(path) {
  const script = [
    'const Module = require("node:module");',
    "const load = Module._load;",
    "const any = new Proxy(function () {}, { get: (t, k) => (k === 'then' ? undefined : k === Symbol.toPrimitive ? () => '' : any), construct: () => any, apply: () => any });",
    "Module._load = function (r, ...a) { return r === 'vscode' ? any : load.call(this, r, ...a); };",
    `process.stdout.write(JSON.stringify(Object.keys(require(${JSON.stringify(path)}))));`,
  ].join("\n");
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cannot list the exports of ${path}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * The lazy-modules plugin. With `split`, the real modules are not in this bundle: each proxy loads its
 * module from dist/extension-lazy.js (built afterwards from the paths collected in `split.paths`), so
 * loading dist/extension.js reads and compiles only what activation runs.
 */
function lazyModules(split, lazyBundle = false) {
  return {
    name: "lazy-modules",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData?.real || (args.kind !== "import-statement" && args.kind !== "dynamic-import")) {
          return undefined;
        }
        if (!/[\\/]src[\\/]/.test(args.importer) || eagerForExtension.test(args.path)) return undefined;
        if (/^[a-z]+$/.test(args.path) && createRequire(import.meta.url)("node:module").isBuiltin(args.path))
          return undefined;
        const real = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          pluginData: { real: true },
        });
        if (real.errors.length > 0 || real.external) return undefined;
        const key = relative(process.cwd(), real.path).replaceAll("\\", "/");
        if (activationModules.includes(key)) {
          // In dist/extension.js itself; the lazy bundle takes it from there.
          return split ? undefined : lazyBundle ? { path: key, namespace: "from-extension" } : undefined;
        }
        // The language client (a CommonJS package) starts with the language server, not at activation.
        if (split && /[\\/]node_modules[\\/]vscode-languageclient[\\/]/.test(real.path)) {
          return { path: real.path, namespace: "lazy-module", pluginData: { commonjs: true } };
        }
        // Otherwise only ES modules of our own (src/) or ES module packages have export lists to proxy.
        if (/[\\/]src[\\/]extension[\\/]/.test(real.path) || !/\.(ts|mjs)$|[\\/]esm[\\/]/.test(real.path)) {
          return undefined;
        }
        return { path: real.path, namespace: "lazy-module" };
      });
      build.onLoad({ filter: /.*/, namespace: "from-extension" }, (args) => ({
        contents: `module.exports = require("./extension.js").__activationModules[${JSON.stringify(args.path)}];`,
        loader: "js",
        resolveDir: process.cwd(),
      }));
      build.onResolve({ filter: /^\.\/extension\.js$/ }, (args) =>
        args.namespace === "from-extension" ? { path: args.path, external: true } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: "lazy-module" }, async (args) => {
        const names = (
          args.pluginData?.commonjs ? commonjsExportsOf(args.path) : await exportsOf(args.path)
        ).filter((n) => n !== "default" && n !== "__esModule");
        const getters = names
          .map(
            (n) => `  ${JSON.stringify(n)}: { enumerable: true, get: () => load()[${JSON.stringify(n)}] },`,
          )
          .join("\n");
        const key = relative(process.cwd(), args.path).replaceAll("\\", "/");
        split?.paths.add(key);
        const loader = split
          ? `require("./extension-lazy.js").load(${JSON.stringify(key)})`
          : `require(${JSON.stringify(args.path)})`;
        return {
          contents: [
            "let real;",
            `const load = () => real ?? (real = ${loader});`,
            `module.exports = Object.defineProperties({ __esModule: true }, {\n${getters}\n});`,
          ].join("\n"),
          loader: "js",
          resolveDir: process.cwd(),
        };
      });
      // The require() inside a lazy module reaches the real one (or, split, the other bundle).
      build.onResolve({ filter: /.*/ }, (args) => {
        if (!args.importer || args.namespace !== "lazy-module" || args.kind !== "require-call")
          return undefined;
        return split ? { path: args.path, external: true } : { path: args.path };
      });
    },
  };
}

/** The entry of dist/extension-lazy.js: load(path) initialises and returns the module at that path. */
function lazyBundleEntry(paths) {
  const cases = [...paths]
    .sort()
    .map((p) => `    case ${JSON.stringify(p)}: return require(${JSON.stringify(`./${p}`)});`)
    .join("\n");
  return `exports.load = (path) => {\n  switch (path) {\n${cases}\n  }\n  throw new Error("no module " + path + " in extension-lazy.js");\n};\n`;
}

const builds = [];
const split = { paths: new Set() };
// PROTOCALL_BUNDLE_SPLIT=0: one extension bundle (its lazy modules inside it), e.g. to compare.
const noSplit = process.env.PROTOCALL_BUNDLE_SPLIT === "0";
for (const entry of entries) {
  if (!existsSync(entry.in)) continue;
  const cliBundle =
    entry.out === "cli" || entry.out === "curl" || entry.out === "yaml" || entry.out === "openid-client";
  const options = {
    entryPoints: { [entry.out]: entry.in },
    outdir: "dist",
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    // The extension host loads source maps eagerly (reading and parsing the whole map when the bundle
    // loads): a released extension keeps its map beside it, unreferenced, to start faster.
    sourcemap: release && entry.out === "extension" ? "external" : true,
    minify: release,
    // The CLI bundles are read and compiled at every start: without comments and blanks they are a
    // third smaller (and ASCII, see below). Names stay, so a stack trace stays readable.
    minifyWhitespace: release || cliBundle,
    minifySyntax: release || cliBundle,
    keepNames: false,
    legalComments: "none",
    external: entry.external,
    banner: entry.banner ? { js: entry.banner } : undefined,
    logLevel: "warning",
    define: { "process.env.PROTOCALL_BUNDLED": '"1"' },
    plugins:
      entry.out === "protoc-gen-rpc"
        ? []
        : entry.out === "curl"
          ? [
              withoutTranspiler,
              lazyBuiltinsPlugin,
              lazyGeneratedPlugin,
              embeddedFileDesc,
              yamlFromDist,
              openidClientFromDist,
            ]
          : entry.out === "cli"
            ? [withoutTranspiler, lazyBuiltinsPlugin, lazyGeneratedPlugin, embeddedFileDesc]
            : entry.out === "extension"
              ? [lazyModules(watch || noSplit ? undefined : split), withoutTranspiler, embeddedFileDesc]
              : [withoutTranspiler, embeddedFileDesc],
  };
  if (watch) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
  } else if (entry.out === "extension" && !noSplit) {
    // The extension, then the modules it loads lazily (their paths are known once it is built).
    const exportsOfActivation = activationModules
      .map((m, i) => `import * as m${i} from ${JSON.stringify(`./${m}`)};`)
      .join("\n");
    const table = activationModules.map((m, i) => `${JSON.stringify(m)}: m${i}`).join(", ");
    options.entryPoints = undefined;
    options.stdin = {
      contents: `export * from "./${entry.in}";\n${exportsOfActivation}\nexport const __activationModules = { ${table} };\n`,
      resolveDir: process.cwd(),
      sourcefile: "extension-entry.ts",
      loader: "ts",
    };
    options.outfile = "dist/extension.js";
    options.outdir = undefined;
    builds.push(
      esbuild.build(options).then(() =>
        esbuild.build({
          ...options,
          entryPoints: undefined,
          stdin: {
            contents: lazyBundleEntry(split.paths),
            resolveDir: process.cwd(),
            sourcefile: "extension-lazy.js",
          },
          outfile: "dist/extension-lazy.js",
          outdir: undefined,
          plugins: [lazyModules(undefined, true), withoutTranspiler, embeddedFileDesc],
        }),
      ),
    );
  } else {
    builds.push(esbuild.build(options));
  }
}
await Promise.all(builds);

// The CLI bundles must be ASCII: bin/protocall.js reads them as a string, and one non-ASCII character
// (esbuild escapes them in strings, not in regular expressions) makes V8 hold and compile the whole
// bundle as a two-byte string, which costs start-up time. Write such characters as \u escapes.
if (!watch) {
  for (const out of ["dist/cli.js", "dist/curl.js"]) {
    if (!existsSync(out)) continue;
    const text = readFileSync(out, "utf8");
    const id = createHash("sha256").update(text).digest("hex").slice(0, 16);
    writeFileSync(out, text.replace(buildIdPlaceholder, `//protocall-build ${id}`));
    const lines = text.split("\n");
    const at = lines.findIndex((line) => /[^\x00-\x7f]/.test(line));
    if (at >= 0) {
      console.error(
        `${out}:${at + 1}: a non-ASCII character in the bundle; write it as a \\u escape in the source:\n${lines[at].slice(0, 200)}`,
      );
      process.exit(1);
    }
  }
}
