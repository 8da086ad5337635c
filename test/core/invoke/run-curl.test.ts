import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type DemoServer, startDemoServer } from "../../../src/demo/server";
import { createTestPki, type TestPki } from "../../support/tls";
import { Capture, curl, interactiveStdin, writeDemoDescriptorSet } from "./support";

let server: DemoServer;
let h1Only: DemoServer;
let schema: string;
let dir: string;

before(async () => {
  server = await startDemoServer();
  h1Only = await startDemoServer({ http: "1.1", reflection: false });
  schema = writeDemoDescriptorSet();
  dir = mkdtempSync(join(tmpdir(), "protocall-run-curl-"));
});
after(async () => {
  await server.close();
  await h1Only.close();
});

const greet = () => `${server.url}/demo.v1.GreetService/Greet`;
const demo = (method: string, s = server) => `${s.url}/demo.v1.DemoService/${method}`;

describe("unary calls", () => {
  test("Connect over HTTP/1.1 with --schema prints the response as indented JSON", async () => {
    const r = await curl({
      url: `${h1Only.url}/demo.v1.GreetService/Greet`,
      schemas: [schema],
      data: '{"name":"x"}',
    });
    assert.equal(r.stderr, "");
    assert.equal(r.stdout, '{\n  "greeting": "Hello, x!"\n}\n');
    assert.equal(r.code, 0);
  });

  test("no data sends one empty message", async () => {
    const r = await curl({ url: greet(), schemas: [schema] });
    assert.equal(r.stdout, '{\n  "greeting": "Hello, world!"\n}\n');
  });

  test("reflection is the default schema source, over h2c implied for plain http", async () => {
    const r = await curl({ url: greet(), data: '{"name":"reflected"}', verbose: true });
    assert.equal(r.stdout, '{\n  "greeting": "Hello, reflected!"\n}\n');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\* Using HTTP\/2 prior knowledge over plain-text \(h2c\)/);
    assert.match(r.stderr, /ServerReflectionInfo/);
  });

  test("gRPC and gRPC-Web protocols", async () => {
    for (const protocol of ["grpc", "grpcweb"] as const) {
      const r = await curl({ url: greet(), protocol, schemas: [schema], data: '{"name":"p"}' });
      assert.equal(r.stdout, '{\n  "greeting": "Hello, p!"\n}\n', `${protocol}: ${r.stderr}`);
    }
  });

  test("more than one document for a unary method is an error naming the position", async () => {
    const r = await curl({ url: greet(), schemas: [schema], data: '{"name":"a"}\n{"name":"b"}' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^protocall: --data:2:1: demo\.v1\.GreetService\/Greet is a unary method/);
    assert.equal(r.stdout, "");
  });

  test("data with no document for a unary method is an error (an empty request needs no -d)", async () => {
    const r = await curl({ url: greet(), schemas: [schema], data: "  " });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^protocall: --data: no request data/);
  });

  test("an unknown field is an error with the document's position and the field meant", async () => {
    const r = await curl({ url: greet(), schemas: [schema], data: '  {"nam":"a"}' });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'protocall: --data:1:3: request message #1 is not a valid demo.v1.GreetRequest: unknown field "nam" in message demo.v1.GreetRequest (did you mean "name"?); its fields: name\n',
    );
    // In a nested message too, named as the editor names it.
    const nested = await curl({
      url: `${server.url}/demo.v1.DemoService/Echo`,
      schemas: [schema],
      data: '{"items": [{"name": "a"}, {"nmae": "b"}]}',
    });
    assert.equal(nested.code, 1);
    assert.match(
      nested.stderr,
      /^protocall: --data:1:1: request message #1 is not a valid demo\.v1\.Everything: unknown field "nmae" in message demo\.v1\.Everything\.Nested \(did you mean "name"\?\)/,
    );
  });

  test("an unknown method is one line with a suggestion, exit 1", async () => {
    const r = await curl({ url: `${server.url}/demo.v1.GreetService/Gret`, schemas: [schema] });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^protocall: .*"Greet"/);
    assert.equal(r.stderr.split("\n").length, 2);
  });

  test("-o writes the response to a file", async () => {
    const out = join(dir, "out.json");
    const r = await curl({ url: greet(), schemas: [schema], output: out });
    assert.equal(r.stdout, "");
    assert.equal(readFileSync(out, "utf8"), '{\n  "greeting": "Hello, world!"\n}\n');
  });

  test("--emit-defaults prints zero values, [] and {}, and null for unset message fields", async () => {
    const r = await curl({ url: demo("Echo"), schemas: [schema], data: "{}", emitDefaults: true });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}"text": "",$/m);
    assert.match(r.stdout, /^ {2}"int64Value": "0",$/m);
    assert.match(r.stdout, /^ {2}"nested": null,$/m);
    assert.match(r.stdout, /^ {2}"tags": \[\],$/m);
    assert.match(r.stdout, /^ {2}"counts": \{\},$/m);
    assert.doesNotMatch(r.stdout, /maybeText|choiceText/);
  });

  test("google.protobuf.Any in the request and the response resolves through the schema", async () => {
    const data = JSON.stringify({
      extra: { "@type": "type.googleapis.com/demo.v1.GreetResponse", greeting: "hi" },
    });
    const r = await curl({ url: demo("Echo"), schemas: [schema], data });
    assert.equal(
      r.stdout,
      '{\n  "extra": {\n    "@type": "type.googleapis.com/demo.v1.GreetResponse",\n    "greeting": "hi"\n  }\n}\n',
    );
  });
});

