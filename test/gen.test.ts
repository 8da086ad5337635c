// The checked-in generated code must match what the generator produces from proto/ today.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import { test } from "node:test";

const root = resolve(__dirname, "..");

function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(dir, path).split(sep).join("/"));
    }
  };
  walk(dir);
  return out.sort();
}

test("src/gen is up to date with proto/", { timeout: 90_000 }, async () => {
  const out = mkdtempSync(join(tmpdir(), "protocall-gen-check-"));
  try {
    await new Promise<void>((done, fail) => {
      execFile(
        process.execPath,
        [join(root, "scripts/generate.mjs"), "--out", out],
        { cwd: root, timeout: 80_000 },
        (err, _stdout, stderr) =>
          err ? fail(new Error(`generate failed: ${stderr || err.message}`)) : done(),
      );
    });
    const fresh = listFiles(out);
    const checkedIn = listFiles(join(root, "src/gen"));
    assert.ok(fresh.length > 0, "the generator produced no files");
    const stale: string[] = [];
    for (const file of new Set([...fresh, ...checkedIn])) {
      if (!fresh.includes(file)) stale.push(`${file} (no longer generated)`);
      else if (!checkedIn.includes(file)) stale.push(`${file} (missing)`);
      else if (!readFileSync(join(out, file)).equals(readFileSync(join(root, "src/gen", file)))) {
        stale.push(`${file} (differs)`);
      }
    }
    assert.deepEqual(
      stale,
      [],
      `generated code in src/gen is stale: ${stale.map((f) => `src/gen/${f}`).join(", ")}; run npm run generate`,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
