#!/usr/bin/env node
// The `protocall` command. Runs the bundled CLI (dist/cli.js) with a V8 code cache: compiling the
// bundle costs more than Node's own start-up, and `protocall curl` must start nearly as fast as the
// native `buf curl`. Node 20 has no built-in compile cache for CommonJS, so the bundle is compiled
// through vm.Script with cached data kept per command in the user's cache directory. Without a usable
// cache (first run, another Node, another build of the bundle, a damaged file) it compiles normally
// and writes one; a cache directory that cannot be written only costs speed.
// Set PROTOCALL_NO_CODE_CACHE=1 to run without it.
// `protocall curl` runs dist/curl.js, a bundle of that command alone (less to read, compile and
// initialise); every other command runs dist/cli.js, which has them all.
//
// A cache is named for what must match for V8 to run it safely: the Node version and architecture,
// the Node binary (another build of the same version), and the bundle's build id (a hash of its
// content that the build writes on its second line). V8 itself checks only the source's length, so
// without the build id a reinstalled bundle of the same size (npm gives every file one fixed mtime)
// would run the previous build's code. V8 rejects a cache whose header does not match (another V8,
// other flags, a truncated file); the launcher then compiles from source and replaces it.
//
// bin/package.json ({"type": "commonjs"}) is there for speed: Node reads the package.json nearest to
// the main script to learn its module type, and the project's own is large (the editor manifest).
//
// Not done here, measured: a V8 start-up snapshot needs `--snapshot-blob` on Node's command line,
// which an npm bin shim cannot pass, and a second Node process to use one costs more than it saves;
// NODE_EXTRA_CA_CERTS is read by Node 20 before any JavaScript runs, so no launcher can defer it there;
// Node 22 and later read it at the first TLS use, so `--version` and plaintext calls no longer pay it
// (bench/node-lines.bench.mjs measures both). On those lines the global Headers is a lazy property that
// loads Node's fetch implementation (with tls, http2 and zlib) when its descriptor is read: the CLI's
// own Headers (src/core/invoke/light-headers.ts) is installed without reading it.

const fs = require("node:fs");
const path = require("node:path");

const dist = path.join(__dirname, "..", "dist");
const curlBundle = path.join(dist, "curl.js");
const bundle =
  process.argv[2] === "curl" && fs.existsSync(curlBundle) ? curlBundle : path.join(dist, "cli.js");

/** The build id on the bundle's second line (`//protocall-build <hex>`), or its size and mtime. */
function buildId(source) {
  const m = /^[^\n]*\n\/\/protocall-build ([0-9a-f]{8,64})\n/.exec(source.slice(0, 200));
  if (m) return m[1];
  const stat = fs.statSync(bundle);
  return `${stat.size}-${Math.floor(stat.mtimeMs)}`;
}

function cacheFile(source) {
  const base =
    process.env.PROTOCALL_CACHE_DIR ||
    path.join(process.env.XDG_CACHE_HOME || path.join(require("node:os").homedir(), ".cache"), "protocall");
  const command = /^[a-z-]{1,20}$/.test(process.argv[2] || "") ? process.argv[2] : "other";
  let node = "";
  try {
    const stat = fs.statSync(process.execPath);
    node = `${stat.size.toString(36)}${Math.floor(stat.mtimeMs).toString(36)}`;
  } catch {
    // an unreadable binary: the version alone
  }
  const prefix = `${path.basename(bundle, ".js")}-`;
  const key = [process.version, process.arch, node, buildId(source)].join("-");
  return { dir: base, prefix, file: path.join(base, `${prefix}${key}-${command}.cache`), command };
}

/** Writes the cache atomically, and removes this command's caches of other builds or Nodes. */
function writeCache(cache, data) {
  try {
    fs.mkdirSync(cache.dir, { recursive: true });
    const tmp = `${cache.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, cache.file);
    const suffix = `-${cache.command}.cache`;
    for (const name of fs.readdirSync(cache.dir)) {
      const file = path.join(cache.dir, name);
      if (name.startsWith(cache.prefix) && name.endsWith(suffix) && file !== cache.file)
        fs.rmSync(file, { force: true });
    }
  } catch {
    // A read-only or missing cache directory only costs speed.
  }
}

/**
 * The bundle's text. The build keeps it ASCII, which reads as Latin-1 without decoding: a third fewer
 * pages touched than a UTF-8 read (which grows a buffer as it decodes), and page faults are much of a
 * cold start. A bundle with other bytes (a development build) is decoded as UTF-8.
 */
function readSource(file) {
  const bytes = fs.readFileSync(file);
  return require("node:buffer").isAscii(bytes) ? bytes.latin1Slice(0, bytes.length) : bytes.toString("utf8");
}

function run(useCache) {
  const vm = require("node:vm");
  const Module = require("node:module");
  const source = readSource(bundle);
  const cache = useCache ? cacheFile(source) : undefined;
  let cachedData;
  try {
    cachedData = cache ? fs.readFileSync(cache.file) : undefined;
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(source.replace(/^#!.*/, "")), {
    filename: bundle,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cache && (cachedData === undefined || script.cachedDataRejected)) {
    // Written at exit, so the functions this command compiled are in the cache too.
    process.once("exit", () => writeCache(cache, script.createCachedData()));
  }
  const mod = new Module(bundle, null);
  mod.filename = bundle;
  mod.paths = Module._nodeModulePaths(path.dirname(bundle));
  const req = Module.createRequire(bundle);
  req.main = mod;
  process.mainModule = mod;
  const fn = script.runInThisContext();
  fn.call(mod.exports, mod.exports, req, mod, bundle, path.dirname(bundle));
  mod.loaded = true;
}

run(!process.env.PROTOCALL_NO_CODE_CACHE);
