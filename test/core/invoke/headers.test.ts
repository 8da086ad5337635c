import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { after, describe, it } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { readCurlHeaders } from "../../../src/core/invoke/headers";
import type { InputIo } from "../../../src/core/invoke/io";
import { type CurlOptions, defaultCurlOptions } from "../../../src/core/invoke/options";
import { openRequestData, readRequestDocuments } from "../../../src/core/invoke/request-data";

const dir = mkdtempSync(join(tmpdir(), "protocall-headers-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return name;
};

function io(stdin: NodeJS.ReadableStream = Readable.from([])): InputIo {
  return { cwd: dir, env: {}, stdin, stdinIsTTY: false, homedir: dir };
}
const opts = (o: Partial<CurlOptions>): CurlOptions => ({
  ...defaultCurlOptions(),
  url: "http://h/a.B/C",
  ...o,
});

async function collect(source: AsyncIterable<Uint8Array> | undefined): Promise<string> {
  assert.ok(source);
  const parts: Buffer[] = [];
  for await (const c of source) parts.push(Buffer.from(c));
  return Buffer.concat(parts).toString();
}

describe("readCurlHeaders", () => {
  it("reads inline headers in order, trimmed, split at the first colon, never at commas", async () => {
    const r = await readCurlHeaders(
      opts({ headers: ["Accept-Language:  en, fr ", "x-time: 12:30", "x-a: 1", "X-A: 2", ""] }),
      io(),
    );
    assert.deepEqual(r.headers, [
      ["Accept-Language", "en, fr"],
      ["x-time", "12:30"],
      ["x-a", "1"],
      ["X-A", "2"],
    ]);
    assert.deepEqual(r.reflectHeaders, []);
    assert.equal(r.dataFromHeaderFile, undefined);
    assert.equal(r.authority, undefined);
    assert.deepEqual(r.ignored, []);
  });

  it("reads a header file, skipping blank lines and comments, LF or CRLF, with a byte order mark", async () => {
    file("h.txt", "# comment\nx-a: 1\n\n  x-b : two words \n");
    file("crlf.txt", "\uFEFFx-c: 3\r\n\r\n# c\r\nx-d: 4\r\n");
    const r = await readCurlHeaders(
      opts({ headers: ["@h.txt", "x-z: 0", `@${join(dir, "crlf.txt")}`] }),
      io(),
    );
    assert.deepEqual(r.headers, [
      ["x-a", "1"],
      ["x-b", "two words"],
      ["x-z", "0"],
      ["x-c", "3"],
      ["x-d", "4"],
    ]);
  });

  it("reads headers from stdin", async () => {
    const r = await readCurlHeaders(
      opts({ headers: ["@-"] }),
      io(Readable.from([Buffer.from("x-a: 1\nx-b: 2")])),
    );
    assert.deepEqual(r.headers, [
      ["x-a", "1"],
      ["x-b", "2"],
    ]);
  });

  it("names the file and line of a bad header", async () => {
    file("bad.txt", "x-a: 1\nnot a header\n");
    await assert.rejects(
      readCurlHeaders(opts({ headers: ["@bad.txt"] }), io()),
      (e: unknown) =>
        e instanceof ProtocallError && /^bad\.txt:2 is a malformed header \(it has no ":"\)/.test(e.message),
    );
    file("owned.txt", "content-type: text/plain\n");
    await assert.rejects(
      readCurlHeaders(opts({ headers: ["@owned.txt"] }), io()),
      /owned\.txt:1: header "content-type" is set by the RPC protocol/,
    );
  });

  it("fails clearly on a missing file", async () => {
    await assert.rejects(
      readCurlHeaders(opts({ headers: ["@nope.txt"] }), io()),
      /--header @nope\.txt: cannot read .*nope\.txt: no such file/,
    );
  });

  it("splits a combined header/data file at the first blank line (LF)", async () => {
    file("both.txt", '# headers\nx-a: 1\n\n{"n": 1}\n\n{"n": 2}\n');
    const r = await readCurlHeaders(opts({ headers: ["@both.txt"], data: "@both.txt" }), io());
    assert.deepEqual(r.headers, [["x-a", "1"]]);
    assert.equal(await collect(r.dataFromHeaderFile), '{"n": 1}\n\n{"n": 2}\n');
  });

  it("ends the headers of a combined file only at an empty line; a line of spaces is skipped", async () => {
    file("spaces.txt", 'x-a: 1\n   \nx-b: 2\n\n{"n": 1}\n  {"n": }');
    const r = await readCurlHeaders(opts({ headers: ["@spaces.txt"], data: "@spaces.txt" }), io());
    assert.deepEqual(r.headers, [
      ["x-a", "1"],
      ["x-b", "2"],
    ]);
    assert.equal(r.dataFromHeaderFile?.firstLine, 5);
    // Request data errors give the line numbers of the file.
    const docs = await openRequestData(opts({ data: "@spaces.txt" }), io(), r.dataFromHeaderFile);
    assert.ok(docs);
    assert.deepEqual((await docs.next()).value, { value: { n: 1 }, line: 5, column: 1, index: 0 });
    await assert.rejects(docs.next(), /spaces\.txt:6:9: invalid JSON in request message #2/);
  });

  it("accepts CRLF combined files", async () => {
    file("both-crlf.txt", 'x-a: 1\r\nx-b: 2\r\n\r\n{"n": 1}\r\n');
    const r = await readCurlHeaders(opts({ headers: ["@both-crlf.txt"], data: "@both-crlf.txt" }), io());
    assert.deepEqual(r.headers, [
      ["x-a", "1"],
      ["x-b", "2"],
    ]);
    assert.equal(await collect(r.dataFromHeaderFile), '{"n": 1}\r\n');
  });

  it("streams the data part of stdin on without waiting for its end", async () => {
    const stdin = new PassThrough();
    stdin.write('x-a: 1\n\n{"n": 1}\n');
    const r = await readCurlHeaders(opts({ headers: ["@-"], data: "@-" }), io(stdin));
    assert.deepEqual(r.headers, [["x-a", "1"]]);
    const docs = readRequestDocuments(r.dataFromHeaderFile as AsyncIterable<Uint8Array>, "stdin");
    const first = await docs.next();
    assert.deepEqual(first.value?.value, { n: 1 }); // read before stdin ends
    stdin.end('{"n": 2}');
    const second = await docs.next();
    assert.deepEqual(second.value?.value, { n: 2 });
    assert.equal((await docs.next()).done, true);
  });

  it("requires the blank line in a combined file", async () => {
    file("noblank.txt", "x-a: 1\nx-b: 2\n");
    await assert.rejects(
      readCurlHeaders(opts({ headers: ["@noblank.txt"], data: "@noblank.txt" }), io()),
      /noblank\.txt: no blank line after the headers: when -H and -d both name the file noblank\.txt/,
    );
    file("jsonfirst.txt", 'x-a: 1\n{"n": 1}\n');
    await assert.rejects(
      readCurlHeaders(opts({ headers: ["@jsonfirst.txt"], data: "@jsonfirst.txt" }), io()),
      /jsonfirst\.txt:2: request data found before the blank line/,
    );
  });

  it("expands '*' in reflection headers and reads reflection header files", async () => {
    file("r.txt", "x-r: file\n");
    const r = await readCurlHeaders(
      opts({ headers: ["x-a: 1", "Authorization: Bearer t"], reflectHeaders: ["x-only: r", "*", "@r.txt"] }),
      io(),
    );
    assert.deepEqual(r.reflectHeaders, [
      ["x-only", "r"],
      ["x-a", "1"],
      ["Authorization", "Bearer t"],
      ["x-r", "file"],
    ]);
  });

  it("reads stdin once when both -H and --reflect-header name it", async () => {
    const r = await readCurlHeaders(
      opts({ headers: ["@-"], reflectHeaders: ["@-"] }),
      io(Readable.from([Buffer.from("x-a: 1\n")])),
    );
    assert.deepEqual(r.headers, [["x-a", "1"]]);
    assert.deepEqual(r.reflectHeaders, [["x-a", "1"]]);
  });

  it("gives non-ASCII values as their UTF-8 bytes, once", async () => {
    file("utf8.txt", "x-f: é\n");
    const r = await readCurlHeaders(
      opts({ headers: ["x-a: é😀", "@utf8.txt"], reflectHeaders: ["*", "x-r: ü"] }),
      io(),
    );
    const wire = (s: string) => Buffer.from(s, "utf8").toString("latin1");
    assert.deepEqual(r.headers, [
      ["x-a", wire("é😀")],
      ["x-f", wire("é")],
    ]);
    assert.deepEqual(r.reflectHeaders, [...r.headers, ["x-r", wire("ü")]]);
  });

  it("accepts but leaves out the headers the transport manages, as buf does", async () => {
    const r = await readCurlHeaders(
      opts({
        headers: ["Content-Length: 5", "x-a: 1", "Connection: close", "keep-alive: 5", "Proxy-Connection: x"],
        reflectHeaders: ["content-length: 1", "*"],
      }),
      io(),
    );
    assert.deepEqual(r.headers, [["x-a", "1"]]);
    assert.deepEqual(r.reflectHeaders, [["x-a", "1"]]);
    assert.deepEqual(r.ignored, [
      "Content-Length",
      "Connection",
      "keep-alive",
      "Proxy-Connection",
      "content-length",
    ]);
  });

  it("turns a Host header into the authority", async () => {
    const r = await readCurlHeaders(
      opts({ headers: ["Host: api.example.com", "x-a: 1"], reflectHeaders: ["*"] }),
      io(),
    );
    assert.equal(r.authority, "api.example.com");
    assert.deepEqual(r.headers, [["x-a", "1"]]);
    assert.deepEqual(r.reflectHeaders, [["x-a", "1"]]);
    await assert.rejects(
      readCurlHeaders(opts({ reflectHeaders: ["host: x"] }), io()),
      /a Host header cannot be set for reflection alone/,
    );
  });
});
