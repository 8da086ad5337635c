// The installed `protocall` command (bin/protocall.js): `curl` runs the bundle of that command alone
// (dist/curl.js), everything else the full command line (dist/cli.js), each with its code cache. A
// cache that cannot be used (damaged, made for another bundle or build, an unwritable directory) only
// costs speed: the output is the same.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { repoRoot, runProcess } from "../support/cli";
import { startTlsDemoServer } from "../support/servers";
import { createTestPki } from "../support/tls";

const bin = join(repoRoot, "bin", "protocall.js");
const curlBundle = join(repoRoot, "dist", "curl.js");
let server: DemoServer;
let cacheDir: string;

before(async () => {
  server = await startDemoServer();
  cacheDir = mkdtempSync(join(tmpdir(), "protocall-bin-"));
});
after(async () => {
  await server.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

/** The examples' schema as a descriptor set in the cache directory, built with `protocall build`. */
async function demoSchema(name: string): Promise<string> {
  const schema = join(cacheDir, name);
  const built = await runProcess(process.execPath, [
    join(repoRoot, "dist", "cli.js"),
    "build",
    join(repoRoot, "examples"),
    "-o",
    schema,
  ]);
  assert.equal(built.code, 0, built.stderr);
  return schema;
}

const runBin = (args: string[], env: Record<string, string | undefined> = {}) =>
  runProcess(process.execPath, [bin, ...args], { env: { PROTOCALL_CACHE_DIR: cacheDir, ...env } });

test("`protocall curl` runs the curl bundle; its code cache is named for it", async () => {
  const r = await runBin(["curl", "-d", '{"name":"bin"}', `${server.url}/demo.v1.GreetService/Greet`]);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, '{\n  "greeting": "Hello, bin!"\n}\n');
  assert.equal(r.code, 0);
  const caches = readdirSync(cacheDir).filter((f) => f.endsWith("-curl.cache"));
  assert.equal(caches.length, 1);
  assert.match(caches[0], /^curl-/);
});

test("other commands run the full command line, with a cache of their own", async () => {
  const r = await runBin(["--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^Protocall: call Protobuf APIs/);
  assert.match(r.stdout, /\n {2}curl +Call an RPC/);
  assert.ok(readdirSync(cacheDir).some((f) => /^cli-.*---help\.cache$/.test(f)));
});

test("the curl bundle fails like the full command line: usage errors and RPC errors", async () => {
  const usage = await runBin(["curl", "--protocol", "nope", `${server.url}/demo.v1.GreetService/Greet`]);
  const full = await runProcess(process.execPath, [
    join(repoRoot, "dist", "cli.js"),
    "curl",
    "--protocol",
    "nope",
    `${server.url}/demo.v1.GreetService/Greet`,
  ]);
  assert.equal(usage.code, full.code);
  assert.equal(usage.stderr, full.stderr);
  assert.match(usage.stderr, /^protocall: /);
  const help = await runBin(["curl", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--schema/);
});

test("a plain-HTTP call with a descriptor set loads no TLS, zlib, child process or HTTP/2 module", async () => {
  const schema = await demoSchema("demo.binpb");
  // Preloaded: prints the built-in modules the process loaded, at exit.
  const report = join(cacheDir, "loaded.js");
  writeFileSync(
    report,
    'process.on("exit", () => process.stderr.write(process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice(13)).join(" ")));',
  );
  const r = await runProcess(process.execPath, [
    "-r",
    report,
    bin,
    "curl",
    "--schema",
    schema,
    "-d",
    '{"name":"lazy"}',
    `${server.url}/demo.v1.GreetService/Greet`,
  ]);
  assert.equal(r.stdout, '{\n  "greeting": "Hello, lazy!"\n}\n');
  assert.equal(r.code, 0);
  const loaded = new Set(r.stderr.split(" "));
  assert.ok(loaded.has("http"), r.stderr);
  for (const name of ["tls", "crypto", "zlib", "child_process", "http2", "https"]) {
    assert.ok(!loaded.has(name), `${name} loaded: ${r.stderr}`);
  }
});

test("a call never builds the library's descriptor of descriptor.proto (a descriptor set, and reflection)", async () => {
  // V8's precise coverage names every function that ran. The library builds that descriptor in
  // boot() when its descriptor.proto module initialises; the bundle decodes descriptors without it.
  const schema = await demoSchema("demo-cov.binpb");
  const url = `${server.url}/demo.v1.GreetService/Greet`;
  for (const args of [
    ["--schema", schema, "-d", '{"name":"cov"}', url],
    ["--http2-prior-knowledge", "-d", '{"name":"cov"}', url],
  ]) {
    const coverage = mkdtempSync(join(tmpdir(), "protocall-cov-"));
    try {
      const r = await runBin(["curl", ...args], { NODE_V8_COVERAGE: coverage });
      assert.equal(r.stdout, '{\n  "greeting": "Hello, cov!"\n}\n', r.stderr);
      const ran: string[] = [];
      for (const file of readdirSync(coverage)) {
        const report = JSON.parse(readFileSync(join(coverage, file), "utf8")) as {
          result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
        };
        for (const script of report.result) {
          if (!script.url.endsWith("/dist/curl.js")) continue;
          for (const fn of script.functions) if (fn.ranges[0].count > 0) ran.push(fn.functionName);
        }
      }
      assert.ok(
        ran.includes("decodeFileDescriptorProto"),
        `coverage of dist/curl.js: ${ran.length} functions`,
      );
      const booted = ran.filter((n) => /^boot\w*$|^[^:]*\/descriptor_pb\.js$/.test(n));
      assert.deepEqual(booted, [], args.join(" "));
    } finally {
      rmSync(coverage, { recursive: true, force: true });
    }
  }
});

test("the curl bundle reads a buf.yaml with dist/yaml.js, a parser it does not hold itself", async () => {
  assert.ok(
    !readFileSync(curlBundle, "latin1").includes("node_modules/yaml/"),
    "dist/curl.js holds the yaml package",
  );
  const r = await runBin([
    "curl",
    "--schema",
    join(repoRoot, "examples"),
    "-d",
    '{"name":"yaml"}',
    `${server.url}/demo.v1.GreetService/Greet`,
  ]);
  assert.equal(r.stdout, '{\n  "greeting": "Hello, yaml!"\n}\n', r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(r.code, 0);
});

test("dist/curl.js runs only curl and says so for anything else", async () => {
  const r = await runProcess(process.execPath, [curlBundle, "build", "."]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^protocall: this bundle runs only `protocall curl`/);
});

/** A fresh cache directory for one test. */
function newCacheDir(): string {
  const dir = join(cacheDir, `case-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  return dir;
}

const greet = (name: string) => [
  "curl",
  "-d",
  JSON.stringify({ name }),
  `${server.url}/demo.v1.GreetService/Greet`,
];
const greeting = (name: string) => `{\n  "greeting": "Hello, ${name}!"\n}\n`;

test("a damaged cache is not used: same output, and a good cache replaces it", async () => {
  const dir = newCacheDir();
  const first = await runBin(greet("cache"), { PROTOCALL_CACHE_DIR: dir });
  assert.equal(first.stdout, greeting("cache"));
  const [name] = readdirSync(dir);
  const file = join(dir, name);
  const good = readFileSync(file);
  for (const damaged of [Buffer.from("not a V8 code cache"), good.subarray(0, good.length >> 1)]) {
    writeFileSync(file, damaged);
    const r = await runBin(greet("damaged"), { PROTOCALL_CACHE_DIR: dir });
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, greeting("damaged"));
    assert.equal(r.code, 0);
    assert.deepEqual(readdirSync(dir), [name]);
    assert.ok(readFileSync(file).length > damaged.length, "the cache was written again");
  }
  // The new cache is used as it is (not written again).
  const before = statSync(file).mtimeMs;
  const again = await runBin(greet("again"), { PROTOCALL_CACHE_DIR: dir });
  assert.equal(again.stdout, greeting("again"));
  assert.equal(statSync(file).mtimeMs, before);
});

test("the cache of another bundle under this bundle's name is not used", async () => {
  const dir = newCacheDir();
  assert.equal((await runBin(["--help"], { PROTOCALL_CACHE_DIR: dir })).code, 0);
  assert.equal((await runBin(greet("mine"), { PROTOCALL_CACHE_DIR: dir })).code, 0);
  const names = readdirSync(dir);
  const cli = names.find((n) => n.startsWith("cli-")) as string;
  const curl = names.find((n) => n.startsWith("curl-")) as string;
  copyFileSync(join(dir, cli), join(dir, curl));
  const r = await runBin(greet("other"), { PROTOCALL_CACHE_DIR: dir });
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, greeting("other"));
  assert.notDeepEqual(readFileSync(join(dir, curl)), readFileSync(join(dir, cli)));
});

test("a new build of the same size and mtime (an npm upgrade) does not run the previous build's cache", async () => {
  // An installed copy: npm gives every file of a package the same mtime, so only content tells builds apart.
  const install = mkdtempSync(join(cacheDir, "install-"));
  mkdirSync(join(install, "bin"));
  mkdirSync(join(install, "dist"));
  for (const f of ["bin/protocall.js", "bin/package.json", "dist/curl.js", "dist/cli.js"]) {
    copyFileSync(join(repoRoot, f), join(install, f));
  }
  const bundle = join(install, "dist", "curl.js");
  const { mtime } = statSync(bundle);
  const dir = newCacheDir();
  const run = () =>
    runProcess(process.execPath, [join(install, "bin", "protocall.js"), "curl", "--help"], {
      env: { PROTOCALL_CACHE_DIR: dir },
    });
  const old = await run();
  assert.match(old.stdout, /^Invoke an RPC method/);
  // The "next build": one word of the help changed (same length), its build id stamped as the build does.
  const source = readFileSync(bundle, "utf8");
  const lines = source.replace("Invoke an RPC method", "Invoke an RPC METHOD").split("\n");
  assert.match(lines[1], /^\/\/protocall-build [0-9a-f]{16}$/);
  lines[1] = `//protocall-build ${createHash("sha256").update(lines.join("\n")).digest("hex").slice(0, 16)}`;
  writeFileSync(bundle, lines.join("\n"));
  utimesSync(bundle, mtime, mtime);
  assert.equal(statSync(bundle).size, Buffer.byteLength(source));
  const next = await run();
  assert.equal(next.code, 0);
  assert.match(next.stdout, /^Invoke an RPC METHOD/);
  // The previous build's cache for this command is gone; one cache, of the new build.
  assert.equal(readdirSync(dir).filter((n) => n.endsWith("-curl.cache")).length, 1);
});

test("a bundle that is not ASCII (a development build) is read as UTF-8", async () => {
  // The build keeps the bundles ASCII, which the launcher reads as Latin-1; any other byte must not
  // turn into mojibake.
  const install = mkdtempSync(join(cacheDir, "utf8-"));
  mkdirSync(join(install, "bin"));
  mkdirSync(join(install, "dist"));
  for (const f of ["bin/protocall.js", "bin/package.json"]) copyFileSync(join(repoRoot, f), join(install, f));
  writeFileSync(join(install, "dist", "curl.js"), 'process.stdout.write("5 \u00b5s, caf\u00e9");\n');
  for (const cache of [undefined, "1"]) {
    const r = await runProcess(process.execPath, [join(install, "bin", "protocall.js"), "curl"], {
      env: { PROTOCALL_CACHE_DIR: newCacheDir(), PROTOCALL_NO_CODE_CACHE: cache },
    });
    assert.equal(r.stdout, "5 \u00b5s, caf\u00e9", r.stderr);
    assert.equal(r.code, 0);
  }
});

test("a cache directory that cannot be written: same output, nothing written", async () => {
  const file = join(newCacheDir(), "a-file");
  writeFileSync(file, "");
  const r = await runBin(greet("readonly"), { PROTOCALL_CACHE_DIR: join(file, "cache") });
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, greeting("readonly"));
  assert.equal(r.code, 0);
  const off = newCacheDir();
  const plain = await runBin(greet("plain"), { PROTOCALL_CACHE_DIR: off, PROTOCALL_NO_CODE_CACHE: "1" });
  assert.equal(plain.stdout, greeting("plain"));
  assert.deepEqual(readdirSync(off), []);
});

test("writing a cache removes this command's caches of other builds and Nodes, and only those", async () => {
  const dir = newCacheDir();
  const stale = [
    "curl-v0.0.1-x64-1-0123456789abcdef-curl.cache",
    "curl-v20.0.0-x64-1-1111111111111111-curl.cache",
  ];
  const kept = [
    "cli-v0.0.1-x64-1-0123456789abcdef---help.cache",
    "curl-v0.0.1-x64-1-0123456789abcdef-other.cache",
    "notes.txt",
  ];
  for (const n of [...stale, ...kept]) writeFileSync(join(dir, n), "x");
  assert.equal((await runBin(greet("prune"), { PROTOCALL_CACHE_DIR: dir })).code, 0);
  const names = readdirSync(dir);
  for (const n of stale) assert.ok(!names.includes(n), n);
  for (const n of kept) assert.ok(names.includes(n), n);
  assert.equal(names.filter((n) => n.endsWith("-curl.cache")).length, 1);
});

test("a private CA given only through NODE_EXTRA_CA_CERTS is trusted, as Node trusts it", async () => {
  const pki = await createTestPki();
  const tlsServer = await startTlsDemoServer(pki);
  try {
    const call = (env: Record<string, string | undefined>) =>
      runProcess(
        process.execPath,
        [bin, "curl", "-d", '{"name":"tls"}', `${tlsServer.url}/demo.v1.GreetService/Greet`],
        { env: { PROTOCALL_CACHE_DIR: cacheDir, ...env } },
      );
    const trusted = await call({ NODE_EXTRA_CA_CERTS: pki.ca.certPath });
    assert.equal(trusted.stderr, "");
    assert.equal(trusted.stdout, greeting("tls"));
    assert.equal(trusted.code, 0);
    // The same call without it, or with another CA, is refused: the trust came from that file.
    for (const env of [{ NODE_EXTRA_CA_CERTS: undefined }, { NODE_EXTRA_CA_CERTS: pki.otherCa.certPath }]) {
      const refused = await call(env);
      assert.notEqual(refused.code, 0);
      assert.equal(refused.stdout, "");
      assert.match(refused.stderr, /certificate/i);
    }
  } finally {
    await tlsServer.close();
    rmSync(pki.dir, { recursive: true, force: true });
  }
});
