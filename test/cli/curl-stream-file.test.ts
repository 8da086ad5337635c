// `--stream-file FIELD=PATH` (and `# @stream-file` in a request file) against a real client-streaming
// server (test/support/upload-server.ts): the file arrives whole (same SHA-256, same size) in chunks
// of --stream-chunk bytes, and the CLI's peak memory stays flat: a 96 MiB file is streamed with a
// peak RSS under 150 MB (read from /proc while it runs), where reading the file whole would need far
// more. Misuse (no `=`, a missing file, -d too) is a clear error.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cliPath, runCli } from "../support/cli";
import { startUploadServer, type UploadServer } from "../support/upload-server";

const dir = mkdtempSync(join(tmpdir(), "protocall-stream-file-"));
let server: UploadServer;

before(async () => {
  server = await startUploadServer();
});

after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `mib` MiB of random data, returning its path and SHA-256. */
function bigFile(name: string, mib: number): { path: string; sha256: string } {
  const path = join(dir, name);
  const hash = createHash("sha256");
  const fd = openSync(path, "w");
  const block = randomBytes(1024 * 1024);
  for (let i = 0; i < mib; i++) {
    block[0] = i & 0xff;
    hash.update(block);
    writeSync(fd, block);
  }
  closeSync(fd);
  return { path, sha256: hash.digest("hex") };
}

/** Runs the CLI, polling its peak RSS (VmHWM) while it runs. */
function runMeasured(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string; peakRssMb: number }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [cliPath, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let peak = 0;
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        if (m) peak = Math.max(peak, Number(m[1]) / 1024);
      } catch {
        // The process has ended.
      }
    }, 50);
    child.on("error", fail);
    child.on("close", (code) => {
      clearInterval(poll);
      done({ code: code ?? -1, stdout, stderr, peakRssMb: peak });
    });
  });
}

describe("--stream-file", { timeout: 300_000 }, () => {
  test("a file arrives whole in chunks of --stream-chunk bytes, from the command line and a request file", async () => {
    const data = randomBytes(1_000_000 + 123);
    writeFileSync(join(dir, "small.bin"), data);
    const sha256 = createHash("sha256").update(data).digest("hex");
    const r = await runCli(
      [
        "curl",
        "--protocol",
        "grpc",
        "--schema",
        server.schema,
        "--stream-file",
        "data=small.bin",
        "--stream-chunk",
        "100KiB",
        `${server.url}/upload.v1.UploadService/Upload`,
      ],
      { cwd: dir },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { bytes: "1000123", chunks: 10, sha256, largest: 102400 });

    writeFileSync(
      join(dir, "upload.rpc"),
      `# @protocol grpc\n# @schema ${server.schema}\n# @stream-file data=./small.bin\n# @assert message.sha256 == "${sha256}"\n# @assert message.chunks == 16\n${server.url}/upload.v1.UploadService/Upload\n`,
    );
    const run = await runCli(["run", "upload.rpc"], { cwd: dir });
    assert.equal(run.code, 0, run.stderr);
  });

  test("a 96 MiB file streams with a flat peak RSS (under 150 MB)", async () => {
    const { path, sha256 } = bigFile("big.bin", 96);
    const r = await runMeasured([
      "curl",
      "--protocol",
      "grpc",
      "--schema",
      server.schema,
      "--stream-file",
      `data=${path}`,
      `${server.url}/upload.v1.UploadService/Upload`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.sha256, sha256);
    assert.equal(summary.bytes, String(96 * 1024 * 1024));
    console.log(`peak RSS streaming 96 MiB: ${r.peakRssMb.toFixed(1)} MB`);
    assert.ok(r.peakRssMb > 0, "the RSS was read");
    assert.ok(r.peakRssMb < 150, `peak RSS ${r.peakRssMb.toFixed(1)} MB`);
  });

  test("misuse is a clear error", async () => {
    const url = `${server.url}/upload.v1.UploadService/Upload`;
    const noField = await runCli(["curl", "--schema", server.schema, "--stream-file", "small.bin", url], {
      cwd: dir,
    });
    assert.equal(noField.code, 1);
    assert.match(noField.stderr, /invalid --stream-file "small\.bin": write FIELD=PATH/);
    const missing = await runCli(["curl", "--schema", server.schema, "--stream-file", "data=nope.bin", url], {
      cwd: dir,
    });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /--stream-file nope\.bin: no such file/);
    const both = await runCli(
      ["curl", "--schema", server.schema, "--stream-file", "data=small.bin", "-d", "{}", url],
      { cwd: dir },
    );
    assert.notEqual(both.code, 0);
    assert.match(both.stderr, /--stream-file and -d both give the request data/);
    const chunk = await runCli(
      ["curl", "--schema", server.schema, "--stream-file", "data=small.bin", "--stream-chunk", "0", url],
      { cwd: dir },
    );
    assert.equal(chunk.code, 1);
    assert.match(chunk.stderr, /invalid --stream-chunk "0"/);
  });
});
