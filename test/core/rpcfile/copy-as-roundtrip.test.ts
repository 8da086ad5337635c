// "Copy as" round trips: each request of a .rpc file is run with `protocall run`, then its copied
// `protocall curl` and `buf curl` commands are run by a real shell (the real CLI bundle and the real buf
// binary) against the demo server; output and exit codes must be the same.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { openRpcContext } from "../../../src/core/rpcfile/context";
import { copyAsBufCurl, copyAsProtocallCurl } from "../../../src/core/rpcfile/copy-as";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { bufPath } from "../../support/buf";
import { cliPath, runCli, runProcess } from "../../support/cli";
import { type DemoServer, startDemoServer } from "../../support/servers";

const dir = mkdtempSync(join(tmpdir(), "protocall-copyas-"));
const bin = join(dir, "bin");
let server: DemoServer;

before(async () => {
  server = await startDemoServer();
  // `protocall` and `buf` on the PATH of the shell that runs the copied commands.
  mkdirSync(bin);
  writeFileSync(join(bin, "protocall"), `#!/bin/sh\nexec "${process.execPath}" "${cliPath}" "$@"\n`);
  chmodSync(join(bin, "protocall"), 0o755);
  symlinkSync(bufPath, join(bin, "buf"));
  writeFileSync(join(dir, "more.json"), '{"number": 30}\n');
  writeFileSync(
    join(dir, "requests.rpc"),
    [
      `@host = ${server.url}`,
      "@who = it's me",
      "",
      "### Greet",
      "# @timeout 10s",
      "{{host}}/demo.v1.GreetService/Greet",
      "",
      '{"name": "{{who}}"}',
      "",
      "### Inspect headers",
      "{{host}}/demo.v1.DemoService/Inspect",
      "User-Agent: roundtrip/1",
      "x-note: a, 'c' and \"d\" $HOME",
      "",
      "{}",
      "",
      "### Sum over gRPC",
      "GRPC {{host}}/demo.v1.DemoService/Sum",
      "",
      '{"number": 1}',
      '{"number": "11"}',
      "< ./more.json",
      "",
      "### Count over gRPC-Web",
      "# @protocol grpcweb",
      "# @emit-defaults",
      "{{host}}/demo.v1.DemoService/Count",
      "",
      '{"count": 3, "text": "n"}',
      "",
      "### Fail",
      "{{host}}/demo.v1.DemoService/Fail",
      "",
      '{"code": "CODE_NOT_FOUND", "message": "no such thing"}',
      "",
      "### List",
      "# @list-methods",
      "{{host}}",
      "",
    ].join("\n"),
  );
});

after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ PATH: `${bin}:${process.env.PATH}`, BUF_CACHE_DIR: join(dir, "buf-cache") });

async function runRequest(name: string) {
  const r = await runCli(["run", join(dir, "requests.rpc"), "--name", name], { timeoutMs: 30_000 });
  const lines = r.stderr.split("\n");
  assert.match(lines[lines.length - 2], /^1 request: /, r.stderr);
  return { ...r, stderr: lines.slice(0, -2).join("\n") + (lines.length > 2 ? "\n" : "") };
}

function copied(name: string, as: "protocall" | "buf"): string {
  const file = parseRpcFile(readFileSync(join(dir, "requests.rpc"), "utf8"));
  const request = file.requests.find((r) => r.name?.text === name);
  assert.ok(request);
  const conversion = openRpcContext({
    filePath: join(dir, "requests.rpc"),
    workspaceRoot: dir,
    processEnv: {},
  }).toCurl(file, request);
  assert.deepEqual(conversion.diagnostics, []);
  assert.ok(conversion.options);
  return (as === "buf" ? copyAsBufCurl : copyAsProtocallCurl)(conversion.options).command;
}

describe("copy as protocall curl / buf curl does what the request does", { timeout: 120_000 }, () => {
  for (const name of ["Greet", "Inspect headers", "Sum over gRPC", "Count over gRPC-Web", "Fail", "List"]) {
    test(name, async () => {
      const expected = await runRequest(name);
      for (const as of ["protocall", "buf"] as const) {
        const command = copied(name, as);
        const r = await runProcess("sh", ["-c", command], { env: env(), cwd: tmpdir(), timeoutMs: 30_000 });
        assert.equal(r.code, expected.code, `${as}: ${command}\n${r.stderr}`);
        assert.equal(r.stdout, expected.stdout, `${as}: ${command}`);
        if (expected.code !== 0) {
          // protocall run reports a failed request as a test (FAIL and the status it got); the command
          // line prints buf's error JSON: the same code and message.
          const error = JSON.parse(r.stderr) as { code: string; message: string };
          assert.ok(
            expected.stderr.includes(`got ${error.code}: ${error.message}`),
            `${as}: ${command}\n${r.stderr}\nrun: ${expected.stderr}`,
          );
        }
      }
      if (name === "Greet") assert.match(expected.stdout, /"greeting": "Hello, it's me!"/);
      if (name === "Inspect headers") {
        assert.match(expected.stdout, /"name": "x-note",\n\s+"value": "a, 'c' and \\"d\\" \$HOME"/);
      }
      if (name === "Sum over gRPC") assert.match(expected.stdout, /"sum": "42",\n {2}"count": 3/);
      if (name === "Count over gRPC-Web") assert.equal(expected.stdout.match(/"number"/g)?.length, 3);
      if (name === "Fail") assert.equal(expected.code, 40);
      if (name === "List") assert.match(expected.stdout, /^demo\.v1\.DemoService\/Chat\n/);
    });
  }
});
