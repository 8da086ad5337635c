// The installed `protocall` command (bin/protocall.js): `curl` runs the bundle of that command alone
// (dist/curl.js), everything else the full command line (dist/cli.js), each with its code cache.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { repoRoot, runProcess } from "../support/cli";

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
  const schema = join(cacheDir, "demo.binpb");
  const built = await runProcess(process.execPath, [
    join(repoRoot, "dist", "cli.js"),
    "build",
    join(repoRoot, "examples"),
    "-o",
    schema,
  ]);
  assert.equal(built.code, 0, built.stderr);
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

test("dist/curl.js runs only curl and says so for anything else", async () => {
  const r = await runProcess(process.execPath, [curlBundle, "build", "."]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^protocall: this bundle runs only `protocall curl`/);
});