describe("streams", () => {
  test("server stream prints every message as it arrives", async () => {
    const r = await curl({
      url: demo("Count"),
      protocol: "grpc",
      data: '{"count":3,"text":"t"}',
      schemas: [schema],
    });
    assert.equal(r.code, 0, r.stderr);
    const expected = [1, 2, 3].map((n) => `{\n  "number": ${n},\n  "text": "t"\n}\n`).join("");
    assert.equal(r.stdout, expected);
  });

  test("long server streams print every message, for every protocol", async () => {
    const expected = Array.from(
      { length: 3000 },
      (_, i) => `{\n  "number": ${i + 1},\n  "text": "s"\n}\n`,
    ).join("");
    for (const protocol of ["grpc", "grpcweb", "connect"] as const) {
      const r = await curl({
        url: demo("Count"),
        protocol,
        schemas: [schema],
        data: '{"count":3000,"text":"s","errorCode":"CODE_DATA_LOSS"}',
      });
      assert.equal(r.stdout, expected, protocol);
      assert.equal(r.code, 120, `${protocol}: ${r.stderr}`);
    }
  });

  test("streamed messages split across reads and gzip-compressed messages", async () => {
    const http2 = await import("node:http2");
    const { gzipSync } = await import("node:zlib");
    const raw = http2.createServer();
    raw.on("stream", (stream) => {
      stream.on("error", () => {});
      stream.respond(
        { ":status": 200, "content-type": "application/grpc", "grpc-encoding": "gzip" },
        { waitForTrailers: true },
      );
      const plain = Buffer.from([0, 0, 0, 0, 2, 8, 1]); // number: 1
      const zipped = gzipSync(Buffer.from([8, 2])); // number: 2
      const compressed = Buffer.concat([Buffer.from([1, 0, 0, 0, zipped.length]), zipped]);
      stream.write(plain.subarray(0, 3));
      setTimeout(() => {
        stream.write(Buffer.concat([plain.subarray(3), compressed]));
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end();
      }, 20);
    });
    await new Promise<void>((r) => raw.listen(0, "127.0.0.1", r));
    const port = (raw.address() as { port: number }).port;
    try {
      const r = await curl({
        url: `http://127.0.0.1:${port}/demo.v1.DemoService/Count`,
        protocol: "grpc",
        schemas: [schema],
      });
      assert.equal(r.stdout, '{\n  "number": 1\n}\n{\n  "number": 2\n}\n', r.stderr);
      assert.equal(r.code, 0);
    } finally {
      await new Promise<void>((r) => raw.close(() => r()));
    }
  });

  test("client stream from a file sends every document", async () => {
    const file = join(dir, "sum.json");
    writeFileSync(file, '{"number": 1}\n{"number": "2"}{"number":3}\n');
    const r = await curl({
      url: demo("Sum"),
      data: `@${file}`,
      schemas: [schema],
      http2PriorKnowledge: true,
    });
    assert.equal(r.stdout, '{\n  "sum": "6",\n  "count": 3\n}\n', r.stderr);
  });

  test("client stream with no data sends no messages", async () => {
    const r = await curl({ url: demo("Sum"), schemas: [schema], http2PriorKnowledge: true });
    // sum 0 and count 0 are both default values: an empty object.
    assert.equal(r.stdout, "{}\n", r.stderr);
  });

  test("bidi stream is interactive: a response prints before stdin ends", async () => {
    const stdin = interactiveStdin();
    const stdout = new Capture();
    const { runCurl } = await import("../../../src/core/invoke/run-curl");
    const { defaultCurlOptions } = await import("../../../src/core/invoke/options");
    const done = runCurl(
      {
        ...defaultCurlOptions(),
        url: demo("Chat"),
        data: "@-",
        schemas: [schema],
        http2PriorKnowledge: true,
      },
      {
        cwd: dir,
        env: {},
        stdin,
        stdinIsTTY: false,
        homedir: dir,
        stdout,
        stderr: new Capture(),
      },
    );
    stdin.write('{"text":"one"}\n');
    const deadline = Date.now() + 60_000;
    while (!stdout.text().includes('"one"') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    assert.match(stdout.text(), /"text": "one"/, "first response printed while stdin is open");
    stdin.end('{"text":"two"}\n');
    assert.equal(await done, 0);
    assert.equal(
      stdout.text(),
      '{\n  "text": "one",\n  "number": 1\n}\n{\n  "text": "two",\n  "number": 2\n}\n',
    );
  });

  test("a bidi stream over plain http uses h2c, as buf does", async () => {
    const r = await curl({ url: demo("Chat"), schemas: [schema], data: '{"text":"x"}', verbose: true });
    assert.equal(r.stdout, '{\n  "text": "x",\n  "number": 1\n}\n', r.stderr);
    assert.match(
      r.stderr,
      /\* Using HTTP\/2 prior knowledge over plain-text \(h2c\): a bidi stream needs HTTP\/2\n/,
    );
  });

  test("a bad document in a client stream stops the call with its position", async () => {
    const r = await curl({
      url: demo("Sum"),
      data: '{"number":1}\n{"numbr":2}',
      schemas: [schema],
      http2PriorKnowledge: true,
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^protocall: --data:2:1: request message #2 is not a valid demo\.v1\.SumRequest/);
  });
});

describe("RPC errors", () => {
  test("error JSON with details on stderr, exit code × 8", async () => {
    const r = await curl({
      url: demo("Fail"),
      schemas: [schema],
      data: '{"code":"CODE_NOT_FOUND","message":"no <such> & thing","details":["DETAIL_QUOTA_EXCEEDED"]}',
    });
    assert.equal(r.code, 40);
    assert.equal(r.stdout, "");
    const parsed = JSON.parse(r.stderr);
    assert.equal(parsed.code, "not_found");
    assert.equal(parsed.message, "no <such> & thing");
    assert.match(r.stderr, /"message": "no \\u003csuch\\u003e \\u0026 thing"/);
    assert.equal(parsed.details[0].type, "demo.v1.QuotaExceeded");
    assert.match(parsed.details[0].value, /^[A-Za-z0-9+/]+$/);
    assert.ok(parsed.details[0].debug, "the Connect protocol's error JSON carries debug");
    const grpc = await curl({
      url: demo("Fail"),
      protocol: "grpc",
      schemas: [schema],
      data: '{"code":"CODE_NOT_FOUND","details":["DETAIL_QUOTA_EXCEEDED"]}',
    });
    assert.equal(grpc.code, 40);
    assert.equal(
      JSON.parse(grpc.stderr).details[0].debug,
      undefined,
      "gRPC details have no debug, as in buf",
    );
    assert.match(r.stderr, /^ {3}"code"/m);
  });

  test("error messages keep their line breaks and spaces", async () => {
    const r = await curl({
      url: demo("Fail"),
      schemas: [schema],
      data: JSON.stringify({ code: "CODE_ABORTED", message: "line 1\nline 2 \u2028 " }),
    });
    assert.equal(r.code, 80);
    assert.equal(JSON.parse(r.stderr).message, "line 1\nline 2 \u2028 ");
  });

  test("an error at the end of a server stream after messages", async () => {
    const r = await curl({
      url: demo("Count"),
      protocol: "grpc",
      schemas: [schema],
      data: '{"count":1,"errorCode":"CODE_ABORTED"}',
    });
    assert.equal(r.code, 80);
    assert.equal(r.stdout, '{\n  "number": 1\n}\n');
    assert.match(r.stderr, /"code": "aborted"/);
  });

  test("connection refused is unavailable (112)", async () => {
    const port = await freePort();
    const r = await curl({ url: `http://127.0.0.1:${port}/demo.v1.GreetService/Greet`, schemas: [schema] });
    assert.equal(r.code, 112);
    assert.equal(
      r.stderr,
      `{\n   "code": "unavailable",\n   "message": "dial tcp 127.0.0.1:${port}: connect: connection refused"\n}\n`,
    );
  });

  test("HTTP/2 to an HTTP/1.1-only server is unavailable, worded as buf's", async () => {
    const r = await curl({ url: demo("Count", h1Only), protocol: "grpc", schemas: [schema], data: "{}" });
    assert.equal(r.code, 112);
    assert.equal(
      r.stderr,
      '{\n   "code": "unavailable",\n   "message": "http2: failed reading the frame payload: http2: frame too large, note that the frame header looked like an HTTP/1.1 header"\n}\n',
    );
  });

  test("--timeout is the deadline: deadline_exceeded (32), worded as buf words it", {
    timeout: 60_000,
  }, async () => {
    // The stream would run for hours: only the deadline can end it (no bound on the time needed).
    // --timeout also covers loading the schema: 5 s leave room for that on a busy machine.
    const r = await curl({
      url: demo("Count"),
      protocol: "grpc",
      schemas: [schema],
      data: '{"count":5,"delayMs":600000}',
      timeoutMs: 5000,
    });
    assert.equal(r.code, 32, r.stderr);
    assert.equal(
      r.stderr,
      '{\n   "code": "deadline_exceeded",\n   "message": "context deadline exceeded"\n}\n',
    );
  });

  test("a server that resets the stream or drops the connection mid-stream: internal (104), as buf", async () => {
    const http2 = await import("node:http2");
    for (const mode of ["reset", "drop"] as const) {
      const raw = http2.createServer();
      raw.on("sessionError", () => {});
      raw.on("stream", (stream) => {
        stream.on("error", () => {});
        stream.respond({ ":status": 200, "content-type": "application/grpc+proto" });
        stream.write(Buffer.from([0, 0, 0, 0, 2, 8, 1])); // CountResponse{number: 1}
        setTimeout(() => {
          if (mode === "drop") stream.session?.destroy();
          else stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
        }, 20);
      });
      await new Promise<void>((r) => raw.listen(0, "127.0.0.1", r));
      const port = (raw.address() as { port: number }).port;
      try {
        const r = await curl({
          url: `http://127.0.0.1:${port}/demo.v1.DemoService/Count`,
          protocol: "grpc",
          schemas: [schema],
          data: '{"count":3}',
        });
        assert.equal(r.stdout, '{\n  "number": 1\n}\n', mode);
        assert.equal(r.code, 104, `${mode}: ${r.stderr}`);
        assert.match(r.stderr, /"code": "internal"/);
      } finally {
        await new Promise<void>((r) => raw.close(() => r()));
      }
    }
  });

  test("--connect-timeout bounds connection setup", { timeout: 60_000 }, async () => {
    // A listener that never completes the TLS handshake.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as { port: number }).port;
    try {
      // The handshake never completes: only the connect timeout can end the call (buf waits without
      // limit). A dial that never connects is test/parity's full-backlog case (deadline_exceeded).
      const r = await curl({
        url: `https://127.0.0.1:${port}/demo.v1.GreetService/Greet`,
        schemas: [schema],
        connectTimeout: 0.2,
      });
      assert.equal(r.code, 112, r.stderr);
      assert.match(
        r.stderr,
        /"code": "unavailable",\n\s+"message": "dial tcp 127\.0\.0\.1:\d+: i\/o timeout"/,
      );
    } finally {
      silent.close();
    }
  });
});

describe("headers and verbose output", () => {
  test("headers, credentials and user agent reach the server; Host sets the authority", async () => {
    const r = await curl({
      url: `${h1Only.url}/demo.v1.DemoService/Inspect`,
      schemas: [schema],
      headers: ["X-Trace: a, b", "Host: example.test"],
      user: "u:p",
      data: '{"headerNames":["x-trace","authorization","host","user-agent"]}',
    });
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    const get = (n: string) =>
      res.headers.filter((h: { name: string }) => h.name === n).map((h: { value: string }) => h.value);
    assert.deepEqual(get("x-trace"), ["a, b"]);
    assert.deepEqual(get("authorization"), [`Basic ${Buffer.from("u:p").toString("base64")}`]);
    assert.deepEqual(get("host"), ["example.test"]);
    assert.deepEqual(get("user-agent"), ["connect-es/2.1.2 protocall/test"]);
  });

  test("-v shows gRPC-Web trailers carried in the body", async () => {
    const r = await curl({
      url: demo("Count", h1Only),
      protocol: "grpcweb",
      schemas: [schema],
      data: '{"count":1}',
      verbose: true,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /\* \(#1\) Call complete\nprotocall: < \(#1\)\nprotocall: < \(#1\) \[\*\] Grpc-Status: 0\n/,
    );
  });

  test("-v prints request and response lines with secrets redacted", async () => {
    const r = await curl({
      url: `${h1Only.url}/demo.v1.GreetService/Greet`,
      schemas: [schema],
      headers: ["Authorization: Bearer s3cret"],
      data: '{"name":"v"}',
      verbose: true,
    });
    assert.equal(r.code, 0);
    const lines = r.stderr.split("\n");
    assert.ok(lines.includes("protocall: * Invoking RPC demo.v1.GreetService.Greet"), r.stderr);
    assert.ok(lines.some((l) => /^protocall: \* Dialing \(tcp\) 127\.0\.0\.1:\d+\.\.\.$/.test(l)));
    assert.ok(lines.includes("protocall: > (#1) POST /demo.v1.GreetService/Greet"));
    assert.ok(lines.includes("protocall: > (#1) Authorization: Bearer [redacted]"));
    assert.ok(lines.includes("protocall: > (#1) Content-Type: application/proto"));
    assert.ok(lines.some((l) => /^protocall: } \(#1\) \[\d+ bytes data\]$/.test(l)));
    assert.ok(lines.includes("protocall: < (#1) HTTP/1.1 200 OK"));
    assert.ok(lines.some((l) => /^protocall: \{ \(#1\) \[\d+ bytes data\]$/.test(l)));
    assert.ok(lines.includes("protocall: * (#1) Call complete"));
    assert.doesNotMatch(r.stderr, /s3cret/);
  });
});

describe("listing", () => {
  test("--list-services and --list-methods through reflection", async () => {
    const s = await curl({ url: server.url, listServices: true });
    assert.equal(s.code, 0, s.stderr);
    assert.equal(
      s.stdout,
      "demo.v1.DemoService\ndemo.v1.GreetService\ngrpc.reflection.v1.ServerReflection\ngrpc.reflection.v1alpha.ServerReflection\n",
    );
    const m = await curl({ url: server.url, listMethods: true });
    assert.match(m.stdout, /^demo\.v1\.DemoService\/Chat\ndemo\.v1\.DemoService\/Count\n/);
    assert.match(m.stdout, /\ndemo\.v1\.GreetService\/Greet\n/);
  });

  test("--list-services from --schema without a URL", async () => {
    const s = await curl({ schemas: [schema], listServices: true });
    assert.equal(s.stdout, "demo.v1.DemoService\ndemo.v1.GreetService\n");
  });

  test("reflection failure is one line and exit 1", async () => {
    const port = await freePort();
    const r = await curl({ url: `http://127.0.0.1:${port}/demo.v1.GreetService/Greet` });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^protocall: .*connection refused/);
  });
});

describe("TLS", () => {
  let pki: TestPki;
  let tlsServer: DemoServer;
  let tlsH1: DemoServer;
  let mtls: DemoServer;
  before(async () => {
    pki = await createTestPki();
    tlsServer = await startDemoServer({ tls: { cert: pki.server.cert, key: pki.server.key } });
    tlsH1 = await startDemoServer({ tls: { cert: pki.server.cert, key: pki.server.key }, http: "1.1" });
    mtls = await startDemoServer({
      tls: { cert: pki.server.cert, key: pki.server.key, ca: pki.ca.cert, requestClientCert: true },
    });
  });
  after(async () => {
    await tlsServer.close();
    await tlsH1.close();
    await mtls.close();
  });
  const inspect = (s: DemoServer) => `${s.url}/demo.v1.DemoService/Inspect`;

  test("--cacert verifies the server; ALPN picks h2", async () => {
    const r = await curl({ url: inspect(tlsServer), cacert: pki.ca.certPath, data: '{"headerNames":["x"]}' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).httpVersion, "2.0");
  });

  test("-v shows the TLS handshake as buf does", async () => {
    const r = await curl({
      url: inspect(tlsServer),
      cacert: pki.ca.certPath,
      schemas: [schema],
      verbose: true,
    });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.split("\n");
    const expected = [
      "protocall: * ALPN: offering h2,http/1.1",
      "protocall: * ALPN: server accepted h2",
      "protocall: * Server certificate:",
      "protocall: *   subject: CN=localhost",
      "protocall: *   subjectAltNames: [localhost, 127.0.0.1]",
      "protocall: *   issuer: CN=Protocall Test CA",
      "protocall: * Server certificate chain verified",
      "protocall: * Server certificate is valid for 127.0.0.1",
      "protocall: < (#1) HTTP/2.0 200 OK",
    ];
    for (const line of expected) assert.ok(lines.includes(line), `${line}\n${r.stderr}`);
    assert.ok(lines.some((l) => /^protocall: \* TLS connection using TLS 1\.[23] \/ TLS_\w+$/.test(l)));
    assert.ok(
      lines.some((l) => /^protocall: \* {3}start date: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/.test(l)),
    );
  });

  test("ALPN falls back to HTTP/1.1 when the server has no h2", async () => {
    const r = await curl({ url: inspect(tlsH1), cacert: pki.ca.certPath, schemas: [schema], data: "{}" });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).httpVersion, "1.1");
  });

  test("gRPC over HTTP/1.1 when the server negotiates only http/1.1, as buf", async () => {
    const r = await curl({
      url: `${tlsH1.url}/demo.v1.GreetService/Greet`,
      protocol: "grpc",
      cacert: pki.ca.certPath,
      schemas: [schema],
      data: '{"name":"h1"}',
    });
    assert.equal(r.stdout, '{\n  "greeting": "Hello, h1!"\n}\n', r.stderr);
  });

  test("an unknown authority is unavailable", async () => {
    const r = await curl({ url: inspect(tlsServer), cacert: pki.otherCa.certPath, schemas: [schema] });
    assert.equal(r.code, 112);
    assert.match(r.stderr, /certificate signed by unknown authority/);
  });

  test("-k skips verification", async () => {
    const r = await curl({ url: inspect(tlsServer), insecure: true, schemas: [schema] });
    assert.equal(r.code, 0, r.stderr);
  });

  test("--servername is the name verified", async () => {
    const bad = await curl({
      url: inspect(tlsServer),
      cacert: pki.ca.certPath,
      servername: "wrong.test",
      schemas: [schema],
    });
    assert.equal(bad.code, 112);
    assert.equal(
      bad.stderr,
      '{\n   "code": "unavailable",\n   "message": "x509: certificate is valid for localhost, not wrong.test"\n}\n',
    );
    const url = inspect(tlsServer).replace("127.0.0.1", "localhost");
    const good = await curl({ url, cacert: pki.ca.certPath, servername: "localhost", schemas: [schema] });
    assert.equal(good.code, 0, good.stderr);
  });

  test("mutual TLS with --cert and --key", async () => {
    const r = await curl({
      url: inspect(mtls),
      cacert: pki.ca.certPath,
      cert: pki.client.certPath,
      key: pki.client.keyPath,
      schemas: [schema],
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).clientCertificate, "protocall-test-client");
  });
});

describe("unix sockets and HTTP/3", () => {
  test("--unix-socket dials the socket", async () => {
    const socket = join(dir, "demo.sock");
    const s = await startDemoServer({ unixSocket: socket });
    try {
      const r = await curl({
        url: "http://localhost/demo.v1.GreetService/Greet",
        unixSocket: socket,
        data: '{"name":"sock"}',
      });
      assert.equal(r.stdout, '{\n  "greeting": "Hello, sock!"\n}\n', r.stderr);
    } finally {
      await s.close();
    }
  });

  test("--http3 fails with a clear error, exit 1", async () => {
    const r = await curl({
      url: "https://127.0.0.1:1/demo.v1.GreetService/Greet",
      http3: true,
      schemas: [schema],
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^protocall: --http3 is not supported/);
  });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
