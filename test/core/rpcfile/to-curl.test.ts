import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { parseCurlArgs } from "../../../src/cli/commands/curl-args";
import { openRpcContext } from "../../../src/core/rpcfile/context";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import type { CurlConversion } from "../../../src/core/rpcfile/to-curl";

const dir = mkdtempSync(join(tmpdir(), "protocall-tocurl-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function convert(
  text: string,
  options: { env?: Record<string, string>; index?: number } = {},
): CurlConversion {
  const filePath = join(dir, "requests.rpc");
  writeFileSync(filePath, text);
  const file = parseRpcFile(text);
  const ctx = openRpcContext({ filePath, workspaceRoot: dir, processEnv: options.env ?? {} });
  return ctx.toCurl(file, file.requests[options.index ?? 0]);
}

function curl(...args: string[]) {
  return parseCurlArgs(args).options;
}

describe("requestToCurl", () => {
  test("a request means exactly what the same curl command line means", () => {
    writeFileSync(join(dir, "more.json"), '{"number": 3}\n');
    const text = [
      "@host = http://127.0.0.1:8080",
      "@n = 2",
      "### Sum",
      "# @protocol grpc",
      "# @timeout 1m30s",
      "# @connect-timeout 2.5",
      "# @emit-defaults",
      "# @reflect false",
      "# @schema ./proto",
      "# @schema buf.build/acme/petapis",
      "# @schema localhost:8443/acme/tiny:v1",
      "# @cacert certs/ca.pem",
      "# @header x-extra: 1",
      "# @verbose",
      "{{host}}/demo.v1.DemoService/Sum",
      "Authorization: Bearer {{$env TOKEN}}",
      "Accept-Language: en, fr",
      "",
      '{"number": 1}',
      '{"number": {{n}}}',
      "< ./more.json",
    ].join("\n");
    const r = convert(text, { env: { TOKEN: "t0k" } });
    assert.deepEqual(r.diagnostics, []);
    assert.deepEqual(
      r.options,
      curl(
        "--protocol",
        "grpc",
        "--timeout",
        "1m30s",
        "--connect-timeout",
        "2.5",
        "--emit-defaults",
        "--reflect=false",
        "--schema",
        join(dir, "proto"),
        "--schema",
        "buf.build/acme/petapis",
        "--schema",
        "localhost:8443/acme/tiny:v1",
        "--cacert",
        join(dir, "certs/ca.pem"),
        "-H",
        "x-extra: 1",
        "-v",
        "-H",
        "Authorization: Bearer t0k",
        "-H",
        "Accept-Language: en, fr",
        "-d",
        '{"number": 1}\n{"number": 2}\n{"number": 3}\n',
        "http://127.0.0.1:8080/demo.v1.DemoService/Sum",
      ),
    );
  });

  test("verbs set the protocol; a request without body sends no data", () => {
    const r = convert("### a\nGRPC-WEB http://h/s.S/M\n### b\nCONNECT http://h/s.S/M\n");
    assert.deepEqual(r.options, curl("--protocol", "grpcweb", "http://h/s.S/M"));
    assert.deepEqual(
      convert("### a\nGRPC-WEB http://h/s.S/M\n### b\nCONNECT http://h/s.S/M\n", { index: 1 }).options,
      curl("http://h/s.S/M"),
    );
  });

  test("list options with a base URL", () => {
    assert.deepEqual(
      convert("# @list-methods\n# @http2-prior-knowledge\nhttp://h:1\n").options,
      curl("--list-methods", "--http2-prior-knowledge", "http://h:1"),
    );
  });

  test("@file references in options become absolute; @- stays", () => {
    const r = convert("# @data @body.json\n# @header @-\n# @output out/r.json\nhttp://h/s.S/M\n");
    assert.deepEqual(
      r.options,
      curl("-d", `@${join(dir, "body.json")}`, "-H", "@-", "-o", join(dir, "out/r.json"), "http://h/s.S/M"),
    );
  });

  test("an undefined variable yields no options and an error at the reference", () => {
    const r = convert('http://h/s.S/M\nx-a: {{missing}}\n\n{"a": "{{other}}"}\n');
    assert.equal(r.options, undefined);
    assert.deepEqual(
      r.diagnostics.map((d) => [d.range.start.line, d.range.start.character, d.message.slice(0, 30)]),
      [
        [1, 5, "undefined variable {{missing}}"],
        [3, 7, "undefined variable {{other}}: "],
      ],
    );
  });

  test("option values with variables are checked after substitution", () => {
    const r = convert("@t = soon\n# @timeout {{t}}\nhttp://h/s.S/M\n");
    assert.equal(r.options, undefined);
    assert.equal(r.diagnostics.length, 1);
    assert.match(r.diagnostics[0].message, /invalid value "soon" for @timeout/);
    assert.deepEqual(r.diagnostics[0].range.start, { line: 1, character: 11 });
    assert.deepEqual(convert("@t = 5s\n# @timeout {{t}}\nhttp://h/s.S/M\n").options?.timeoutMs, 5000);
  });

  test("a document that is not JSON after substitution is an error at the document", () => {
    const r = convert('@name = two words\nhttp://h/s.S/M\n\n{"name": {{name}}}\n');
    assert.equal(r.options, undefined);
    assert.match(r.diagnostics[0].message, /after substituting variables, this JSON document is invalid/);
    assert.deepEqual(r.diagnostics[0].range.start, { line: 3, character: 0 });
  });

  test("bodyLines: where each body part starts in the data, an include of several documents included", () => {
    writeFileSync(join(dir, "two.json"), '{"a": 1}\n{"a": 2}');
    const r = convert('http://h/s.S/M\n\n< ./two.json\n{"a": 3}\n{\n  "a": 4\n}\n');
    assert.equal(r.options?.data, '{"a": 1}\n{"a": 2}\n{"a": 3}\n{\n  "a": 4\n}');
    assert.deepEqual(r.bodyLines, [1, 3, 4]);
  });

  test("conflicts and missing files: verb against @protocol, @data with a body, an include that does not exist", () => {
    const a = convert("# @protocol connect\nGRPC http://h/s.S/M\n");
    assert.match(a.diagnostics[0].message, /@protocol connect contradicts the verb GRPC/);
    const b = convert("# @data {}\nhttp://h/s.S/M\n\n{}\n");
    assert.match(b.diagnostics[0].message, /@data and a body both give the request data/);
    const c = convert("http://h/s.S/M\n\n< ./nope.json\n");
    assert.match(c.diagnostics[0].message, /cannot read the included file .*nope\.json: no such file/);
    assert.deepEqual(c.diagnostics[0].range.start, { line: 2, character: 2 });
    for (const r of [a, b, c]) assert.equal(r.options, undefined);
    // An invalid @protocol is reported once, not also as a contradiction.
    const d = convert("# @protocol nope\nGRPC http://h/s.S/M\n");
    assert.deepEqual(
      d.diagnostics.map((x) => x.code),
      ["invalid-value"],
    );
  });

  test("parse errors inside the request stop its conversion", () => {
    const r = convert("# @nope\nhttp://h/s.S/M\n");
    assert.equal(r.options, undefined);
    assert.equal(r.diagnostics[0].code, "unknown-option");
  });

  test("environments and .env files feed the request", () => {
    writeFileSync(join(dir, "protocall.env.json"), JSON.stringify({ dev: { host: "http://dev:1" } }));
    writeFileSync(join(dir, "protocall.env.private.json"), JSON.stringify({ dev: { token: "secret" } }));
    writeFileSync(join(dir, ".env"), "KEY=dotenv-key\n");
    const filePath = join(dir, "env.rpc");
    const text = "{{host}}/s.S/M\nAuthorization: {{token}}\nx-key: {{$dotenv KEY}}\n";
    const file = parseRpcFile(text);
    const ctx = openRpcContext({ filePath, workspaceRoot: dir, environment: "dev", processEnv: {} });
    assert.deepEqual(
      ctx.toCurl(file, file.requests[0]).options,
      curl("-H", "Authorization: secret", "-H", "x-key: dotenv-key", "http://dev:1/s.S/M"),
    );
    assert.throws(
      () => openRpcContext({ filePath, workspaceRoot: dir, environment: "qa", processEnv: {} }),
      /environment "qa" is not defined/,
    );
  });
});
