// `--stream-file`'s progress bar on the terminal: run on a real pseudo-terminal (util-linux `script`),
// `protocall curl` draws a line in place on stderr (bar, bytes sent of the file's size, percent,
// rate) from the first chunk to the last, and erases it before the response is printed (and
// `protocall run` for a request's `# @stream-file`, before its PASS line); with stderr
// a pipe (a CI log), nothing of it is written.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cliPath, runCli } from "../support/cli";
import { startUploadServer, type UploadServer } from "../support/upload-server";

const dir = mkdtempSync(join(tmpdir(), "protocall-stream-progress-"));
let server: UploadServer;
const file = join(dir, "upload.bin");

before(async () => {
  server = await startUploadServer();
  const fd = openSync(file, "w");
  const block = randomBytes(1024 * 1024);
  for (let i = 0; i < 24; i++) writeSync(fd, block);
  closeSync(fd);
});

after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const args = () => [
  "curl",
  "--protocol",
  "grpc",
  "--schema",
  server.schema,
  "--stream-file",
  `data=${file}`,
  `${server.url}/upload.v1.UploadService/Upload`,
];

/** Runs the CLI with stdin, stdout and stderr on a new pseudo-terminal; returns what the terminal showed. */
function onTerminal(cliArgs: string[]): Promise<{ code: number; screen: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const command = [process.execPath, cliPath, ...cliArgs].map(quote).join(" ");
  return new Promise((done, fail) => {
    const child = spawn("script", ["-qfec", command, "/dev/null"], { stdio: ["ignore", "pipe", "pipe"] });
    let screen = "";
    child.stdout.on("data", (d) => (screen += d));
    child.stderr.on("data", (d) => (screen += d));
    child.on("error", fail);
    child.on("close", (code) => done({ code: code ?? -1, screen }));
  });
}

describe("--stream-file progress", { timeout: 120_000 }, () => {
  test("on a terminal: a bar from 0 to the file's size, with the rate, erased before the response", async () => {
    const r = await onTerminal(args());
    assert.equal(r.code, 0, r.screen);
    assert.match(r.screen, /\r\x1b\[K\[-{20}\] {2}0 B \/ 24\.0 MiB {2}0%/);
    assert.match(
      r.screen,
      /\r\x1b\[K\[#{20}\] {2}24\.0 MiB \/ 24\.0 MiB {2}100% {2}[\d.]+ (B|KiB|MiB|GiB)\/s/,
    );
    // The line is erased, then the response follows on a clean line.
    const last = r.screen.lastIndexOf("100%");
    const response = r.screen.indexOf('"chunks": 384');
    assert.ok(response > last, r.screen);
    assert.match(r.screen.slice(last, response), /\r\x1b\[K\{/);
  });

  test("protocall run: a request's # @stream-file draws the same bar, erased before the PASS line", async () => {
    const rpc = join(dir, "upload.rpc");
    writeFileSync(
      rpc,
      `### Upload\n# @protocol grpc\n# @schema ${server.schema}\n# @stream-file data=./upload.bin\n# @assert message.chunks == 384\n${server.url}/upload.v1.UploadService/Upload\n`,
    );
    const r = await onTerminal(["run", rpc]);
    assert.equal(r.code, 0, r.screen);
    assert.match(
      r.screen,
      /\r\x1b\[K\[#{20}\] {2}24\.0 MiB \/ 24\.0 MiB {2}100% {2}[\d.]+ (B|KiB|MiB|GiB)\/s/,
    );
    const last = r.screen.lastIndexOf("100%");
    assert.match(r.screen.slice(last), /\r\x1b\[K.*PASS/s);
    const quiet = await runCli(["run", rpc]);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.doesNotMatch(quiet.stderr, /\r|\x1b/);
  });

  test("not on a terminal: no progress at all", async () => {
    const r = await runCli(args());
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.match(r.stdout, /"chunks": 384/);
  });
});
