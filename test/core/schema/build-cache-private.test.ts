// The on-disk build cache lives in a shared temp directory: it is used only when it is private to
// this user, so no one else can hand us a build.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, test } from "node:test";
import {
  BuildCache,
  clearBuildMemoryCache,
  defaultBuildCacheDir,
} from "../../../src/core/schema/build-cache";

const temp = mkdtempSync(join(tmpdir(), "protocall-cache-private-"));
after(() => rmSync(temp, { recursive: true, force: true }));

const key = "b".repeat(64);

test("the default directory is one per user", () => {
  assert.equal(basename(defaultBuildCacheDir()), `protocall-build-cache-${process.getuid?.()}`);
});

test("a cache directory others can write is neither read nor written", async () => {
  const dir = join(temp, "open");
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  writeFileSync(join(dir, `${key}.binpb`), new Uint8Array([6, 6, 6]));
  clearBuildMemoryCache();
  const cache = new BuildCache(dir);
  assert.equal(await cache.get(key), undefined, "a planted build is not used");
  const other = "c".repeat(64);
  await cache.set(other, new Uint8Array([1]));
  assert.deepEqual(readdirSync(dir), [`${key}.binpb`], "nothing is written there");
  assert.deepEqual(await cache.get(other), new Uint8Array([1]), "the memory cache still works");

  // Made private again, it is used.
  chmodSync(dir, 0o700);
  clearBuildMemoryCache();
  assert.deepEqual(await cache.get(key), new Uint8Array([6, 6, 6]));
});

test("a private directory is created with owner-only access and used", async () => {
  const dir = join(temp, "fresh", "cache");
  const cache = new BuildCache(dir);
  await cache.set(key, new Uint8Array([7]));
  clearBuildMemoryCache();
  assert.deepEqual(await cache.get(key), new Uint8Array([7]));
});
