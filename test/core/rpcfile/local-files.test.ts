import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { openRpcContext } from "../../../src/core/rpcfile/context";
import {
  filesOutside,
  INCLUDE_LIMIT_BYTES,
  isInside,
  readIncludedFile,
} from "../../../src/core/rpcfile/local-files";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";

const dir = mkdtempSync(join(tmpdir(), "protocall-local-files-"));
const workspace = join(dir, "ws");
const outside = join(dir, "outside");
mkdirSync(workspace);
mkdirSync(outside);
after(() => rmSync(dir, { recursive: true, force: true }));

function convert(text: string) {
  const filePath = join(workspace, "requests.rpc");
  writeFileSync(filePath, text);
  const file = parseRpcFile(text);
  const ctx = openRpcContext({ filePath, workspaceRoot: workspace, processEnv: {} });
  return ctx.toCurl(file, file.requests[0]);
}

describe("files a request reads and writes", () => {
  test("an include of a device is refused without reading it", () => {
    const r = convert("http://h/s.S/M\n\n< /dev/zero\n");
    assert.equal(r.options, undefined);
    assert.match(r.diagnostics[0].message, /included file \/dev\/zero: it is a device, not a file/);
    assert.deepEqual(r.diagnostics[0].range.start, { line: 2, character: 2 });
  });

  test("an include of a FIFO with no writer is refused at once (opening it does not wait)", () => {
    const fifo = join(workspace, "pipe.json");
    execFileSync("mkfifo", [fifo]);
    const r = convert("http://h/s.S/M\n\n< ./pipe.json\n");
    assert.match(r.diagnostics[0].message, /pipe\.json: it is a FIFO \(named pipe\), not a file/);
    rmSync(fifo);
  });

  test("an include over the limit is refused by its size, and a growing file is read no further", () => {
    const big = join(workspace, "big.json");
    writeFileSync(big, "");
    truncateSync(big, INCLUDE_LIMIT_BYTES + 1); // sparse: nothing is written
    const r = convert("http://h/s.S/M\n\n< ./big.json\n");
    assert.match(
      r.diagnostics[0].message,
      /big\.json: it holds more than 64 MiB, the most an include may hold; send a larger body with @data/,
    );
    rmSync(big);
    const small = join(workspace, "small.json");
    writeFileSync(small, '{"a": 1}');
    assert.equal(readIncludedFile(small), '{"a": 1}');
    assert.throws(() => readIncludedFile(small, 4), /holds more than/);
    // A file that grows while it is read is read whole (not cut at the size first measured): a FIFO
    // cannot stand in, so /proc's files, whose size reads as 0, do.
    const status = readIncludedFile("/proc/self/status", INCLUDE_LIMIT_BYTES, 16);
    assert.match(status, /^Name:/);
    assert.match(status, /\nThreads:/);
    assert.ok(status.endsWith("\n"), "read to its end");
  });

  test("@data and @header naming a device are errors at their option; a missing @data file is left to the send", () => {
    const r = convert("# @data @/dev/zero\n# @header @/dev/urandom\nhttp://h/s.S/M\n");
    assert.equal(r.options, undefined);
    assert.deepEqual(
      r.diagnostics.map((d) => [d.message, d.range.start.line]),
      [
        ["@data /dev/zero: it is a device, not a file; give a file", 0],
        ["@header /dev/urandom: it is a device, not a file; give a file", 1],
      ],
    );
    const missing = convert("# @data @./later.json\nhttp://h/s.S/M\n");
    assert.equal(missing.diagnostics.length, 0);
  });

  test("the conversion lists every file: includes, @data, header files and @output, with their access", () => {
    writeFileSync(join(workspace, "body.json"), "{}");
    writeFileSync(join(outside, "headers.txt"), "x-a: 1\n");
    const r = convert(
      [
        "# @header @../outside/headers.txt",
        "# @reflect-header @./reflect.txt",
        "# @output ../outside/out.json",
        "http://h/s.S/M",
        "",
        "< ./body.json",
        "",
      ].join("\n"),
    );
    assert.deepEqual(
      r.files.map((f) => [f.via, f.access, f.path]),
      [
        ["<", "read", join(workspace, "body.json")],
        ["@header", "read", join(outside, "headers.txt")],
        ["@reflect-header", "read", join(workspace, "reflect.txt")],
        ["@output", "write", join(outside, "out.json")],
      ],
    );
    assert.deepEqual(
      filesOutside(r.files, [workspace]).map((f) => f.via),
      ["@header", "@output"],
    );
  });

  test("inside means under a root after symbolic links are resolved; a sibling with the same prefix is outside", () => {
    writeFileSync(join(outside, "secret.json"), "{}");
    symlinkSync(join(outside, "secret.json"), join(workspace, "link.json"));
    assert.equal(isInside(join(workspace, "link.json"), [workspace]), false);
    assert.equal(isInside(join(workspace, "sub", "new.json"), [workspace]), true);
    assert.equal(isInside(workspace, [workspace]), true);
    assert.equal(isInside(`${workspace}-other/x.json`, [workspace]), false);
    assert.equal(isInside(join(workspace, "..", "outside", "x"), [workspace]), false);
  });
});
