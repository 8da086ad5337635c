// A fresh clone installs like any npm project: `.ci/run` installs with `npm ci`; on a fresh clone of
// the committed tree `npm ci` accepts the lock file and `npm install` leaves `git status` clean; and
// package-lock.json records the optional packages of every platform for biome, buf and esbuild (so
// neither command rewrites it on another machine). Offline and fast: npm runs with `--offline` and
// `--dry-run` / `--package-lock-only`, so it only checks and resolves the lock file; nothing is
// downloaded or installed. `npx protocall --version` runs the committed launcher (executable in git)
// and leaves the clone as it was.
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { repoRoot, runProcess } from "../support/cli";

const temp = mkdtempSync(join(tmpdir(), "protocall-fresh-clone-"));
const clone = join(temp, "clone");
after(() => rmSync(temp, { recursive: true, force: true }));

/**
 * npm without the network (`--offline`: the local cache only), and without install scripts. A
 * complete lock file needs nothing from the cache; an incomplete one is completed from the
 * packages' data cached by earlier installs, which is the rewrite the tests below catch.
 */
function npm(args: string[]) {
  return runProcess("npm", [...args, "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: clone,
    env: { npm_config_update_notifier: "false", npm_config_loglevel: "error" },
    timeoutMs: 120_000,
  });
}

async function gitStatus(): Promise<string> {
  const r = await runProcess("git", ["status", "--porcelain"], { cwd: clone });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

before(async () => {
  const r = await runProcess("git", ["clone", "--quiet", "--no-hardlinks", repoRoot, clone], {
    timeoutMs: 60_000,
  });
  assert.equal(r.code, 0, `git clone of ${repoRoot} failed: ${r.stderr}`);
});

test(".ci/run installs with npm ci", () => {
  const script = readFileSync(join(repoRoot, ".ci/run"), "utf8");
  const commands = script.split("\n").filter((line) => /^\s*npm\s/.test(line));
  assert.ok(
    commands.some((line) => /^\s*npm ci\b/.test(line)),
    `no npm ci in .ci/run: ${commands.join(" | ")}`,
  );
  assert.deepEqual(
    commands.filter((line) => /^\s*npm (install|i)\b/.test(line)),
    [],
    "npm install in .ci/run",
  );
});

test("npm ci accepts the lock file of a fresh clone", { timeout: 180_000 }, async () => {
  const r = await npm(["ci", "--dry-run"]);
  assert.equal(r.code, 0, `npm ci refused the lock file:\n${r.stderr}`);
  assert.equal(await gitStatus(), "");
});

test("npm install leaves a fresh clone's git status clean", { timeout: 180_000 }, async () => {
  const r = await npm(["install", "--package-lock-only"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await gitStatus(), "", "npm install changed tracked files (see git diff package-lock.json)");
});

test("npx protocall --version runs in a fresh clone and leaves its git status clean", async () => {
  // The build and the packages of this repository, linked in and kept out of git's sight as a built
  // and installed clone's are (dist/ and node_modules/ are ignored directories; a link is a file).
  appendFileSync(join(clone, ".git/info/exclude"), "/dist\n/node_modules\n");
  symlinkSync(join(repoRoot, "dist"), join(clone, "dist"));
  symlinkSync(join(repoRoot, "node_modules"), join(clone, "node_modules"));
  try {
    const r = await runProcess("npx", ["--offline", "protocall", "--version"], {
      cwd: clone,
      env: { npm_config_update_notifier: "false" },
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, `npx protocall --version failed: ${r.stderr}`);
    assert.match(r.stdout, /^\d+\.\d+\.\d+/);
    assert.equal(await gitStatus(), "", "npx protocall changed tracked files (git diff shows what)");
  } finally {
    rmSync(join(clone, "dist"));
    rmSync(join(clone, "node_modules"));
  }
});

test("package-lock.json records biome's, buf's and esbuild's packages for every platform", () => {
  const lock = JSON.parse(readFileSync(join(clone, "package-lock.json"), "utf8")) as {
    packages: Record<string, { optionalDependencies?: Record<string, string>; version?: string }>;
  };
  const expected: Record<string, string[]> = {
    "@biomejs/biome": ["@biomejs/cli-darwin-arm64", "@biomejs/cli-win32-x64", "@biomejs/cli-linux-arm64"],
    "@bufbuild/buf": ["@bufbuild/buf-darwin-arm64", "@bufbuild/buf-win32-x64", "@bufbuild/buf-linux-aarch64"],
    esbuild: ["@esbuild/darwin-arm64", "@esbuild/win32-x64", "@esbuild/linux-arm64", "@esbuild/linux-arm"],
  };
  for (const [pkg, platforms] of Object.entries(expected)) {
    const entry = lock.packages[`node_modules/${pkg}`];
    assert.ok(entry, `${pkg} is not in package-lock.json`);
    const optional = entry.optionalDependencies ?? {};
    for (const p of platforms) assert.ok(p in optional, `${pkg} has no optional dependency ${p}`);
    // Every platform package the tool names is recorded, at the version it asks for.
    for (const [name, version] of Object.entries(optional)) {
      const recorded = lock.packages[`node_modules/${name}`];
      assert.ok(recorded, `package-lock.json lacks ${name} (an optional dependency of ${pkg})`);
      assert.equal(
        recorded.version,
        version,
        `${name} is recorded at ${recorded.version}, ${pkg} wants ${version}`,
      );
    }
  }
});
