// `protocall load`'s live progress: on a terminal, a line rewritten about once a second (rate, p50,
// p99, errors, elapsed/total); when stderr is not a terminal, none (only the start line and the
// report). The command runs in-process against a real server, with stderr a stream that says whether
// it is a terminal, as a TTY stream does.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { command } from "../../src/cli/commands/load";
import type { CliContext } from "../../src/cli/context";
import { type LoadServer, startLoadServer } from "../support/load-server";

const dir = mkdtempSync(join(tmpdir(), "protocall-load-progress-"));
mkdirSync(join(dir, ".git"));
let server: LoadServer;
before(async () => {
  server = await startLoadServer();
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function runLoad(isTTY: boolean): Promise<{ code: number; stderr: string }> {
  let text = "";
  const stderr = Object.assign(
    new Writable({
      write(chunk, _enc, done) {
        text += chunk;
        done();
      },
    }),
    { isTTY },
  );
  const ctx: CliContext = {
    stdout: stderr,
    stderr,
    stdin: process.stdin,
    stdinIsTTY: false,
    env: {},
    cwd: dir,
    interrupted: () => new AbortController().signal,
  };
  const file = join(dir, "greet.rpc");
  writeFileSync(
    file,
    `### Greet\n# @http2-prior-knowledge\n${server.url}/demo.v1.GreetService/Greet\n\n{"name": "p"}\n`,
  );
  const code = await command.run([file, "--rate", "20", "--duration", "2500ms"], ctx);
  return { code, stderr: text };
}

describe("protocall load progress", { timeout: 60_000 }, () => {
  test("on a terminal: a progress line rewritten in place, cleared before the report", async () => {
    const r = await runLoad(true);
    assert.equal(r.code, 0, r.stderr);
    const lines =
      r.stderr.match(
        /\r\x1b\[K\d+s\/3s {2}\d+ req\/s {2}p50 [\d.]+ ms {2}p99 [\d.]+ ms {2}errors 0 {2}in flight \d+/g,
      ) ?? [];
    assert.ok(lines.length >= 1, r.stderr);
    assert.match(r.stderr, /\r\x1b\[Kgreet\.rpc: Greet: open model/);
  });

  test("not on a terminal: no progress, only the start line and the report", async () => {
    const r = await runLoad(false);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /\r|\x1b/);
    assert.match(
      r.stderr,
      /^load greet\.rpc: Greet: 2\.5 s at 20 requests\/s .*\ngreet\.rpc: Greet: open model/,
    );
  });
});
