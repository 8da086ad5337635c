// `npm run test:desktop` (scripts/test-desktop.mjs, test/vscode/run-desktop.ts) without desktop VS
// Code, which cannot be downloaded here: @vscode/test-electron's real runTests() is given a stand-in
// executable that records how it was started, to check that desktop VS Code would get the same suite
// index and paths as the code-server run; and the script itself, when VS Code can be neither
// downloaded nor found, fails with one line that says what to do.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { runTests } from "@vscode/test-electron";
import { repoRoot, runProcess } from "../support/cli";
import { editorSettings } from "../support/code-server";
import { desktopLaunch, launchWithWorkspaceTrust } from "../vscode/run-desktop";
import {
  buildRunner,
  codeServerTestUrl,
  extensionTestPaths,
  runnerEnv,
  selectedSuites,
} from "../vscode/run-suites";

const temp = mkdtempSync(join(tmpdir(), "protocall-test-desktop-"));
const recorded = join(temp, "argv.txt");
const recordedEnv = join(temp, "env.txt");
/** Stands in for the VS Code executable: writes its arguments and environment, exits 0. */
const fakeCode = join(temp, "code");
let runner: { dir: string; index: string };

before(async () => {
  writeFileSync(fakeCode, `#!/bin/sh\nprintf '%s\\n' "$@" > '${recorded}'\nenv > '${recordedEnv}'\n`);
  chmodSync(fakeCode, 0o755);
  runner = await buildRunner(selectedSuites());
});
after(() => {
  rmSync(temp, { recursive: true, force: true });
  if (runner) rmSync(runner.dir, { recursive: true, force: true });
});

const workspace = join(temp, "examples");
const env = () =>
  runnerEnv({ resultsFile: join(runner.dir, "results.json"), demoUrl: "http://127.0.0.1:1", workspace });

test("desktop VS Code gets the code-server run's suite index and paths through runTests", async () => {
  // The suite index is one bundle of every suite, exporting run() for VS Code to call.
  const index = readFileSync(runner.index, "utf8");
  for (const suite of selectedSuites()) assert.ok(index.includes(`name: "${suite.name}"`), suite.name);
  assert.match(index, /\brun: \(\) => run\b/);

  const paths = extensionTestPaths(runner.index);
  const launch = await desktopLaunch({ executable: fakeCode, paths, workspace, trust: true, env: env() });
  try {
    assert.equal(await runTests(launch.options), 0);
    const argv = readFileSync(recorded, "utf8").trimEnd().split("\n");
    assert.equal(argv[0], workspace, "the folder to open comes first");
    assert.ok(argv.includes(`--extensionDevelopmentPath=${repoRoot}`), argv.join(" "));
    assert.ok(argv.includes(`--extensionTestsPath=${runner.index}`), argv.join(" "));
    assert.ok(argv.includes("--disable-workspace-trust"));
    assert.ok(argv.includes(`--user-data-dir=${join(launch.profileDir, "user-data")}`));
    assert.ok(argv.includes(`--extensions-dir=${join(launch.profileDir, "extensions")}`));
    // The suite index finds its results file, the demo server and the workspace in its environment.
    const seen = readFileSync(recordedEnv, "utf8");
    for (const [name, value] of Object.entries(env())) assert.ok(seen.includes(`${name}=${value}\n`), name);
    const settings = JSON.parse(
      readFileSync(join(launch.profileDir, "user-data/User/settings.json"), "utf8"),
    );
    assert.deepEqual(settings, editorSettings(true));

    // code-server's window is given the very same two paths.
    const url = new URL(codeServerTestUrl("http://127.0.0.1:8123/?folder=%2Fw", paths));
    assert.deepEqual(JSON.parse(url.searchParams.get("payload") ?? "[]"), [
      ["extensionDevelopmentPath", `vscode-remote://127.0.0.1:8123${repoRoot}`],
      ["extensionTestsPath", `vscode-remote://127.0.0.1:8123${runner.index}`],
    ]);
    assert.equal(url.searchParams.get("folder"), "/w");
  } finally {
    rmSync(launch.profileDir, { recursive: true, force: true });
  }
});

test("suites for an untrusted workspace start VS Code as runTests does, with workspace trust on", async () => {
  const paths = extensionTestPaths(runner.index);
  const trusted = await desktopLaunch({ executable: fakeCode, paths, workspace, trust: true, env: env() });
  const untrusted = await desktopLaunch({ executable: fakeCode, paths, workspace, trust: false, env: env() });
  try {
    await runTests(trusted.options);
    const viaRunTests = readFileSync(recorded, "utf8").replaceAll(trusted.profileDir, "<profile>");
    assert.equal(await launchWithWorkspaceTrust(untrusted.options), 0);
    const ours = readFileSync(recorded, "utf8").replaceAll(untrusted.profileDir, "<profile>");
    assert.deepEqual(
      ours.split("\n"),
      viaRunTests.split("\n").filter((arg) => arg !== "--disable-workspace-trust"),
    );
    const settings = JSON.parse(
      readFileSync(join(untrusted.profileDir, "user-data/User/settings.json"), "utf8"),
    );
    assert.equal(settings["security.workspace.trust.enabled"], true);
    assert.equal(settings["security.workspace.trust.startupPrompt"], "never");
  } finally {
    rmSync(trusted.profileDir, { recursive: true, force: true });
    rmSync(untrusted.profileDir, { recursive: true, force: true });
  }
});

/** A loopback port with nothing listening: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

function testDesktop(extraEnv: Record<string, string | undefined>) {
  return runProcess(process.execPath, ["--import", "tsx", join(repoRoot, "scripts/test-desktop.mjs")], {
    env: { PROTOCALL_VSCODE_EXECUTABLE: undefined, ...extraEnv },
    timeoutMs: 60_000,
  });
}

test("test:desktop where VS Code cannot be downloaded: one line that says what to do", {
  timeout: 90_000,
}, async () => {
  // The download goes through a proxy that refuses connections, into an empty cache, so it fails
  // the same way with or without a network.
  const r = await testDesktop({
    npm_config_https_proxy: `http://127.0.0.1:${await closedPort()}`,
    npm_config_proxy: undefined,
    PROTOCALL_VSCODE_CACHE: join(temp, "vscode-cache"),
  });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(
    r.stderr,
    /^protocall tests: cannot download VS Code 1\.100\.3 \([^\n]*ECONNREFUSED[^\n]*\); test:desktop downloads it once into [^\n]*vscode-cache: where it cannot, set PROTOCALL_VSCODE_EXECUTABLE to an installed VS Code, or run the same suites in code-server with `npm test -- test\/vscode`\n$/,
  );
  assert.doesNotMatch(r.stdout, /passed/);
});

test("test:desktop with PROTOCALL_VSCODE_EXECUTABLE naming no file: one line", {
  timeout: 90_000,
}, async () => {
  const r = await testDesktop({ PROTOCALL_VSCODE_EXECUTABLE: join(temp, "no-such-code") });
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    `protocall tests: PROTOCALL_VSCODE_EXECUTABLE names ${join(temp, "no-such-code")}, which does not exist; set it to a VS Code executable (e.g. /usr/share/code/code) or unset it to download VS Code\n`,
  );
});
