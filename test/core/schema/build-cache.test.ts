import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { BuildCache, buildKey, clearBuildMemoryCache } from "../../../src/core/schema/build-cache";

const temp = mkdtempSync(join(tmpdir(), "protocall-build-cache-"));
after(() => rmSync(temp, { recursive: true, force: true }));

test("buildKey changes with .proto and buf config files, options and compiler, not with other files", async () => {
  const dir = join(temp, "ws");
  mkdirSync(join(dir, "sub"), { recursive: true });
  writeFileSync(join(dir, "a.proto"), "syntax = 'proto3';");
  const compiler = process.execPath;
  const key = () => buildKey({ dirs: [dir], compiler, options: { x: 1 } });
  const k1 = await key();
  assert.match(k1, /^[0-9a-f]{64}$/);
  assert.equal(await key(), k1, "stable for unchanged input");
  writeFileSync(join(dir, "notes.txt"), "ignored");
  assert.equal(await key(), k1, "other files do not count");
  writeFileSync(join(dir, "a.proto"), "syntax = 'proto2';");
  const k2 = await key();
  assert.notEqual(k2, k1, "content counts");
  writeFileSync(join(dir, "sub/b.proto"), "");
  const k3 = await key();
  assert.notEqual(k3, k2, "a new file counts");
  writeFileSync(join(dir, "buf.yaml"), "version: v2\n");
  const k4 = await key();
  assert.notEqual(k4, k3, "buf.yaml counts");
  assert.notEqual(await buildKey({ dirs: [dir], compiler, options: { x: 2 } }), k4, "options count");
  assert.notEqual(await buildKey({ dirs: [dir], compiler: join(temp, "other"), options: { x: 1 } }), k4);
  rmSync(join(dir, "sub/b.proto"));
  assert.notEqual(await key(), k4, "a removed file counts");
});

test("BuildCache keeps entries in memory, and on disk when given a directory", async () => {
  const key = "a".repeat(64);
  const bytes = new Uint8Array([1, 2, 3]);
  const memoryOnly = new BuildCache(false);
  assert.equal(await memoryOnly.get(key), undefined);
  await memoryOnly.set(key, bytes);
  assert.deepEqual(await memoryOnly.get(key), bytes);
  clearBuildMemoryCache();
  assert.equal(await memoryOnly.get(key), undefined);

  const dir = join(temp, "cache");
  const disk = new BuildCache(dir);
  await disk.set(key, bytes);
  assert.deepEqual(readdirSync(dir), [`${key}.binpb`]);
  clearBuildMemoryCache();
  assert.deepEqual(await disk.get(key), bytes);
});

test("the on-disk cache keeps the 64 most recently used builds", async () => {
  const dir = join(temp, "prune");
  const cache = new BuildCache(dir);
  const key = (i: number) => i.toString(16).padStart(64, "0");
  for (let i = 0; i < 64; i++) await cache.set(key(i), new Uint8Array([i]));
  // Give the files distinct ages: key(0) oldest.
  for (let i = 0; i < 64; i++) utimesSync(join(dir, `${key(i)}.binpb`), 1_000_000 + i, 1_000_000 + i);
  clearBuildMemoryCache();
  assert.deepEqual(await cache.get(key(0)), new Uint8Array([0]), "a disk hit marks the build as used");
  await cache.set(key(64), new Uint8Array([64]));
  const names = readdirSync(dir).sort();
  assert.equal(names.length, 64);
  assert.ok(names.includes(`${key(64)}.binpb`), "the newest is kept");
  assert.ok(names.includes(`${key(0)}.binpb`), "the recently used is kept");
  assert.ok(!names.includes(`${key(1)}.binpb`), "the least recently used is removed");
});
