import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import type { InputIo } from "../../../src/core/invoke/io";
import { defaultCurlOptions } from "../../../src/core/invoke/options";
import {
  noRequestDataError,
  openRequestData,
  type RequestDocument,
  readRequestDocuments,
  requestDataLabel,
} from "../../../src/core/invoke/request-data";

async function all(
  source: AsyncIterable<Uint8Array | string> | string,
  label = "in.json",
): Promise<RequestDocument[]> {
  const out: RequestDocument[] = [];
  for await (const d of readRequestDocuments(source, label)) out.push(d);
  return out;
}
const values = async (s: string) => (await all(s)).map((d) => d.value);

async function failsWith(source: AsyncIterable<Uint8Array | string> | string, message: string | RegExp) {
  await assert.rejects(all(source), (e: unknown) => {
    assert.ok(e instanceof ProtocallError, String(e));
    if (typeof message === "string") assert.equal(e.message, message);
    else assert.match(e.message, message);
    return true;
  });
}

function chunks(parts: (string | Uint8Array)[]): AsyncIterable<Uint8Array> {
  return Readable.from(
    parts.map((p) => (typeof p === "string" ? Buffer.from(p) : p)),
    { objectMode: true },
  );
}

describe("readRequestDocuments", () => {
  it("reads a sequence of JSON documents, whitespace optional where unambiguous", async () => {
    assert.deepEqual(await values('{}{"a":1}\n[1, 2]"x""y"  1 2\ttrue\r\nnull -3.5e2{"b":{"c":[{}]}}'), [
      {},
      { a: 1 },
      [1, 2],
      "x",
      "y",
      1,
      2,
      true,
      null,
      -350,
      { b: { c: [{}] } },
    ]);
    assert.deepEqual(await values("12"), [12]);
    assert.deepEqual(await values(""), []);
    assert.deepEqual(await values(" \n\t "), []);
  });

  it("keeps braces and quotes inside strings, and escapes", async () => {
    assert.deepEqual(await values('{"a":"}{][\\"\\\\"}{"b":"\\u00e9\\n"}'), [{ a: '}{]["\\' }, { b: "é\n" }]);
  });

  it("gives the line and column where each document starts", async () => {
    const docs = await all('{"a": 1}\r\n  {"b":\n 2}\n\n\t[3]  "s"');
    assert.deepEqual(
      docs.map((d) => [d.index, d.line, d.column]),
      [
        [0, 1, 1],
        [1, 2, 3],
        [2, 5, 2],
        [3, 5, 7],
      ],
    );
  });

  it("counts lines from firstLine", async () => {
    const docs: RequestDocument[] = [];
    for await (const d of readRequestDocuments("\n {}", "f", 7)) docs.push(d);
    assert.deepEqual(docs, [{ value: {}, line: 8, column: 2, index: 0 }]);
  });

  it("accepts an array of chunks, and stops reading the source when the reader stops", async () => {
    assert.deepEqual(
      (await all([Buffer.from('{"a":'), "1}"] as unknown as AsyncIterable<Uint8Array>)).map((d) => d.value),
      [{ a: 1 }],
    );
    let closed = false;
    async function* source() {
      try {
        for (;;) yield Buffer.from("{}\n");
      } finally {
        closed = true;
      }
    }
    for await (const d of readRequestDocuments(source(), "endless")) if (d.index === 2) break;
    assert.equal(closed, true);
    const failing = readRequestDocuments(source(), "x");
    await failing.next();
    closed = false;
    await assert.rejects(failing.throw(new Error("stop")), /stop/);
    assert.equal(closed, true);
    assert.deepEqual(await failing.next(), { done: true, value: undefined });
  });

  it("stops reading the source after an error", async () => {
    let closed = false;
    async function* source() {
      try {
        yield Buffer.from("{} ] {}");
        for (;;) yield Buffer.from("{}\n");
      } finally {
        closed = true;
      }
    }
    const docs = readRequestDocuments(source(), "x");
    assert.deepEqual((await docs.next()).value?.value, {});
    await assert.rejects(docs.next(), /x:1:4: unexpected '\]'/);
    assert.equal(closed, true);
    assert.deepEqual(await docs.next(), { done: true, value: undefined });
  });

  it("skips a byte order mark", async () => {
    const docs = await all(chunks([Buffer.from([0xef, 0xbb, 0xbf]), '{"a":1}']));
    assert.deepEqual(docs, [{ value: { a: 1 }, line: 1, column: 1, index: 0 }]);
  });

  it("keeps integers beyond 2^53 exactly (as strings), other numbers as numbers", async () => {
    assert.deepEqual(
      await values(
        '{"id": 12345678901234567890, "s": "1234567890123456789", "f": 1.5, "safe": 1234567890123456}',
      ),
      [{ id: "12345678901234567890", s: "1234567890123456789", f: 1.5, safe: 1234567890123456 }],
    );
    assert.deepEqual(await values("-9223372036854775808"), ["-9223372036854775808"]);
    assert.deepEqual(
      await values('{"f": 1.12345678901234567, "e": 1e-12345678901234567, "x": 0.5e12345678901234567}'),
      [{ f: 1.1234567890123457, e: 0, x: Infinity }],
    );
    assert.deepEqual(await values('["a\\\\",12345678901234567890, "x\\"1234567890123456789"]'), [
      ["a\\", "12345678901234567890", 'x"1234567890123456789'],
    ]);
  });

  it("gives the same result however the input is cut into chunks", async () => {
    const text = '{"a":"x\\"}é😀"}\n[1,{"b":[]}] "s\\\\" 42 true{"c":null}';
    const expected = await all(text);
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const got = await all(chunks([bytes.subarray(0, cut), bytes.subarray(cut)]));
      assert.deepEqual(got, expected, `cut at ${cut}`);
    }
    const single = Array.from(bytes).map((b) => Uint8Array.of(b));
    assert.deepEqual(await all(chunks(single)), expected);
  });

  it("agrees with JSON.parse on random documents, whitespace and chunking", async () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const strings = ["", "a", 'q"uote', "back\\slash", "{[}]", "é😀", "\n\t", "\u0001"];
    const value = (depth: number): unknown => {
      switch (rand(depth > 3 ? 5 : 7)) {
        case 0:
          return strings[rand(strings.length)];
        case 1:
          return rand(2000) - 1000 + (rand(2) ? 0.5 : 0);
        case 2:
          return [true, false, null][rand(3)];
        case 3:
          return rand(100000);
        case 4:
          return strings[rand(strings.length)] + rand(10);
        case 5:
          return Array.from({ length: rand(4) }, () => value(depth + 1));
        default:
          return Object.fromEntries(
            Array.from({ length: rand(4) }, (_, i) => [
              `k${i}${strings[rand(strings.length)]}`,
              value(depth + 1),
            ]),
          );
      }
    };
    const spaces = ["", " ", "\n", "\r\n", "\t ", "\n\n  "];
    for (let round = 0; round < 200; round++) {
      const docs = Array.from({ length: 1 + rand(6) }, () => value(0));
      let text = "";
      docs.forEach((d, i) => {
        const scalar = typeof d !== "object" || d === null;
        const prevScalar = i > 0 && (typeof docs[i - 1] !== "object" || docs[i - 1] === null);
        // Whitespace is required only between two scalars that are not strings.
        const needSpace = scalar && prevScalar && typeof d !== "string" && typeof docs[i - 1] !== "string";
        const sep = spaces[rand(spaces.length)];
        text +=
          (i > 0 && needSpace && sep === "" ? " " : sep) + JSON.stringify(d, null, rand(2) ? 2 : undefined);
      });
      const bytes = Buffer.from(text);
      const parts: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; ) {
        const n = 1 + rand(40);
        parts.push(bytes.subarray(i, i + n));
        i += n;
      }
      assert.deepEqual(
        (await all(chunks(parts))).map((d) => d.value),
        docs,
        text,
      );
    }
  });

  it("never fails other than with a ProtocallError on random bytes", async () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const alphabet = '{}[]",:\\ \n\r\tabcdefnrtu0123456789.-+eE\u00e9';
    for (let round = 0; round < 500; round++) {
      let text = "";
      for (let i = rand(60); i > 0; i--) text += alphabet[rand(alphabet.length)];
      try {
        for await (const _ of readRequestDocuments(text, "r")) {
          // consume
        }
      } catch (e) {
        assert.ok(e instanceof ProtocallError, `${JSON.stringify(text)}: ${e}`);
        assert.match(e.message, /^r:\d+(:\d+)?: /);
      }
    }
  });

  it("reports invalid JSON at its exact line and column", async () => {
    await failsWith(
      '{"a": 1}\n{"b": \n  [1,}',
      'in.json:3:6: invalid JSON in request message #2: unexpected "}": expected a JSON value',
    );
    await failsWith(
      '{"a": 1,}',
      "in.json:1:9: invalid JSON in request message #1: unexpected '}' after ',': remove the trailing comma",
    );
    await failsWith(
      '{"a" 1}',
      /^in\.json:1:6: invalid JSON in request message #1: unexpected "1": expected ':'/,
    );
    await failsWith("{a: 1}", /^in\.json:1:2: .*expected a field name in double quotes/);
    await failsWith(
      "{}\n  nope",
      /^in\.json:2:3: invalid JSON in request message #2: unexpected "n": expected a JSON value/,
    );
    await failsWith(
      '{"a": [1]]',
      /^in\.json:1:10: invalid JSON in request message #1: unexpected "\]": expected ',' or '}' in the object/,
    );
    await failsWith('{"a": 1}]', /^in\.json:1:9: unexpected '\]': no JSON object or array is open here/);
    await failsWith('{"a": "x\ny"}', /^in\.json:1:9: .*a string is not closed before the end of the line/);
  });

  it("hands over the documents before an error first, as if read one by one", async () => {
    for (const text of ['{"a": 1} {"b": }', '{"a": 1} ]', '{"a": 1} {"b": [}']) {
      const docs = readRequestDocuments(text, "in.json");
      assert.deepEqual((await docs.next()).value?.value, { a: 1 });
      await assert.rejects(docs.next(), /^ProtocallError: in\.json:1:/);
    }
  });

  it("reports a document that is not closed at the end, where it starts", async () => {
    await failsWith(
      '{"a": 1}\n\n  {"b": [1, 2]',
      "in.json:3:3: the JSON document starting here is not complete at the end of the input (a missing '}' or ']'?)",
    );
    await failsWith(
      '{"a": "x',
      /^in\.json:1:1: the JSON document starting here is not complete .*a string is not closed/,
    );
    await failsWith("}", /^in\.json:1:1: unexpected '}'/);
  });

  it("refuses binary input", async () => {
    await failsWith(
      chunks([Buffer.from([0x0a, 0x08, 0x01])]),
      /^in\.json:2:1: the request data is not JSON text \(found the control byte 0x08\)/,
    );
    await failsWith(
      chunks([Buffer.from("{}\n"), Buffer.from([0xff, 0xfe, 0x00])]),
      /^in\.json:2: the request data is not UTF-8 text/,
    );
    await failsWith(
      chunks([Buffer.from('{"a":\u0000}')]),
      /^in\.json:1:6: the request data is not JSON text \(found the control byte 0x00\)/,
    );
  });

  it("streams 100,000 messages quickly with bounded read-ahead", async () => {
    let produced = 0;
    let maxAhead = 0;
    let consumed = 0;
    async function* source() {
      // 1,000 chunks of 100 messages each, produced only when asked for.
      for (let c = 0; c < 1000; c++) {
        let s = "";
        for (let k = 0; k < 100; k++)
          s += `{"name":"person ${produced + k}","id":"${produced + k}","tags":["a","b"]}\n`;
        produced += 100;
        yield Buffer.from(s);
      }
    }
    // CPU time rather than wall time: the suite shares its cores with other tests.
    const start = process.cpuUsage();
    for await (const d of readRequestDocuments(source(), "big.json")) {
      assert.equal(d.index, consumed);
      consumed++;
      maxAhead = Math.max(maxAhead, produced - consumed);
    }
    const cpu = process.cpuUsage(start);
    const ms = (cpu.user + cpu.system) / 1000;
    assert.equal(consumed, 100_000);
    assert.ok(maxAhead <= 100, `read ahead ${maxAhead} messages`);
    assert.ok(ms < 3000, `took ${ms} ms of CPU time`);
  });
});

