// `protocall mock` as users run it, called by the real `buf curl` over Connect, gRPC and gRPC-Web
// (unary and every streaming shape), answering from the example stubs (examples/mocks) and the
// example workspace's schema; its --help, its line per call, and malformed stub files.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { startCliServer } from "../core/webhooks/support";
import { runBufCurl } from "../support/buf";
import { runCli } from "../support/cli";

type CliServer = Awaited<ReturnType<typeof startCliServer>>;

const protocolArgs: Record<string, string[]> = {
  connect: [],
  grpc: ["--protocol", "grpc", "--http2-prior-knowledge"],
  grpcweb: ["--protocol", "grpcweb"],
};

describe("protocall mock with the example stubs, called by buf curl", () => {
  let mock: CliServer;
  before(async () => {
    mock = await startCliServer(["mock", "examples/mocks", "--schema", "examples"], {}, 60_000);
  });
  after(() => mock.stop());

  test("unary: the stub's message, headers and templates, over Connect, gRPC and gRPC-Web", async () => {
    for (const [protocol, args] of Object.entries(protocolArgs)) {
      const r = await runBufCurl([
        ...args,
        "-v",
        "-d",
        '{"name": "world"}',
        `${mock.url}/demo.v1.GreetService/Greet`,
      ]);
      assert.equal(r.code, 0, `${protocol}: ${r.stderr}`);
      assert.deepEqual(JSON.parse(r.stdout), { greeting: "Hello, world!" });
      assert.match(r.stderr, /< (\(#\d+\) )?X-Served-By: protocall-mock/i);
      const tenant = await runBufCurl([
        ...args,
        "-H",
        "x-tenant: acme",
        "-d",
        '{"name": "bob"}',
        `${mock.url}/demo.v1.GreetService/Greet`,
      ]);
      assert.deepEqual(JSON.parse(tenant.stdout), { greeting: "Hello, bob of acme!" }, protocol);
    }
  });

  test("errors: code, message, typed details and the exit code buf gives them", async () => {
    for (const [protocol, args] of Object.entries(protocolArgs)) {
      const r = await runBufCurl([
        ...args,
        "-d",
        '{"message": "quota"}',
        `${mock.url}/demo.v1.DemoService/Fail`,
      ]);
      assert.equal(r.code, 8 * 8, `${protocol}: resource_exhausted × 8`);
      const error = JSON.parse(r.stderr);
      assert.equal(error.code, "resource_exhausted");
      assert.equal(error.message, "quota exceeded for quota");
      assert.deepEqual(
        error.details.map((d: { type: string }) => d.type),
        ["demo.v1.QuotaExceeded", "google.rpc.ErrorInfo"],
      );
      // The Connect protocol carries each detail's JSON as "debug" too.
      if (protocol === "connect") {
        assert.deepEqual(error.details[0].debug, { resource: "calls", limit: "100", retryAfter: "60s" });
      }
    }
  });

  test("nothing matched: buf curl shows the closest stub and the check it failed", async () => {
    const r = await runBufCurl([
      "-d",
      '{"name": "Bob"}',
      "-H",
      "x-tenant: acme",
      `${mock.url}/demo.v1.GreetService/Greet`,
    ]);
    assert.equal(r.code, 5 * 8);
    const error = JSON.parse(r.stderr);
    assert.match(
      error.message,
      /examples\/mocks\/greet\.rpc:18: request\.name matches \/\^\[a-z\]\+\$\/, got "Bob"/,
    );
    assert.match(error.message, /examples\/mocks\/greet\.rpc:9: request\.name == "world", got "Bob"/);
  });

  test("streams: server stream, client stream and bidirectional, over each protocol that carries them", async () => {
    for (const [protocol, args] of Object.entries(protocolArgs)) {
      const count = await runBufCurl([
        ...args,
        "-d",
        '{"count": 3}',
        `${mock.url}/demo.v1.DemoService/Count`,
      ]);
      assert.equal(count.code, 0, `${protocol}: ${count.stderr}`);
      assert.deepEqual(
        count.stdout
          .trim()
          .split(/\n(?=\{)/)
          .map((m) => JSON.parse(m).text),
        ["one", "two", "three"],
        protocol,
      );
      const sum = await runBufCurl([
        ...args,
        "-v",
        "-d",
        '{"number": 1} {"number": 2} {"number": 3}',
        `${mock.url}/demo.v1.DemoService/Sum`,
      ]);
      assert.equal(sum.code, 0, `${protocol}: ${sum.stderr}`);
      assert.deepEqual(JSON.parse(sum.stdout), { sum: "42", count: 3 });
      // buf -v prints the trailers of gRPC (not those in a Connect or gRPC-Web stream's last frame;
      // the core tests read those with connect-node's clients).
      if (protocol === "grpc") assert.match(sum.stderr, /X-Messages: 3/i, protocol);
    }
    for (const args of [["--http2-prior-knowledge"], protocolArgs.grpc]) {
      const chat = await runBufCurl([
        ...args,
        "-d",
        '{"text": "ping"} {"text": "hi"}',
        `${mock.url}/demo.v1.DemoService/Chat`,
      ]);
      assert.equal(chat.code, 0, chat.stderr);
      assert.deepEqual(
        chat.stdout
          .trim()
          .split(/\n(?=\{)/)
          .map((m) => JSON.parse(m).text),
        ["pong", "you said hi"],
      );
    }
  });

  test("reflection: buf curl lists the services and calls a method without a schema of its own", async () => {
    const r = await runBufCurl(["--list-services", mock.url]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split("\n").sort(), [
      "demo.v1.DemoService",
      "demo.v1.GreetService",
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
    ]);
  });

  test("a generated answer for a method without stubs; one line per call on stderr", async () => {
    const r = await runBufCurl([
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "-d",
      "{}",
      `${mock.url}/demo.v1.DemoService/Sample`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(Object.keys(JSON.parse(r.stdout)).length > 10);
    const deadline = Date.now() + 10_000;
    while (
      !/DemoService\/Sample ← generated ok \d+ms \(grpc\)/.test(mock.stderr()) &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.match(mock.stderr(), /demo\.v1\.DemoService\/Sample ← generated ok \d+ms \(grpc\)/);
    assert.match(
      mock.stderr(),
      /demo\.v1\.GreetService\/Greet ← examples\/mocks\/greet\.rpc:7 "greet world" ok \d+ms \(connect\)/,
    );
  });
});

test("--tls serves https with a generated certificate that buf curl trusts with --cacert", async () => {
  const config = mkdtempSync(join(tmpdir(), "protocall-mock-tls-"));
  const mock = await startCliServer(
    ["mock", "examples/mocks", "--schema", "examples", "--tls", "--no-watch"],
    { XDG_CONFIG_HOME: config },
    60_000,
  );
  try {
    assert.match(mock.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const cert = join(config, "protocall", "mock-cert.pem");
    for (const args of [[], ["--protocol", "grpc"]]) {
      const r = await runBufCurl([
        ...args,
        "--cacert",
        cert,
        "-d",
        '{"name": "world"}',
        `${mock.url}/demo.v1.GreetService/Greet`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { greeting: "Hello, world!" });
    }
  } finally {
    await mock.stop();
  }
});

test("a port in use is a one-line error that says how to fix it", async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  const { port } = taken.address() as AddressInfo;
  try {
    const r = await runCli(["mock", "--schema", "examples", "--port", String(port)], { timeoutMs: 60_000 });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim().split("\n").at(-1),
      `protocall: cannot listen on 127.0.0.1:${port}: the port is in use; choose another with --port (0: any free port)`,
    );
  } finally {
    taken.close();
  }
});

test("--help describes the stubs and the admin path", async () => {
  const r = await runCli(["mock", "--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /Usage: protocall mock \[FILES\|DIRS\] \[--schema SCHEMA\]\.\.\./);
  assert.match(r.stdout, /POST \/\.protocall\/mock\/reset/);
  assert.match(r.stdout, /--no-generate/);
});

test("protocall check reports a stub's misspelled fields in the words and at the places the mock does", async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-mock-check-"));
  const file = join(dir, "bad.rpc");
  writeFileSync(file, '/demo.v1.GreetService/Greet\n\n{"nme": "x"}\n\n>>> ok\n\n{"greting": "x"}\n');
  const check = await runCli(["check", file, "--schema", "examples"], { timeoutMs: 60_000 });
  assert.equal(check.code, 1, check.stderr);
  const mock = await runCli(["mock", file, "--schema", "examples"], { timeoutMs: 60_000 });
  assert.equal(mock.code, 1);
  for (const [where, field, type, meant] of [
    ["3:2", "nme", "GreetRequest", "name"],
    ["7:2", "greting", "GreetResponse", "greeting"],
  ]) {
    const message = `unknown field "${field}" in message demo.v1.${type} (did you mean "${meant}"?)`;
    assert.ok(check.stdout.includes(`bad.rpc:${where}: error: ${message}`), check.stdout);
    assert.ok(mock.stderr.includes(`bad.rpc:${where}: ${message}`), mock.stderr);
  }
});

test("a malformed stub file stops the start with its errors at file:line:col, and no stack trace", async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-mock-cli-"));
  writeFileSync(join(dir, "bad.rpc"), '/demo.v1.GreetService/Greet\n\n>>> ok\n\n{"greting": "x"}\n');
  const r = await runCli(["mock", dir, "--schema", "examples"], { timeoutMs: 60_000 });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /bad\.rpc:5:2: unknown field "greting" in message demo\.v1\.GreetResponse \(did you mean "greeting"\?\)/,
  );
  assert.match(r.stderr, /protocall: the stub files have 1 error \(above\); fix them and start again/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  const missing = await runCli(["mock", join(dir, "nope.rpc"), "--schema", "examples"], {
    timeoutMs: 60_000,
  });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /stub file or directory .*nope\.rpc does not exist/);
});
