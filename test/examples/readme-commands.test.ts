// The commands the READMEs tell a new user to type work as written: every `protocall …` line of their
// shell blocks runs (the real shell, the installed command) against the demo server with the exit code
// the text implies; a server command (`registry serve`, `listen`) must print its URL and stop cleanly
// on SIGTERM, run on port 0 in a directory holding the files it names (a certificate for localhost);
// and every `node FILE` the text names runs a file that is in the repository or that `npm run build`
// writes.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { repoRoot, runProcess } from "../support/cli";
import { startTestRegistry, type TestRegistry, writeWorkspace } from "../support/registry";
import { type DemoServer, startDemoServer } from "../support/servers";
import { createTestPki } from "../support/tls";

const readmes = ["README.md", "examples/README.md"];
const documentedUrl = "http://127.0.0.1:8080";
/** The registry the READMEs name: `protocall registry serve --port 8443` with examples/registry/config.json. */
const documentedRemote = "localhost:8443";

/** The lines of the ```sh blocks of a Markdown file that run protocall, placeholders excluded. */
function protocallLines(markdown: string): string[] {
  const lines: string[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const raw of block[1].split("\n")) {
      const line = raw.replace(/\s+#.*$/, "").trim();
      if (!/^(npx )?protocall /.test(line)) continue;
      if (/<\w|\[|\.\.\./.test(line)) continue; // a usage line: `protocall curl <url> [flags]`
      lines.push(line);
    }
  }
  return lines;
}

/** A command that serves until stopped: `protocall registry serve …`, `protocall listen …`. */
const isServer = (command: string) =>
  /^protocall (registry serve|listen|mock)(?! (list|replay)\b)/.test(command);

/**
 * Runs a server command in `cwd` through the shell: resolves with its first stdout line (its URL) and
 * its exit code after SIGTERM, or rejects with its stderr when it exits or prints nothing for 60 s.
 */
function serveAndStop(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; code: number | null }> {
  const child = spawn("sh", ["-c", `exec ${command}`], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let stopping = false;
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString("utf8");
  });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} printed no URL within 60 s: ${stderr}`));
    }, 60_000);
    const early = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before printing its URL: ${stderr}`));
    };
    child.once("exit", early);
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8");
      const newline = stdout.indexOf("\n");
      if (newline < 0 || stopping) return;
      stopping = true;
      clearTimeout(timer);
      child.off("exit", early);
      const url = stdout.slice(0, newline).trim();
      child.once("exit", (code) => resolvePromise({ url, code }));
      child.kill("SIGTERM");
    });
  });
}

let server: DemoServer;
let registry: TestRegistry | undefined;

/**
 * The registry of the README's walk-through, started for the first line that names it: the example
 * configuration, and the example schema pushed by the real buf as acme/petapis (its `main` label).
 */
async function documentedRegistry(): Promise<TestRegistry> {
  if (registry) return registry;
  const config = JSON.parse(readFileSync(join(repoRoot, "examples/registry/config.json"), "utf8"));
  registry = await startTestRegistry({ config });
  const ws = mkdtempSync(join(tmpdir(), "protocall-readme-module-"));
  cpSync(join(repoRoot, "examples/proto"), join(ws, "proto"), { recursive: true });
  writeWorkspace(ws, { "buf.yaml": registry.bufYaml([{ path: "proto", name: "acme/petapis" }]) });
  const pushed = await registry.buf(["push", "--create", "--create-visibility", "private"], {
    cwd: ws,
    token: "alice-token",
  });
  assert.equal(pushed.code, 0, `buf push to the example registry: ${pushed.stderr}`);
  rmSync(ws, { recursive: true, force: true });
  return registry;
}
const dir = mkdtempSync(join(tmpdir(), "protocall-readme-"));
const serverDir = join(dir, "servers");

