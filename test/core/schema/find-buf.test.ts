import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { bundledBufPath, findBuf, findOnPath } from "../../../src/core/schema/find-buf";

const temp = mkdtempSync(join(tmpdir(), "protocall-find-buf-"));
after(() => rmSync(temp, { recursive: true, force: true }));

test("the bundled buf for this platform is found and runs", () => {
  const bundled = bundledBufPath();
  assert.ok(bundled, "the platform package of @bufbuild/buf is installed");
  assert.match(bundled, /@bufbuild[\\/]buf-[a-z0-9]+-[a-z0-9]+[\\/]bin[\\/]buf(\.exe)?$/);
  const version = execFileSync(bundled, ["--version"], { encoding: "utf8", timeout: 10_000 }).trim();
  assert.match(version, /^\d+\.\d+\.\d+/);
});

test("without a configured path, findBuf prefers the bundled buf over PATH", async () => {
  const dir = join(temp, "path-bin");
  mkdirSync(dir, { recursive: true });
  symlinkSync(bundledBufPath()!, join(dir, "buf"));
  assert.equal(await findBuf({ env: { PATH: dir } }), bundledBufPath());
});

test("a configured path wins over the bundled buf", async () => {
  const link = join(temp, "my-buf");
  symlinkSync(bundledBufPath()!, link);
  assert.equal(await findBuf({ bufPath: link, env: {} }), link);
});

test("a configured bare name is looked up on PATH", async () => {
  const dir = join(temp, "named-bin");
  mkdirSync(dir, { recursive: true });
  symlinkSync(bundledBufPath()!, join(dir, "buf-custom"));
  assert.equal(await findBuf({ bufPath: "buf-custom", env: { PATH: dir } }), join(dir, "buf-custom"));
});

test("a configured path that does not exist is an error naming it", async () => {
  await assert.rejects(findBuf({ bufPath: join(temp, "missing/buf"), env: { PATH: "" } }), (err) => {
    assert.ok(err instanceof ProtocallError);
    assert.match(err.message, /configured buf binary .*missing\/buf does not exist or is not executable/);
    return true;
  });
});

test("findOnPath finds executables in PATH order and skips non-executable files", async () => {
  const a = join(temp, "a");
  const b = join(temp, "b");
  mkdirSync(a, { recursive: true });
  mkdirSync(b, { recursive: true });
  writeFileSync(join(a, "tool"), "not executable");
  chmodSync(join(a, "tool"), 0o644);
  writeFileSync(join(b, "tool"), "#!/bin/sh\n");
  chmodSync(join(b, "tool"), 0o755);
  assert.equal(await findOnPath("tool", { PATH: [join(temp, "none"), a, b].join(":") }), join(b, "tool"));
  assert.equal(await findOnPath("tool", { PATH: a }), undefined);
  assert.equal(await findOnPath("tool", {}), undefined);
});

test("with the bundled buf turned off, buf on PATH is used", async () => {
  const dir = join(temp, "only-path");
  mkdirSync(dir, { recursive: true });
  symlinkSync(bundledBufPath()!, join(dir, "buf"));
  assert.equal(await findBuf({ env: { PATH: dir }, useBundled: false }), join(dir, "buf"));
});

test("no configured, bundled or PATH buf is an error saying where it looked", async () => {
  const empty = join(temp, "empty-bin");
  mkdirSync(empty, { recursive: true });
  await assert.rejects(findBuf({ env: { PATH: empty }, useBundled: false }), (err) => {
    assert.ok(err instanceof ProtocallError);
    assert.equal(
      err.message,
      "cannot find the buf compiler: no buf path is configured, the bundled buf is turned off, " +
        `and there is no buf on PATH (${empty}); install buf or configure its path`,
    );
    return true;
  });
});
