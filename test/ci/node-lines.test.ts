// The Node lines Protocall claims (package.json `engines.node`: 20, the extension host of VS Code 1.100,
// and 22 and 24, what users run) are lines every installed package declares support for, so `npm ci`
// prints no EBADENGINE warning on any of them. Checked against package-lock.json, which records each
// package's `engines`: a dependency bumped to a version that drops Node 20 fails here, by name.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../support/cli";

// npm's own range semantics (semver is what npm checks `engines` with).
const semver = createRequire(__filename)("semver") as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

/** The lowest version of each line the claim admits: what a user on that line may run. */
function lowestOfEachLine(): Map<number, string> {
  const lowest = new Map<number, string>();
  for (const major of [20, 22, 24]) {
    const v = semver.minVersion(`${pkg.engines.node} >=${major}.0.0 <${major + 1}.0.0`);
    if (v) lowest.set(major, v.version);
  }
  return lowest;
}

test("package.json claims Node 20, 22 and 24", () => {
  assert.deepEqual([...lowestOfEachLine().keys()], [20, 22, 24], `engines.node is ${pkg.engines.node}`);
});

test("every locked package supports the lowest version of each claimed Node line", () => {
  const problems: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (!path || !range) continue;
    for (const version of lowestOfEachLine().values()) {
      if (!semver.satisfies(version, range)) {
        problems.push(
          `${path.replace(/^.*node_modules\//, "")}@${entry.version} wants node ${range} (not ${version})`,
        );
      }
    }
  }
  assert.deepEqual(
    problems,
    [],
    "pin these to versions that support the claimed Node lines, or change the claim",
  );
});
