// `npm run package` makes .vsix files that install into a real VS Code with --install-extension and
// work there: the linux-x64 package compiles the workspace with the buf binary it carries (no buf on
// PATH); the universal one uses the buf of the protocall.bufPath setting (or PATH: VS Code's server
// gives the extension host the login shell's PATH, so that case is covered by find-buf's own tests),
// and without any buf says where it looked and how to fix it.
// Screenshots: test-results/package/.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync, symlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, before, test } from "node:test";
import {
  codeServerEntry,
  copyExamplesWorkspace,
  ensureCodeServer,
  extensionVersion,
  repoRoot,
  startCodeServer,
} from "../support/code-server";
import { openWorkbench } from "../support/workbench";

const version = extensionVersion();
let out: string;
const cleanup: string[] = [];

/** PATH without node_modules/.bin folders (where npm puts buf) and without any other buf. */
function pathWithoutBuf(): string {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .filter((d) => d && !d.includes("node_modules") && !existsSync(join(d, "buf")))
    .join(delimiter);
}

before(
  async () => {
    ensureCodeServer();
    out = await mkdtemp(join(tmpdir(), "protocall-vsix-"));
    cleanup.push(out);
    // dist/ is built by `npm test`; package what is there.
    const r = spawnSync(
      process.execPath,
      [join(repoRoot, "scripts/package.mjs"), "--no-build", "--out", out],
      {
        encoding: "utf8",
        timeout: 180_000,
      },
    );
    assert.equal(r.status, 0, `npm run package failed:\n${r.stdout}\n${r.stderr}`);
  },
  { timeout: 200_000 },
);

after(async () => {
  for (const d of cleanup) await rm(d, { recursive: true, force: true });
});

/** Installs `vsix` into a fresh extensions dir with code-server's --install-extension; returns the dir. */
async function install(vsix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pext-"));
  const ud = await mkdtemp(join(tmpdir(), "pud-"));
  cleanup.push(dir, ud);
  const r = spawnSync(
    process.execPath,
    [codeServerEntry, "--extensions-dir", dir, "--user-data-dir", ud, "--install-extension", vsix],
    { encoding: "utf8", timeout: 120_000 },
  );
  assert.equal(r.status, 0, `--install-extension failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /was successfully installed/);
  return dir;
}

/** Opens requests/demo.rpc in code-server with the installed extension; returns the hover on "name". */
async function hoverName(
  extensionsDir: string,
  path: string,
  artifacts: string,
  settings: Record<string, unknown> = {},
  wantHover = true,
): Promise<{ hover: string; log: string }> {
  const workspace = await copyExamplesWorkspace();
  cleanup.push(join(workspace, ".."));
  const server = await startCodeServer({
    workspace,
    withoutProtocall: true,
    extensionsDir,
    env: { PATH: path },
    settings,
  });
  const wb = await openWorkbench(server.url, workspace, artifacts);
  try {
    await wb.openFile("requests/demo.rpc");
    await wb.page
      .locator(".codelens-decoration a")
      .filter({ hasText: "Send" })
      .first()
      .waitFor({ timeout: 60_000 });
    await wb.runCommand("Protocall: Show Output");
    const logLine = await wb.waitForText(/built\s|buf/, wb.page.locator(".panel"), 60_000);
    const log =
      (await wb.page.locator(".panel .view-lines").first().textContent()) ??
      (await logLine.textContent()) ??
      "";
    if (!wantHover) {
      await wb.screenshot("output");
      return { hover: "", log: log.replace(/\u00a0/g, " ") };
    }
    const hover = await wb
      .hover('{"name": "world"}', '"name"', /The name of the person/)
      .catch((err: Error) => `(no hover: ${err.message})`);
    await wb.screenshot("hover");
    return { hover, log: log.replace(/\u00a0/g, " ") };
  } finally {
    await wb.close();
    await server.close();
  }
}

test("the linux-x64 package carries buf and compiles the workspace with it", {
  timeout: 240_000,
}, async () => {
  const vsix = join(out, `protocall-linux-x64-${version}.vsix`);
  assert.ok(existsSync(vsix), `${vsix} exists (in ${readdirSync(out).join(", ")})`);
  const dir = await install(vsix);
  const installed = readdirSync(dir).find((d) => d.startsWith(`protocall.protocall-${version}`));
  assert.ok(installed, `installed as protocall.protocall-${version}: ${readdirSync(dir).join(", ")}`);
  const buf = join(dir, installed, "node_modules/@bufbuild/buf-linux-x64/bin/buf");
  accessSync(buf, constants.X_OK);
  const { hover, log } = await hoverName(
    dir,
    pathWithoutBuf(),
    join(repoRoot, "test-results/package/linux-x64"),
  );
  assert.match(hover, /The name of the person/, `hover: ${hover}\nlog: ${log}`);
});

test("the universal package uses the configured buf, and says what to do without one", {
  timeout: 300_000,
}, async () => {
  const vsix = join(out, `protocall-${version}.vsix`);
  const dir = await install(vsix);
  const installed = readdirSync(dir).find((d) => d.startsWith(`protocall.protocall-${version}`));
  assert.ok(installed);
  assert.equal(
    existsSync(join(dir, installed, "node_modules")),
    false,
    "no node_modules in the universal package",
  );

  // buf from the setting: the build works.
  const bin = await mkdtemp(join(tmpdir(), "pbin-"));
  cleanup.push(bin);
  symlinkSync(join(repoRoot, "node_modules/@bufbuild/buf-linux-x64/bin/buf"), join(bin, "buf"));
  const withBuf = await hoverName(
    dir,
    pathWithoutBuf(),
    join(repoRoot, "test-results/package/universal-setting"),
    {
      "protocall.bufPath": join(bin, "buf"),
    },
  );
  assert.match(withBuf.hover, /The name of the person/, `hover: ${withBuf.hover}\nlog: ${withBuf.log}`);

  // No buf anywhere: the log says so and how to fix it.
  const without = await hoverName(
    dir,
    pathWithoutBuf(),
    join(repoRoot, "test-results/package/universal-no-buf"),
    {},
    false,
  );
  assert.match(
    without.log,
    /cannot find the buf compiler: no buf path is configured, the package @bufbuild\/buf-linux-x64 is not installed, and there is no buf on PATH/,
    without.log,
  );
});