describe("openRequestData", () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-data-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "reqs.json"), '{"n": 1}\n{"n": 2}\n');
  writeFileSync(join(dir, "empty.json"), " \n");
  const io = (stdin: NodeJS.ReadableStream = Readable.from([])): InputIo => ({
    cwd: dir,
    env: {},
    stdin,
    stdinIsTTY: false,
    homedir: dir,
  });
  const open = (data: string | undefined, i = io(), rest?: AsyncIterable<Uint8Array>) =>
    openRequestData({ ...defaultCurlOptions(), data }, i, rest);
  const read = async (g: AsyncGenerator<RequestDocument> | undefined) => {
    assert.ok(g);
    const out: unknown[] = [];
    for await (const d of g) out.push(d.value);
    return out;
  };

  it("returns undefined without data", async () => {
    assert.equal(await open(undefined), undefined);
    assert.equal(await open(""), undefined);
  });

  it("reads inline data, a file, stdin, and the body of a combined header file", async () => {
    assert.deepEqual(await read(await open('{"a": 1} {"a": 2}')), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(await read(await open("@reqs.json")), [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(await read(await open(`@${join(dir, "reqs.json")}`)), [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(await read(await open("@-", io(Readable.from([Buffer.from('{"s": 1}')])))), [{ s: 1 }]);
    assert.deepEqual(await read(await open("@-", io(), chunks(['{"h": 1}']))), [{ h: 1 }]);
  });

  it("labels errors with the file name, stdin or --data", async () => {
    await assert.rejects(
      read(await open("{")),
      /--data:1:1: the JSON document starting here is not complete/,
    );
    await assert.rejects(
      read(await open("@-", io(Readable.from([Buffer.from("[")])))),
      /stdin:1:1: the JSON document/,
    );
  });

  it("fails on a missing file or a directory", async () => {
    await assert.rejects(
      open("@missing.json"),
      /--data @missing\.json: cannot read .*missing\.json: no such file/,
    );
    await assert.rejects(open("@."), /--data @\.: cannot read .*: it is a directory/);
    await assert.rejects(open("@"), /--data @ needs a file name/);
  });

  it("yields nothing for an empty file (a client stream then sends no message)", async () => {
    assert.deepEqual(await read(await open("@empty.json")), []);
    assert.deepEqual(await read(await open("  \n ")), []);
  });

  it("labels data and builds the error for a single-request call without data", () => {
    assert.equal(requestDataLabel("@-"), "stdin");
    assert.equal(requestDataLabel("@a/b.json"), "a/b.json");
    assert.equal(requestDataLabel("{}"), "--data");
    assert.match(
      noRequestDataError("empty.json", "demo.v1.GreetService/Greet").message,
      /^empty\.json: no request data: it holds no JSON document, but demo\.v1\.GreetService\/Greet takes exactly one request message/,
    );
  });
});
