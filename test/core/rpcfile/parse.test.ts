import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseRpcFile, splitLines } from "../../../src/core/rpcfile/parse";
import type { Range, Token } from "../../../src/core/rpcfile/types";

/** The text a range covers. */
function at(text: string, r: Range): string {
  const lines = splitLines(text);
  if (r.start.line === r.end.line) return lines[r.start.line].slice(r.start.character, r.end.character);
  const parts = [lines[r.start.line].slice(r.start.character)];
  for (let l = r.start.line + 1; l < r.end.line; l++) parts.push(lines[l]);
  parts.push(lines[r.end.line].slice(0, r.end.character));
  return parts.join("\n");
}

function tokenOk(text: string, t: Token | undefined): void {
  assert.ok(t);
  assert.equal(at(text, t.range), t.text);
}

const designExample = `# Lines starting with # or // are comments (outside a body).
@host = http://localhost:8080
@token = {{$dotenv API_TOKEN}}

### Greet a person
# @protocol grpc
# @timeout 5s
{{host}}/demo.v1.GreetService/Greet
Authorization: Bearer {{token}}
x-request-id: {{$uuid}}

{"name": "world"}
{"name": "again"}

### List services
# @list-services
http://localhost:8080
`;

describe("parseRpcFile", () => {
  test("parses the design's example: variables, two named requests, options, headers, two documents", () => {
    const f = parseRpcFile(designExample);
    assert.deepEqual(f.diagnostics, []);
    assert.deepEqual(
      f.variables.map((v) => [v.name.text, v.value.text]),
      [
        ["host", "http://localhost:8080"],
        ["token", "{{$dotenv API_TOKEN}}"],
      ],
    );
    for (const v of f.variables) {
      tokenOk(designExample, v.name);
      tokenOk(designExample, v.value);
    }
    assert.equal(f.requests.length, 2);
    const [greet, list] = f.requests;
    assert.equal(greet.name?.text, "Greet a person");
    tokenOk(designExample, greet.name);
    assert.deepEqual(
      greet.options.map((o) => [o.name.text, o.value?.text]),
      [
        ["protocol", "grpc"],
        ["timeout", "5s"],
      ],
    );
    for (const o of greet.options) {
      tokenOk(designExample, o.name);
      tokenOk(designExample, o.value);
    }
    assert.equal(greet.url?.text, "{{host}}/demo.v1.GreetService/Greet");
    tokenOk(designExample, greet.url);
    assert.deepEqual(
      greet.headers.map((h) => [h.name.text, h.value.text]),
      [
        ["Authorization", "Bearer {{token}}"],
        ["x-request-id", "{{$uuid}}"],
      ],
    );
    for (const h of greet.headers) {
      tokenOk(designExample, h.name);
      tokenOk(designExample, h.value);
    }
    assert.deepEqual(
      greet.body.map((b) => (b.kind === "json" ? b.text : b.kind)),
      ['{"name": "world"}', '{"name": "again"}'],
    );
    for (const b of greet.body) assert.equal(at(designExample, b.range), b.kind === "json" ? b.text : "");
    assert.deepEqual(greet.range, { start: { line: 4, character: 0 }, end: { line: 12, character: 17 } });
    assert.deepEqual(greet.bodyRange, {
      start: { line: 11, character: 0 },
      end: { line: 12, character: 17 },
    });
    assert.equal(list.name?.text, "List services");
    assert.deepEqual(
      list.options.map((o) => [o.name.text, o.value]),
      [["list-services", undefined]],
    );
    assert.equal(list.url?.text, "http://localhost:8080");
    assert.deepEqual(list.body, []);
  });

  test("a file without ### holds one request", () => {
    const text = "@h = x\n# a comment\nhttp://a/b.C/D\n\n{}\n";
    const f = parseRpcFile(text);
    assert.deepEqual(f.diagnostics, []);
    assert.equal(f.requests.length, 1);
    assert.equal(f.requests[0].name, undefined);
    assert.equal(f.requests[0].separator, undefined);
    assert.equal(f.requests[0].url?.text, "http://a/b.C/D");
    assert.deepEqual(
      f.requests[0].comments.map((c) => c.text),
      ["# a comment"],
    );
    assert.deepEqual(f.requests[0].range, {
      start: { line: 1, character: 0 },
      end: { line: 4, character: 2 },
    });
    // Comments above the file variables belong to the file.
    const g = parseRpcFile("# file header\n@h = x\n\nhttp://a/b.C/D\n");
    assert.deepEqual(g.requests[0].comments, []);
    assert.equal(g.requests[0].range.start.line, 3);
  });

  test("verbs select the protocol and are tokens of their own", () => {
    const text =
      "### a\nGRPC http://h/s.S/M\n### b\ngrpc-web http://h/s.S/M\n### c\nCONNECT   http://h/s.S/M\n";
    const f = parseRpcFile(text);
    assert.deepEqual(f.diagnostics, []);
    assert.deepEqual(
      f.requests.map((r) => [r.verb?.value, r.verb?.text, r.url?.text]),
      [
        ["GRPC", "GRPC", "http://h/s.S/M"],
        ["GRPC-WEB", "grpc-web", "http://h/s.S/M"],
        ["CONNECT", "CONNECT", "http://h/s.S/M"],
      ],
    );
    for (const r of f.requests) {
      tokenOk(text, r.verb);
      tokenOk(text, r.url);
    }
  });

  test("// comments and // options work like #", () => {
    const f = parseRpcFile("// @insecure\n// @connect-timeout 2.5\n// plain comment\nhttps://h/s.S/M\n");
    assert.deepEqual(f.diagnostics, []);
    assert.deepEqual(
      f.requests[0].options.map((o) => [o.name.text, o.value?.text]),
      [
        ["insecure", undefined],
        ["connect-timeout", "2.5"],
      ],
    );
    assert.deepEqual(
      f.requests[0].comments.map((c) => c.text),
      ["// plain comment"],
    );
  });

  test("unknown options, invalid values and missing values are diagnostics on the token", () => {
    const text =
      "# @timout 5s\n# @protocol foo\n# @timeout soon\n# @cacert\n# @insecure maybe\n# @help\nhttp://h/s.S/M\n";
    const f = parseRpcFile(text);
    const d = f.diagnostics.map((x) => [x.code, at(text, x.range), x.message] as const);
    assert.equal(d.length, 6, JSON.stringify(d));
    assert.deepEqual([d[0][0], d[0][1]], ["unknown-option", "timout"]);
    assert.match(d[0][2], /did you mean @timeout\?/);
    assert.deepEqual([d[1][0], d[1][1]], ["invalid-value", "foo"]);
    assert.match(d[1][2], /@protocol "foo".*"connect", "grpc", or "grpcweb"/);
    assert.deepEqual([d[2][0], d[2][1]], ["invalid-value", "soon"]);
    assert.match(d[2][2], /duration such as 5s/);
    assert.deepEqual([d[3][0], d[3][1]], ["missing-value", "cacert"]);
    assert.deepEqual([d[4][0], d[4][1]], ["invalid-value", "maybe"]);
    assert.match(d[4][2], /true or false/);
    assert.deepEqual([d[5][0], d[5][1]], ["unknown-option", "help"]);
    for (const x of f.diagnostics) assert.equal(x.severity, "error");
  });

  test("an option may also be written @flag=value, as on the command line", () => {
    const text = "# @reflect=false\n# @timeout= 5s\n# @insecure=\nhttps://h/s.S/M\n";
    const f = parseRpcFile(text);
    assert.deepEqual(f.diagnostics, []);
    assert.deepEqual(
      f.requests[0].options.map((o) => [o.name.text, o.value?.text]),
      [
        ["reflect", "false"],
        ["timeout", "5s"],
        ["insecure", undefined],
      ],
    );
    for (const o of f.requests[0].options) if (o.value) tokenOk(text, o.value);
  });

  test("option values holding {{variables}} are checked after resolution, not by the parser", () => {
    const f = parseRpcFile("# @timeout {{t}}\nhttp://h/s.S/M\n");
    assert.deepEqual(f.diagnostics, []);
  });

  test("# @name names a request; an option after the request line is only a comment (warning)", () => {
    const text = "# @name first\nhttp://h/s.S/M\n# @timeout 5s\nx: y\n";
    const f = parseRpcFile(text);
    assert.equal(f.requests[0].name?.text, "first");
    tokenOk(text, f.requests[0].name);
    assert.deepEqual(f.requests[0].options, []);
    assert.equal(f.diagnostics.length, 1);
    assert.equal(f.diagnostics[0].severity, "warning");
    assert.equal(f.diagnostics[0].code, "misplaced-option");
    assert.equal(f.requests[0].headers.length, 1);
  });

  test("headers: malformed lines, invalid names and protocol-owned names are errors", () => {
    const text =
      "http://h/s.S/M\nno colon here\nbad name: x\nContent-Type: application/json\ngrpc-timeout: 1S\nok:\n";
    const f = parseRpcFile(text);
    assert.deepEqual(
      f.diagnostics.map((x) => [x.code, at(text, x.range)]),
      [
        ["invalid-header", "no colon here"],
        ["invalid-header", "bad name"],
        ["protocol-header", "Content-Type"],
        ["protocol-header", "grpc-timeout"],
      ],
    );
    assert.deepEqual(
      f.requests[0].headers.map((h) => [h.name.text, h.value.text]),
      [["ok", ""]],
    );
  });

  test("a body right after the request line or headers, without the empty line, is an error that says so", () => {
    const f = parseRpcFile('http://h/s.S/M\nx-a: 1\n{"name": "x"}\n');
    assert.deepEqual(
      f.diagnostics.map((d) => [d.code, d.range.start.line]),
      [["missing-empty-line", 2]],
    );
    assert.match(f.diagnostics[0].message, /add an empty line after the headers/);
  });

  test("the body: several documents, multi-line documents, scalars, includes and comments between documents", () => {
    const text = [
      "http://h/s.S/M",
      "",
      '{"a": [1,',
      '  {"b": "}{]["}]}  [2] "s"',
      "# between documents",
      "< ./data/more.json",
      "  7 true null",
      '{"c": "{{x}}"}',
    ].join("\n");
    const f = parseRpcFile(text);
    assert.deepEqual(f.diagnostics, []);
    const body = f.requests[0].body;
    assert.deepEqual(
      body.map((b) => (b.kind === "json" ? b.text : `< ${b.path.text}`)),
      [
        '{"a": [1,\n  {"b": "}{]["}]}',
        "[2]",
        '"s"',
        "< ./data/more.json",
        "7",
        "true",
        "null",
        '{"c": "{{x}}"}',
      ],
    );
    for (const b of body) {
      if (b.kind === "json") assert.equal(at(text, b.range), b.text);
      else tokenOk(text, b.path);
    }
    assert.deepEqual(
      f.requests[0].comments.map((c) => c.text),
      ["# between documents"],
    );
  });

  test("invalid JSON documents get a diagnostic at the offending character", () => {
    const text = 'http://h/s.S/M\n\n{"a": 1,\n "b": tru}\n';
    const f = parseRpcFile(text);
    assert.equal(f.diagnostics.length, 1);
    assert.equal(f.diagnostics[0].code, "invalid-json");
    assert.deepEqual(f.diagnostics[0].range.start, { line: 3, character: 6 });
  });

  test("an unclosed document is an error at its start", () => {
    const f = parseRpcFile('http://h/s.S/M\n\n{"a": [1,\n');
    assert.equal(f.diagnostics.length, 1);
    assert.equal(f.diagnostics[0].code, "unclosed-json");
    assert.deepEqual(f.diagnostics[0].range.start, { line: 2, character: 0 });
    assert.match(f.diagnostics[0].message, /2 brackets still open/);
  });

  test("### ends a body; trailing empty separators make no request", () => {
    const f = parseRpcFile('### one\nhttp://h/s.S/M\n\n{"a": 1\n###\n### \n');
    assert.equal(f.requests.length, 1);
    assert.deepEqual(
      f.diagnostics.map((d) => d.code),
      ["unclosed-json"],
    );
  });

  test("variables after the first request, duplicate names and bad variable lines", () => {
    const text = "@a = 1\n@a = 2\n@9x = 3\n@b\n### r\nhttp://h/s.S/M\n### s\n@late = 1\nhttp://h/s.S/N\n";
    const f = parseRpcFile(text);
    assert.deepEqual(
      f.variables.map((v) => [v.name.text, v.value.text]),
      [
        ["a", "1"],
        ["a", "2"],
      ],
    );
    assert.deepEqual(
      f.diagnostics.map((d) => [d.severity, d.code, at(text, d.range)]),
      [
        ["warning", "duplicate-variable", "a"],
        ["error", "invalid-variable-name", "9x"],
        ["error", "syntax", "@b"],
        ["error", "misplaced-variable", "@late = 1"],
      ],
    );
  });

  test("request-line problems: unknown verb, spaces, no scheme; a named request without a URL warns", () => {
    const text =
      "### a\nPOST http://h/s.S/M\n### b\nhttp://h/s.S/M HTTP/2\n### c\nlocalhost:8080/s.S/M\n### d\n# @insecure\n";
    const f = parseRpcFile(text);
    assert.deepEqual(
      f.diagnostics.map((d) => [d.severity, d.code, at(text, d.range)]),
      [
        ["error", "unknown-verb", "POST"],
        ["error", "invalid-url", "http://h/s.S/M HTTP/2"],
        ["error", "invalid-url", "localhost:8080/s.S/M"],
        ["warning", "missing-url", "### d"],
      ],
    );
    assert.equal(f.requests.length, 3);
  });

  test("duplicate request names warn", () => {
    const f = parseRpcFile("### x\nhttp://h/s.S/M\n### x\nhttp://h/s.S/M\n");
    assert.deepEqual(
      f.diagnostics.map((d) => [d.severity, d.code, d.range.start.line]),
      [["warning", "duplicate-name", 2]],
    );
  });

  test("CRLF and CR line ends, a byte order mark and UTF-16 characters keep exact ranges", () => {
    const text = '\ufeff@v = "é😀"\r\n### 😀 name\r\nGRPC http://h/s.S/M\r\nx-emoji: 😀😀\r\r{"k": "😀"}';
    const f = parseRpcFile(text);
    assert.deepEqual(f.diagnostics, []);
    assert.deepEqual(f.variables[0].name.range.start, { line: 0, character: 2 });
    const r = f.requests[0];
    assert.equal(r.name?.text, "😀 name");
    assert.deepEqual(r.name?.range, { start: { line: 1, character: 4 }, end: { line: 1, character: 11 } });
    assert.equal(r.headers[0].value.text, "😀😀");
    assert.deepEqual(r.headers[0].value.range.end, { line: 3, character: 13 });
    assert.deepEqual(r.body[0].range, { start: { line: 5, character: 0 }, end: { line: 5, character: 11 } });
  });

  test("empty text and whitespace give nothing, without diagnostics", () => {
    for (const t of ["", "\n\n", "   \t", "# only a comment", "###"]) {
      const f = parseRpcFile(t);
      assert.deepEqual([f.requests.length, f.diagnostics.length, f.variables.length], [0, 0, 0], t);
    }
  });
});
