import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { CliContext } from "../../src/cli/context";
import { reportError } from "../../src/cli/report-error";
import { ProtocallError } from "../../src/core/errors";

function context(): { ctx: CliContext; stderr: () => string } {
  let text = "";
  const stderr = new Writable({
    write(chunk, _enc, done) {
      text += chunk;
      done();
    },
  });
  const ctx: CliContext = {
    stdout: stderr,
    stderr,
    stdin: process.stdin,
    stdinIsTTY: false,
    env: {},
    cwd: process.cwd(),
    interrupted: () => new AbortController().signal,
  };
  return { ctx, stderr: () => text };
}

test("a ConnectError prints its message and exits with its code × 8", () => {
  const { ctx, stderr } = context();
  assert.equal(reportError(new ConnectError("no such thing", Code.NotFound), ctx), 40);
  assert.equal(stderr(), "protocall: no such thing\n");
});

test("a ConnectError without a message prints its code", () => {
  const { ctx, stderr } = context();
  assert.equal(reportError(new ConnectError("", Code.Unavailable), ctx), 112);
  assert.equal(stderr(), "protocall: 14\n");
});

test("an error merely named ConnectError is an unexpected error", () => {
  const { ctx, stderr } = context();
  const lookalike = Object.assign(new Error("odd"), { name: "ConnectError", code: 5 });
  assert.equal(reportError(lookalike, ctx), 1);
  assert.equal(stderr(), "protocall: unexpected error: odd\n");
});

test("a ProtocallError prints its message with its exit code", () => {
  const { ctx, stderr } = context();
  assert.equal(reportError(new ProtocallError("bad flag"), ctx), 1);
  assert.equal(stderr(), "protocall: bad flag\n");
});
