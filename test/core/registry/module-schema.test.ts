// Registry modules as schemas: fetched from `protocall registry serve` (modules pushed by the real buf)
// with the calls buf makes, verified, compiled and cached by commit; a second look-up makes one call
// (GetCommits) and a pinned commit none. Against a misbehaving registry (a real https server on
// loopback): a wrong digest, an escaping path, an oversize download, a graph without the commit, a
// body that is not a Connect message and a registry that never answers each fail with one line, and
// nothing is cached.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { loadModuleSchema } from "../../../src/core/registry/module-schema";
import { provideRegistryModules } from "../../../src/core/registry/provide";
import { parseModuleRef } from "../../../src/core/schema/module-ref";
import { openSchema } from "../../../src/core/schema/open-schema";
import { type HostileRegistry, startHostileRegistry } from "../../support/hostile-registry";
import { startTestRegistry, type TestRegistry, tempWorkspace } from "../../support/registry";
import { createTestPki, type TestPki } from "../../support/tls";

// As every program does at start: modules open through the registry client.
provideRegistryModules();

let pki: TestPki;
let registry: TestRegistry;
let hostile: HostileRegistry;
let storeCommit = "";

const petapis = 'syntax = "proto3";\n\npackage pet.v1;\n\n// A pet.\nmessage Pet {\n  string name = 1;\n}\n';
const petstore =
  'syntax = "proto3";\n\npackage store.v1;\n\nimport "pet/v1/pet.proto";\n\n// Sells pets.\nservice StoreService {\n  rpc Buy(pet.v1.Pet) returns (pet.v1.Pet);\n}\n';

before(async () => {
  pki = await createTestPki(["localhost"]);
  [registry, hostile] = await Promise.all([startTestRegistry({ pki }), startHostileRegistry(pki)]);
  const ws = tempWorkspace({
    "buf.yaml": registry.bufYaml([
      { path: "store", name: "acme/petstore" },
      { path: "pets", name: "acme/petapis" },
    ]),
    "pets/pet/v1/pet.proto": petapis,
    "store/store/v1/store.proto": petstore,
  });
  const r = await registry.buf(["push", "--create", "--create-visibility", "private"], {
    cwd: ws,
    token: "alice-token",
  });
  assert.equal(r.code, 0, r.stderr);
  const line = r.stdout.split("\n").find((l) => l.startsWith(`${registry.remote}/acme/petstore:`));
  storeCommit = line?.split(":").pop() ?? "";
  assert.match(storeCommit, /^[0-9a-f]{32}$/);
});

after(async () => {
  await Promise.all([registry?.close(), hostile?.close()]);
});

const cacheDir = () => mkdtempSync(join(tmpdir(), "protocall-module-cache-"));

/** The commit directories the cache holds for a remote. */
function cachedCommits(dir: string, remote: string): string[] {
  const d = join(dir, "modules", "v1", remote.replace(":", "_"));
  return existsSync(d) ? readdirSync(d).filter((n) => /^[0-9a-f]{32}$/.test(n)) : [];
}

