#!/usr/bin/env node
// The `protocall` command. Runs the bundled CLI (dist/cli.js) with a V8 code cache: compiling the
// bundle costs more than Node's own start-up, and `protocall curl` must start nearly as fast as the
// native `buf curl`. Node 20 has no built-in compile cache for CommonJS, so the bundle is compiled
// through vm.Script with cached data kept per command in the user's cache directory. Without a usable
// cache (first run, another Node version, a rebuilt bundle) it compiles normally and writes one.
// Set PROTOCALL_NO_CODE_CACHE=1 to run without it.
// `protocall curl` runs dist/curl.js, a bundle of that command alone (less to read, compile and
// initialise); every other command runs dist/cli.js, which has them all.

const fs = require("node:fs");
const path = require("node:path");

const dist = path.join(__dirname, "..", "dist");
const curlBundle = path.join(dist, "curl.js");
const bundle =
  process.argv[2] === "curl" && fs.existsSync(curlBundle) ? curlBundle : path.join(dist, "cli.js");

function cacheFile(stat) {
  const base =
    process.env.PROTOCALL_CACHE_DIR ||
    path.join(process.env.XDG_CACHE_HOME || path.join(require("node:os").homedir(), ".cache"), "protocall");
  const command = /^[a-z-]{1,20}$/.test(process.argv[2] || "") ? process.argv[2] : "other";
  const key = [process.version, process.arch, stat.size, Math.floor(stat.mtimeMs)].join("-");
  return path.join(base, `${path.basename(bundle, ".js")}-${key}-${command}.cache`);
}

function run(useCache) {
  const vm = require("node:vm");
  const Module = require("node:module");
  const stat = fs.statSync(bundle);
  const cachePath = cacheFile(stat);
  let cachedData;
  try {
    cachedData = useCache ? fs.readFileSync(cachePath) : undefined;
  } catch {
    cachedData = undefined;
  }
  const source = fs.readFileSync(bundle, "utf8").replace(/^#!.*/, "");
  const script = new vm.Script(Module.wrap(source), {
    filename: bundle,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (useCache && (cachedData === undefined || script.cachedDataRejected)) {
    // Written at exit, so the functions this command compiled are in the cache too.
    process.once("exit", () => {
      try {
        fs.mkdirSync(path.dirname(cachePath), { recursive: true });
        const tmp = `${cachePath}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, script.createCachedData());
        fs.renameSync(tmp, cachePath);
      } catch {
        // A read-only or missing cache directory only costs speed.
      }
    });
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
