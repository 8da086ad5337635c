// A cache directory is used only when it is ours alone: a directory others may write is refused, as
// are a file and a missing path.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { isPrivateDir } from "../../src/core/private-dir";

test("only a directory of ours that no one else may write is private", async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-private-"));
  try {
    chmodSync(dir, 0o700);
    assert.equal(await isPrivateDir(dir), true);
    chmodSync(dir, 0o777);
    assert.equal(await isPrivateDir(dir), false);
    chmodSync(dir, 0o700);
    writeFileSync(join(dir, "file"), "");
    assert.equal(await isPrivateDir(join(dir, "file")), false);
    assert.equal(await isPrivateDir(join(dir, "missing")), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