describe("a module from the registry emulator", () => {
  const dir = cacheDir();
  const env = () => ({ ...registry.env("alice-token") });

  test("is fetched, verified, compiled with its dependency and cached by commit", async () => {
    const calls: string[] = [];
    const ref = parseModuleRef(`${registry.remote}/acme/petstore`)!;
    const schema = await loadModuleSchema(ref, { env: env(), cacheDir: dir, onCall: (c) => calls.push(c) });
    assert.equal(schema.cached, false);
    assert.equal(schema.commitId, storeCommit);
    assert.deepEqual(calls.slice(0, 2), ["GetCommits", "GetGraph"]);
    assert.ok(calls.includes("Download"));
    assert.equal(cachedCommits(dir, registry.remote).length, 2, "the module and its dependency");

    const source = await openSchema(`${registry.remote}/acme/petstore`, {
      cwd: tmpdir(),
      stdin: process.stdin,
      env: env(),
      registryCacheDir: dir,
    });
    assert.deepEqual(await source.listServices(), ["store.v1.StoreService"]);
    const service = await source.findType("store.v1.StoreService");
    assert.equal(service?.kind, "service");
    assert.equal(service.methods[0].input.typeName, "pet.v1.Pet");
    // The compiled schema keeps the comments (hover shows them).
    assert.match(readFileSync(schema.path ?? "", "latin1"), /Sells pets/);
    await source.close();
  });

  test("a second look-up resolves the reference with one call and loads the cached schema", async () => {
    const calls: string[] = [];
    const ref = parseModuleRef(`${registry.remote}/acme/petstore:main`)!;
    const schema = await loadModuleSchema(ref, { env: env(), cacheDir: dir, onCall: (c) => calls.push(c) });
    assert.deepEqual(calls, ["GetCommits"]);
    assert.equal(schema.cached, true);
    assert.ok(schema.path?.startsWith(dir));
  });

  test("a pinned commit that is cached needs no call at all", async () => {
    const calls: string[] = [];
    for (const id of [storeCommit, storeCommit.replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-")]) {
      const ref = parseModuleRef(`${registry.remote}/acme/petstore:${id}`)!;
      const schema = await loadModuleSchema(ref, { env: {}, cacheDir: dir, onCall: (c) => calls.push(c) });
      assert.equal(schema.commitId, storeCommit);
    }
    assert.deepEqual(calls, []);
  });

  test("a refused token fails in buf's words and caches nothing", async () => {
    const empty = cacheDir();
    const ref = parseModuleRef(`${registry.remote}/acme/petstore`)!;
    await assert.rejects(loadModuleSchema(ref, { env: registry.env("wrong"), cacheDir: empty }), (err) => {
      assert.ok(err instanceof ProtocallError);
      assert.equal(
        err.message,
        `the BUF_TOKEN environment variable is not valid for ${registry.remote}. Set BUF_TOKEN to a valid Buf API token, or unset it. For details, visit https://buf.build/docs/bsr/authentication`,
      );
      return true;
    });
    assert.deepEqual(cachedCommits(empty, registry.remote), []);
  });
});

describe("a misbehaving registry", { concurrency: false }, () => {
  const env = () => ({ SSL_CERT_FILE: pki.ca.certPath, HOME: tmpdir(), BUF_TOKEN: "t" });

  async function fails(
    mode: HostileRegistry["mode"],
    pattern: RegExp,
    extra: { signal?: AbortSignal; maxResponseBytes?: number } = {},
  ) {
    hostile.mode = mode;
    const dir = cacheDir();
    const ref = parseModuleRef(`${hostile.remote}/acme/app`)!;
    await assert.rejects(loadModuleSchema(ref, { env: env(), cacheDir: dir, ...extra }), (err) => {
      assert.ok(err instanceof ProtocallError, String(err));
      assert.doesNotMatch(err.message, /\n/);
      assert.match(err.message, pattern);
      return true;
    });
    assert.deepEqual(cachedCommits(dir, hostile.remote), [], "nothing is cached");
    hostile.mode = "ok";
  }

  test("serves a good module (the baseline the failures differ from)", async () => {
    hostile.mode = "ok";
    const dir = cacheDir();
    const schema = await loadModuleSchema(parseModuleRef(`${hostile.remote}/acme/app`)!, {
      env: env(),
      cacheDir: dir,
    });
    assert.equal(schema.commitId, hostile.appCommit);
    assert.deepEqual(cachedCommits(dir, hostile.remote).sort(), [hostile.appCommit, hostile.baseCommit]);
  });

  test("a wrong digest of the module", () =>
    fails(
      "wrong-digest",
      /^could not get module data for remote module "localhost:\d+\/acme\/app": digest verification failed .*expected digest "b5:/,
    ));

  test("a wrong digest of a dependency is caught first", () =>
    fails(
      "wrong-dependency-digest",
      /^could not get module data for remote module "localhost:\d+\/acme\/base": digest verification failed/,
    ));

  test("a file path that leaves the module", () =>
    fails(
      "escaping-path",
      /sent module localhost:\d+\/acme\/app with an unsafe file path: "..\/..\/escaped.proto"; nothing was cached$/,
    ));

  test("a download larger than the limit", () =>
    fails("oversize", /sent a Download response larger than Protocall reads \(1 MiB\); nothing was cached$/, {
      maxResponseBytes: 1024 * 1024,
    }));

  test("a graph without the commit asked for", () =>
    fails(
      "graph-without-commit",
      /sent an invalid GetGraph response: the graph does not contain the commit asked for/,
    ));

  test("a body that is not a Connect message", () => fails("garbage", /^\w+: .+/));

  test("a registry that never answers is ended by the caller's signal (curl's --timeout)", () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(new ProtocallError("stopped by the caller")), 500).unref();
    return fails("silent", /^stopped by the caller$/, { signal: stop.signal });
  });
});
