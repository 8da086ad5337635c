import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { parseCurlArgs } from "../../../src/cli/commands/curl-args";
import { openRpcContext } from "../../../src/core/rpcfile/context";
import { curlToRequestText } from "../../../src/core/rpcfile/from-curl";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";

const dir = mkdtempSync(join(tmpdir(), "protocall-fromcurl-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Parses the text as a .rpc file and converts its only request back to curl options. */
function back(text: string) {
  const file = parseRpcFile(text);
  assert.deepEqual(file.diagnostics, [], text);
  assert.equal(file.requests.length, 1, text);
  const ctx = openRpcContext({ filePath: join(dir, "x.rpc"), workspaceRoot: dir, processEnv: {} });
  const r = ctx.toCurl(file, file.requests[0]);
  assert.deepEqual(r.diagnostics, [], text);
  return r.options;
}

describe("curlToRequestText", () => {
  test("a command line becomes a request that converts back to the same options", () => {
    writeFileSync(join(dir, "body.json"), '{"number": 1}');
    const cases: string[][] = [
      ["http://h:1/s.S/M"],
      [
        "--protocol",
        "grpcweb",
        // Header files come first: in a request, `# @header @file` options are read before header lines.
        "-H",
        `@${join(dir, "headers.txt")}`,
        "-H",
        'Authorization: Bearer it\'s "quoted" $HOME',
        "-H",
        "Accept-Language: en, fr",
        "-d",
        '{"text": "line\\nnext", "emoji": "😀"}\n{"a": 1}',
        "--emit-defaults",
        "-o",
        "/tmp/out dir/r.json",
        "--schema",
        "/p/demo.binpb",
        "--schema",
        "buf.build/acme/x",
        "--reflect",
        "--reflect-header",
        "*",
        "--reflect-header",
        "x-r: 1",
        "--reflect-protocol",
        "grpc-v1alpha",
        "--http2-prior-knowledge",
        "--unix-socket",
        "/tmp/s.sock",
        "--connect-timeout",
        "0.25",
        "--keepalive-time",
        "30",
        "--timeout",
        "1m30.5s",
        "--cacert",
        "/c/ca.pem",
        "--cert",
        "/c/client.pem",
        "--key",
        "/c/client.key",
        "--insecure=false",
        "--servername",
        "api.test",
        "--user",
        "me:pw",
        "--netrc-file",
        "/n/.netrc",
        "--user-agent",
        "ua/1",
        "-v",
        "--debug",
        "--log-format",
        "json",
        "https://127.0.0.1:8443/api/demo.v1.DemoService/Sum",
      ],
      ["-d", `@${join(dir, "body.json")}`, "-k", "--no-keepalive", "-n", "https://h/s.S/M"],
      ["-d", "@-", "--list-services", "--reflect=false", "--schema", "/s.binpb", "http://h"],
    ];
    for (const args of cases) {
      const options = parseCurlArgs(args).options;
      const text = curlToRequestText(options, "Pasted");
      const converted = back(text);
      // An included file is read into inline data; everything else is the same.
      if (options.data?.startsWith("@") && options.data !== "@-") {
        assert.deepEqual(converted, { ...options, data: '{"number": 1}' });
      } else {
        assert.deepEqual(converted, options, text);
      }
    }
  });

  test("the text reads as a request file: name, options, URL, headers, empty line, body", () => {
    const o = parseCurlArgs([
      "--protocol",
      "grpc",
      "--timeout",
      "5s",
      "-H",
      "x-a:1",
      "-d",
      '{"name": "w"}',
      "http://localhost:8080/demo.v1.GreetService/Greet",
    ]).options;
    assert.equal(
      curlToRequestText(o, "Greet"),
      [
        "### Greet",
        "# @protocol grpc",
        "# @timeout 5000ms",
        "http://localhost:8080/demo.v1.GreetService/Greet",
        "x-a: 1",
        "",
        '{"name": "w"}',
        "",
      ].join("\n"),
    );
  });
});
