import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { parseCurlArgs } from "../../../src/cli/commands/curl-args";
import type { CurlOptions } from "../../../src/core/invoke/options";
import { openRpcContext } from "../../../src/core/rpcfile/context";
import {
  copyAsBufCurl,
  copyAsGrpcurl,
  copyAsProtocallCurl,
  csvField,
} from "../../../src/core/rpcfile/copy-as";
import { commandLineToRequests, csvFields, curlToRequestText } from "../../../src/core/rpcfile/from-curl";
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

/** The options of the only request of pasted text. */
function pasted(text: string): CurlOptions {
  const r = commandLineToRequests(text);
  assert.equal(r.count, 1, r.text);
  const options = back(r.text);
  assert.ok(options, r.text);
  return options;
}

describe("commandLineToRequests (Paste as Request)", () => {
  const request = (args: string[]) => parseCurlArgs(args).options;

  test("a copied protocall curl or buf curl command pastes back to the same options", () => {
    const cases = [
      request([
        "-H",
        "Accept-Language: en, fr",
        "-H",
        'x-q: say "hi"',
        "-d",
        '{"name": "it\'s"}',
        "http://h:1/a.v1.S/M",
      ]),
      request([
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        "--reflect-header",
        "x-r: a,b",
        "--timeout",
        "2s",
        "http://h:1/a.v1.S/M",
      ]),
      request(["--schema", "/p/a,b.binpb", "-k", "--servername", "api.test", "https://h/a.v1.S/M"]),
    ];
    for (const o of cases) {
      assert.deepEqual(pasted(copyAsProtocallCurl(o).command), o, copyAsProtocallCurl(o).command);
      // buf curl reads -H, --reflect-header and --schema as CSV; the copy quotes them so.
      const buf = copyAsBufCurl(o).command;
      const back = pasted(buf);
      assert.deepEqual({ ...back, http2PriorKnowledge: o.http2PriorKnowledge }, o, buf);
    }
  });

  test("a copied grpcurl command pastes back to the same gRPC call", () => {
    const o = request([
      "--protocol",
      "grpc",
      "-H",
      "authorization: Bearer t",
      "--reflect-header",
      "*",
      "-d",
      '{"a": 1}',
      "--timeout",
      "1500ms",
      "--connect-timeout",
      "2",
      "--cacert",
      "/c/ca.pem",
      "--emit-defaults",
      "https://api.test:8443/a.v1.S/M",
    ]);
    const copied = copyAsGrpcurl(o);
    assert.deepEqual(copied.notes, []);
    assert.deepEqual(pasted(copied.command), o, copied.command);
  });

  test("grpcurl: address and method, -plaintext, -rpc-header, -d @ with < file, list", () => {
    const o = pasted(
      "grpcurl -plaintext -rpc-header 'x-a: 1' -authority api.test -d @ localhost:8080 demo.v1.GreetService.Greet < body.json",
    );
    assert.equal(o.url, "http://localhost:8080/demo.v1.GreetService/Greet");
    assert.equal(o.protocol, "grpc");
    assert.deepEqual(o.headers, ["x-a: 1", "Host: api.test"]);
    assert.deepEqual(o.reflectHeaders, []);
    assert.equal(o.data, '{"number": 1}', "the file's content (written to body.json below)");
    const list = commandLineToRequests("grpcurl --plaintext=true 127.0.0.1:9 list");
    // Options come in the order of the flag table, as "Copy as" writes them.
    assert.match(
      list.text,
      /^### List services\n# @list-services\n# @protocol grpc\nhttp:\/\/127\.0\.0\.1:9\n$/,
    );
  });

  test("a prompt, variables, npx and several commands; each request is named for its method", () => {
    const r = commandLineToRequests(
      '$ TOKEN=x npx protocall curl -H "Authorization: Bearer $TOKEN" http://h/a.v1.S/Get\nbuf curl --list-services http://h\n',
    );
    assert.equal(r.count, 2);
    assert.deepEqual(r.tools, ["protocall curl", "buf curl"]);
    const file = parseRpcFile(r.text);
    assert.deepEqual(
      file.requests.map((q) => q.name?.text),
      ["Get", "List services"],
    );
    assert.match(r.text, /Authorization: Bearer \{\{\$env TOKEN\}\}/);
  });

  test("a body from standard input is noted", () => {
    assert.deepEqual(commandLineToRequests("buf curl -d @- http://h/a.S/M").notes, [
      "the body was to come from standard input (-d @-): write it under the request instead",
    ]);
    assert.deepEqual(commandLineToRequests("buf curl -d @- http://h/a.S/M < b.json").notes, []);
  });

  test("what a request leaves out is noted", () => {
    const r = commandLineToRequests("grpcurl -plaintext -max-msg-sz 10 h:1 a.S/M > out.json");
    assert.deepEqual(r.notes, [
      "the output redirection > out.json was left out: set # @output out.json to keep it",
      "grpcurl -max-msg-sz has no equivalent in a request and was left out",
    ]);
  });

  test("a text that is not such a command line is refused, saying what to paste", () => {
    const refused: [string, RegExp][] = [
      ["", /the text is empty: copy a buf curl, protocall curl or grpcurl command line/],
      [
        "curl -X POST http://h/x",
        /"curl -X" is not one: copy a buf curl, protocall curl or grpcurl command line/,
      ],
      ["buf build", /"buf build" is not one/],
      ["buf curl -d '{}'", /the buf curl command names no URL/],
      ["protocall curl --bogus http://h/a.S/M", /unknown flag --bogus/],
      ["grpcurl -plaintext h:1", /names no method/],
      ["grpcurl -plaintext h:1 describe a.S", /describe has no request equivalent/],
      ["grpcurl -format text h:1 a.S/M", /-format text has no equivalent/],
      ["grpcurl -bogus h:1 a.S/M", /grpcurl flag -bogus is not known/],
      ["grpcurl -max-time soon h:1 a.S/M", /-max-time takes seconds/],
      ["buf curl -H '\"open' http://h/a.S/M", /unclosed quote, as buf reads it/],
    ];
    for (const [text, message] of refused) assert.throws(() => commandLineToRequests(text), message, text);
  });

  test("csvFields reads what csvField writes", () => {
    for (const v of ["plain", "a, b", 'say "hi"', "", ","]) assert.deepEqual(csvFields(csvField(v)), [v]);
    assert.deepEqual(csvFields("a,b"), ["a", "b"]);
  });
});