before(async () => {
  server = await startDemoServer();
  // `protocall` on the PATH of the shell, as `npm link` or `npx` would provide it.
  mkdirSync(join(dir, "bin"));
  writeFileSync(
    join(dir, "bin", "protocall"),
    `#!/bin/sh\nexec "${process.execPath}" "${join(repoRoot, "bin", "protocall.js")}" "$@"\n`,
  );
  chmodSync(join(dir, "bin", "protocall"), 0o755);
  // The example request file names the documented address; a copy names the test server's.
  for (const name of ["demo.rpc", "assertions.rpc"]) {
    const rpc = readFileSync(join(repoRoot, "examples/requests", name), "utf8");
    writeFileSync(join(dir, name), rpc.replaceAll(documentedUrl, server.url));
  }
  // The certificate files the server examples name.
  const pki = await createTestPki(["localhost"]);
  mkdirSync(serverDir);
  copyFileSync(pki.server.certPath, join(serverDir, "server.pem"));
  copyFileSync(pki.server.keyPath, join(serverDir, "server-key.pem"));
  copyFileSync(pki.ca.certPath, join(serverDir, "ca.pem"));
  rmSync(pki.dir, { recursive: true, force: true });
});
after(async () => {
  await Promise.all([server.close(), registry?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("README commands", { timeout: 300_000 }, () => {
  for (const readme of readmes) {
    test(`the protocall commands of ${readme} work as written`, async () => {
      const lines = protocallLines(readFileSync(join(repoRoot, readme), "utf8"));
      assert.ok(lines.length >= 5, `${readme} shows protocall commands`);
      for (const line of lines) {
        let command = line
          .replace(/^npx /, "")
          .replaceAll(documentedUrl, server.url)
          .replaceAll("examples/requests/demo.rpc", join(dir, "demo.rpc"))
          .replaceAll("examples/requests/assertions.rpc", join(dir, "assertions.rpc"))
          // Reports are written beside the copies, not into the repository.
          .replace(
            /--reporter (\w+)=(?!\/)(\S+)/g,
            (_, kind, file) => `--reporter ${kind}=${join(dir, file)}`,
          )
          .replace(/ -o (?!\/)(\S+)/g, (_, file) => ` -o ${join(dir, file)}`)
          // Servers run in a directory of their own: the mock's stubs and schema are the repository's.
          .replace(/^(protocall mock .*)$/, (m) =>
            m.replace(/(?<= )examples\b/g, join(repoRoot, "examples")),
          );
        const env: Record<string, string | undefined> = {
          PATH: `${join(dir, "bin")}:${process.env.PATH}`,
          PROTOCALL_CACHE_DIR: join(dir, "cache"),
          XDG_CONFIG_HOME: join(dir, "config"),
        };
        // A module of the documented registry: SSL_CERT_FILE and BUF_TOKEN as the README exports them.
        if (!isServer(command) && command.includes(`${documentedRemote}/`)) {
          const r = await documentedRegistry();
          Object.assign(env, r.env("alice-token"), { PROTOCALL_CACHE_DIR: join(dir, "cache") });
          command = command.replaceAll(`${documentedRemote}/`, `${r.remote}/`);
        }
        if (isServer(command)) {
          // Port 0: the documented port may be taken on this machine.
          const served = await serveAndStop(command.replace(/--port \d+/, "--port 0"), serverDir, {
            ...process.env,
            ...env,
          });
          assert.match(served.url, /^https?:\/\/[^/\s]+(\/\S*)?$/, `${readme}: ${line} prints its URL first`);
          assert.equal(served.code, 0, `${readme}: ${line} stops cleanly on SIGTERM`);
          continue;
        }
        const r = await runProcess("sh", ["-c", command], { env, timeoutMs: 60_000 });
        // The Fail method fails on purpose (not_found, exit 40); the request files expect it and pass.
        const expected = /DemoService\/Fail/.test(command) ? 40 : 0;
        assert.equal(r.code, expected, `${readme}: ${line}\n${r.stderr}`);
        // protocall check prints only problems on stdout, and its count of files on stderr.
        const result = /^protocall check\b/.test(command) ? r.stderr : r.stdout;
        // With -o the result is the file written (checked below), as with buf build.
        if (expected === 0 && !/ -o /.test(command)) {
          assert.notEqual(result, "", `${readme}: ${line} prints its result`);
        }
        for (const m of command.matchAll(/(?:--reporter \w+=| -o )(\S+)/g)) {
          assert.ok(existsSync(m[1]), `${readme}: ${line} writes ${m[1]}`);
        }
      }
    });
  }

  test("every `node FILE` the READMEs name is in the repository or written by npm run build", () => {
    const built = [...readFileSync(join(repoRoot, "esbuild.mjs"), "utf8").matchAll(/\bout: "([\w-]+)"/g)].map(
      (m) => `dist/${m[1]}.js`,
    );
    assert.ok(built.includes("dist/cli.js"), built.join(", "));
    const tracked = new Set(
      execFileSync("git", ["ls-files"], { cwd: repoRoot, encoding: "utf8" }).split("\n"),
    );
    let named = 0;
    for (const readme of readmes) {
      const text = readFileSync(join(repoRoot, readme), "utf8");
      for (const m of text.matchAll(/`node (?:--import tsx )?([\w./-]+\.[cm]?[jt]s)\b/g)) {
        named++;
        const file = m[1];
        assert.ok(
          tracked.has(file) || built.includes(file),
          `${readme} runs \`node ${file}\`, which neither the repository nor npm run build has`,
        );
        assert.ok(existsSync(join(repoRoot, file)) || built.includes(file), file);
      }
    }
    assert.ok(named > 0, "the READMEs name the demo server's command");
  });
});
