// The npm package holds what a user runs, and installs and runs on a machine with nothing of the
// repository: `npm pack` carries the bundles (dist/*.js), the `protocall` launcher (executable), the
// editor's media and grammar, never the sources, tests or benchmarks; `npm i -g` of the tarball into a
// fresh prefix gives a `protocall` that prints its version and calls a demo server, run from a folder
// outside the repository. The packed files are the ones `npm test` built (dist/); `npm pack` itself
// builds first (the prepack script), which the test does not repeat so as not to rewrite dist/ under
// the other tests (dist/ may also hold the demo server `npm start` builds, which is not packed).
// Installing fetches the dependencies through npm's cache (`--prefer-offline`).
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { repoRoot, runProcess } from "../support/cli";

const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  version: string;
  scripts: Record<string, string>;
};
const temp = mkdtempSync(join(tmpdir(), "protocall-npm-package-"));
const prefix = join(temp, "prefix");
const elsewhere = join(temp, "elsewhere");
let server: DemoServer;
let packed: { filename: string; size: number; files: { path: string; mode: number }[] };

const npmEnv = { npm_config_update_notifier: "false", npm_config_loglevel: "error" };

before(async () => {
  mkdirSync(elsewhere);
  server = await startDemoServer();
  const r = await runProcess("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", temp], {
    cwd: repoRoot,
    env: npmEnv,
    timeoutMs: 120_000,
  });
  assert.equal(r.code, 0, `npm pack failed:\n${r.stderr}`);
  packed = (JSON.parse(r.stdout) as (typeof packed)[])[0];
});
after(async () => {
  await server?.close();
  rmSync(temp, { recursive: true, force: true });
});

test("the package holds the bundles, the launcher and the media, and nothing else", () => {
  const paths = packed.files.map((f) => f.path).sort();
  const allowed =
    /^(dist\/(cli|curl|yaml|openid-client|extension|extension-lazy|server|protoc-gen-rpc)\.js|bin\/[a-z-]+\.(js|json)|media\/.+|syntaxes\/.+|package\.json|README\.md|language-configuration\.json)$/;
  assert.deepEqual(
    paths.filter((p) => !allowed.test(p)),
    [],
    "files a user does not run are in the package: see `files` in package.json",
  );
  for (const needed of [
    "bin/protocall.js",
    "bin/package.json",
    "dist/cli.js",
    "dist/curl.js",
    "dist/yaml.js",
    "dist/openid-client.js",
    "dist/extension.js",
    "dist/server.js",
    "dist/protoc-gen-rpc.js",
    "media/protocall.svg",
    "syntaxes/rpc.tmLanguage.json",
    "README.md",
  ]) {
    assert.ok(paths.includes(needed), `${needed} is not in the package`);
  }
  const launcher = packed.files.find((f) => f.path === "bin/protocall.js");
  assert.ok(launcher && (launcher.mode & 0o111) !== 0, "bin/protocall.js is not executable in the package");
  assert.ok(packed.size < 4 * 1024 * 1024, `the package is ${packed.size} bytes`);
});

test("npm pack builds the bundles first", () => {
  assert.match(pkg.scripts.prepack ?? "", /esbuild\.mjs/);
});

test("npm i -g of the tarball gives a protocall that runs", { timeout: 300_000 }, async () => {
  const install = await runProcess(
    "npm",
    [
      "install",
      "-g",
      "--prefix",
      prefix,
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      join(temp, packed.filename),
    ],
    { cwd: elsewhere, env: npmEnv, timeoutMs: 280_000 },
  );
  assert.equal(install.code, 0, `npm install -g failed:\n${install.stderr}`);
  const protocall = join(prefix, "bin", "protocall");
  const env = { PROTOCALL_CACHE_DIR: join(temp, "cache") };

  const version = await runProcess(protocall, ["--version"], { cwd: elsewhere, env });
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, new RegExp(`\\b${pkg.version.replaceAll(".", "\\.")}\\b`));

  const curl = await runProcess(
    protocall,
    ["curl", "-d", '{"name":"package"}', `${server.url}/demo.v1.GreetService/Greet`],
    { cwd: elsewhere, env },
  );
  assert.equal(curl.stderr, "");
  assert.equal(curl.stdout, '{\n  "greeting": "Hello, package!"\n}\n');
  assert.equal(curl.code, 0);
});
