// `buf push` from inside the extension host (the suites' own process), with the real buf of the
// extension's node_modules: a module's files into a registry that the suite may run in this very
// process (so the push runs asynchronously, leaving the event loop free to answer it).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as vscode from "vscode";

/**
 * Pushes `files` (path → text) as the module `name` (`host:port/owner/module`), trusting `caFile`,
 * as alice (BUF_TOKEN); returns the commit id buf printed.
 */
export async function pushWithBuf(
  caFile: string,
  name: string,
  files: Record<string, string>,
  flags: string[] = [],
): Promise<string> {
  const root = vscode.extensions.getExtension("protocall.protocall")?.extensionPath ?? "";
  const arch = process.arch === "x64" ? "x64" : process.arch;
  const buf = join(root, "node_modules", `@bufbuild/buf-${process.platform}-${arch}`, "bin", "buf");
  const ws = mkdtempSync(join(tmpdir(), "protocall-module-"));
  writeFileSync(join(ws, "buf.yaml"), `version: v2\nmodules:\n  - path: proto\n    name: ${name}\n`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, "proto", path)), { recursive: true });
    writeFileSync(join(ws, "proto", path), text);
  }
  const r = await new Promise<{ failed: boolean; stdout: string; stderr: string }>((done) => {
    execFile(
      buf,
      ["push", ...flags],
      {
        cwd: ws,
        encoding: "utf8",
        timeout: 60_000,
        env: {
          ...process.env,
          SSL_CERT_FILE: caFile,
          BUF_TOKEN: "alice-token",
          BUF_CACHE_DIR: join(ws, ".cache"),
          HOME: ws,
        },
      },
      (err, stdout, stderr) => done({ failed: err !== null, stdout, stderr }),
    );
  });
  rmSync(ws, { recursive: true, force: true });
  assert.ok(!r.failed, `buf push: ${r.stderr}`);
  const id = r.stdout.trim().split(":").pop() ?? "";
  assert.match(id, /^[0-9a-f]{32}$/);
  return id;
}
