// Stopping commands (src/cli/io.ts): Ctrl-C cancels the call of `protocall curl` and `protocall run`
// (which skips the requests not run yet and says so), and the servers stop cleanly on Ctrl-C or SIGTERM.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { startCliServer } from "../core/webhooks/support";
import { cliPath, repoRoot } from "../support/cli";
import { demoDescriptorSet } from "../support/servers";

const dir = mkdtempSync(join(tmpdir(), "protocall-interrupt-"));
let silent: net.Server;
let silentUrl: string;
let connections = 0;
const sockets = new Set<net.Socket>();

before(async () => {
  // Accepts connections and reads requests, and never answers.
  silent = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("data", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
});
after(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the CLI, sends SIGINT once a connection reached the silent server; resolves with the result. */
function interruptAfterConnect(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const before = connections;
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c;
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c;
  });
  const poll = setInterval(() => {
    if (connections > before) {
      clearInterval(poll);
      // The request is on its way once the connection is open; give it a moment to be written.
      setTimeout(() => child.kill("SIGINT"), 200);
    }
  }, 20);
  const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearInterval(poll);
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe("Ctrl-C", { timeout: 180_000 }, () => {
  test("cancels the call of protocall curl: canceled error, exit 8", async () => {
    const schema = await demoDescriptorSet();
    const r = await interruptAfterConnect([
      "curl",
      "--schema",
      schema,
      "-d",
      "{}",
      `${silentUrl}/demo.v1.GreetService/Greet`,
    ]);
    assert.equal(r.code, 8, r.stderr);
    assert.match(r.stderr, /"code": "canceled"/);
  });

  test("cancels the running request of protocall run and skips the rest", async () => {
    const schema = await demoDescriptorSet();
    const file = join(dir, "two.rpc");
    writeFileSync(
      file,
      [
        `@host = ${silentUrl}`,
        `### first`,
        `# @schema ${schema}`,
        "{{host}}/demo.v1.GreetService/Greet",
        "",
        "{}",
        "",
        "### second",
        `# @schema ${schema}`,
        "{{host}}/demo.v1.GreetService/Greet",
        "",
        "{}",
        "",
      ].join("\n"),
    );
    const r = await interruptAfterConnect(["run", file]);
    assert.equal(r.code, 8, r.stderr);
    assert.match(r.stderr, /^FAIL first \(\d+ ms\)\n {2}.*expected status == ok, got canceled/);
    assert.match(r.stderr, /\nSKIP second \(the run was interrupted\)\n/);
    assert.match(r.stderr, /\n2 requests: 0 passed, 1 failed, 1 skipped; 1 check, 1 failed \(\d+ ms\)\n$/);
  });
});

describe("servers stop cleanly", { timeout: 120_000 }, () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    test(`protocall listen and registry serve exit 0 on ${signal}`, async () => {
      const env = { XDG_CONFIG_HOME: dir };
      for (const args of [
        ["listen", "--store", join(dir, `${signal}.store`)],
        ["registry", "serve"],
      ]) {
        const server = await startCliServer(args, env);
        const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve));
        server.child.kill(signal);
        assert.equal(await exited, 0, `${args.join(" ")}: ${server.stderr()}`);
      }
    });
  }
});
