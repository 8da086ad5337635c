// `protocall proxy` end to end: the real CLI between the real `buf curl` and our demo server. Through
// the proxy, buf gets the same stdout, stderr and exit code as calling the server directly (every
// protocol, unary and each stream shape, errors with details); each call is stored decoded, shown with
// secrets redacted, and exported as a .rpc request that passes `protocall run` against the server.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type ProxiedCall, readCalls } from "../../src/core/proxy/call-store";
import { type CliServer, startCliServer, waitFor } from "../core/webhooks/support";
import { runBufCurl } from "../support/buf";
import { repoRoot, runCli } from "../support/cli";
import { type DemoServer, startDemoServer } from "../support/servers";

const work = mkdtempSync(join(tmpdir(), "protocall-proxy-cli-"));
const store = join(work, "calls.store");
let demo: DemoServer;
let proxy: CliServer;

before(async () => {
  demo = await startDemoServer();
  proxy = await startCliServer(["proxy", "--upstream", demo.url, "--store", store]);
});
after(async () => {
  await proxy?.stop();
  await demo?.close();
  rmSync(work, { recursive: true, force: true });
});

// buf curl uses HTTP/1.1 for an http URL only with a --schema (reflection needs HTTP/2).
const schema = join(repoRoot, "examples/proto");
const protocols: [string, string[]][] = [
  ["connect over HTTP/1.1", ["--protocol", "connect", "--schema", schema]],
  ["connect over h2c", ["--protocol", "connect", "--http2-prior-knowledge"]],
  ["grpc", ["--protocol", "grpc", "--http2-prior-knowledge"]],
  ["grpcweb over HTTP/1.1", ["--protocol", "grpcweb", "--schema", schema]],
  ["grpcweb over h2c", ["--protocol", "grpcweb", "--http2-prior-knowledge"]],
];

const calls: [string, string, string][] = [
  ["unary", "demo.v1.GreetService/Greet", '{"name":"proxy"}'],
  ["server stream", "demo.v1.DemoService/Count", '{"count":5,"text":"tick"}'],
  [
    "error with details",
    "demo.v1.DemoService/Fail",
    '{"code":"CODE_NOT_FOUND","message":"gone","details":["DETAIL_ERROR_INFO"]}',
  ],
];

/** Waits until the store holds a call that `match` accepts (stored before its line is printed). */
function storedCall(match: (c: ProxiedCall) => boolean, what: string): Promise<ProxiedCall> {
  return waitFor(() => readCalls(store).find(match), what);
}

function callLines(): string[] {
  return proxy
    .stderr()
    .split("\n")
    .filter((l) => /^#\d+ /.test(l));
}

describe("buf curl through the proxy gets what it gets from the server", () => {
  for (const [name, flags] of protocols) {
    for (const [shape, method, data] of calls) {
      test(`${name}: ${shape}`, async () => {
        const direct = await runBufCurl([...flags, "-d", data, `${demo.url}/${method}`]);
        const proxied = await runBufCurl([...flags, "-d", data, `${proxy.url}/${method}`]);
        assert.equal(proxied.code, direct.code, proxied.stderr);
        assert.equal(proxied.stdout, direct.stdout);
        assert.equal(proxied.stderr, direct.stderr);
        assert.ok(direct.stdout.length + direct.stderr.length > 0, "the call printed nothing");
      });
    }
  }

  test("grpc client stream and bidi stream", async () => {
    for (const method of ["demo.v1.DemoService/Sum", "demo.v1.DemoService/Chat"]) {
      const data = method.endsWith("Sum")
        ? '{"number":1}\n{"number":2}\n{"number":39}'
        : '{"text":"a"}\n{"text":"b"}';
      const flags = ["--protocol", "grpc", "--http2-prior-knowledge", "-d", data];
      const direct = await runBufCurl([...flags, `${demo.url}/${method}`]);
      const proxied = await runBufCurl([...flags, `${proxy.url}/${method}`]);
      assert.equal(direct.code, 0, direct.stderr);
      assert.equal(proxied.code, direct.code, proxied.stderr);
      assert.equal(proxied.stdout, direct.stdout);
    }
  });
});

describe("the store and what is made of it", () => {
  test("a call is stored decoded, printed as one line, and shown with its secrets redacted", async () => {
    const r = await runBufCurl([
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "-H",
      "Authorization: Bearer very-secret-token",
      "-d",
      '{"name":"stored"}',
      `${proxy.url}/demo.v1.GreetService/Greet`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const call = await storedCall(
      (c) =>
        c.method === "demo.v1.GreetService/Greet" &&
        JSON.stringify(c.decoded?.request) === '[{"name":"stored"}]',
      "the stored call",
    );
    await waitFor(
      () => callLines().some((l) => l.startsWith(`#${call.id} demo.v1.GreetService/Greet grpc ok `)),
      "its line",
    );
    assert.deepEqual(call.decoded?.response, [{ greeting: "Hello, stored!" }]);
    assert.equal(call.status, "ok");
    assert.equal(call.protocol, "grpc");
    assert.equal(call.trailers["grpc-status"], "0");
    const shown = await runCli(["proxy", "show", String(call.id), "--store", store]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(JSON.parse(shown.stdout).requestHeaders.authorization, "Bearer [redacted]");
    assert.ok(!shown.stdout.includes("very-secret-token"));
    const curl = await runCli(["proxy", "export", String(call.id), "--as", "buf-curl", "--store", store]);
    assert.equal(curl.code, 0, curl.stderr);
    assert.ok(!curl.stdout.includes("very-secret-token"));
    assert.match(
      curl.stdout,
      /^buf curl --protocol grpc --http2-prior-knowledge -H 'authorization: Bearer \[redacted\]' -d '\{"name":"stored"\}' http:\/\/127\.0\.0\.1:\d+\/demo\.v1\.GreetService\/Greet\n$/,
    );
  });

  test("an exported call (success, error, server stream) passes `protocall run` against the server", async () => {
    const wanted: [string[], string, string][] = [
      [["--protocol", "connect"], "demo.v1.GreetService/Greet", '{"name":"exported"}'],
      [
        ["--protocol", "grpcweb"],
        "demo.v1.DemoService/Fail",
        '{"code":"CODE_PERMISSION_DENIED","message":"no"}',
      ],
      [
        ["--protocol", "grpc", "--http2-prior-knowledge"],
        "demo.v1.DemoService/Count",
        '{"count":3,"text":"exported"}',
      ],
    ];
    for (const [flags, method, data] of wanted)
      await runBufCurl([...flags, "-d", data, `${proxy.url}/${method}`]);
    for (const [, method, data] of wanted) {
      const call = await storedCall(
        (c) => c.method === method && JSON.stringify(c.decoded?.request) === `[${data}]`,
        `the stored call of ${method} with ${data}`,
      );
      const exported = await runCli(["proxy", "export", String(call.id), "--store", store]);
      assert.equal(exported.code, 0, exported.stderr);
      assert.match(exported.stdout, /# @assert (status == ok|error\.code == permission_denied)/);
      const file = join(work, `call-${call.id}.rpc`);
      writeFileSync(file, exported.stdout);
      const run = await runCli(["run", file]);
      assert.equal(run.code, 0, `${exported.stdout}\n${run.stdout}\n${run.stderr}`);
    }
  });

  test("an exported .rpc fails `protocall run` when the answer changes", async () => {
    const r = await runBufCurl(["-d", '{"name":"changed"}', `${proxy.url}/demo.v1.GreetService/Greet`]);
    assert.equal(r.code, 0, r.stderr);
    const call = await storedCall(
      (c) => JSON.stringify(c.decoded?.request) === '[{"name":"changed"}]',
      "the call",
    );
    const exported = await runCli(["proxy", "export", String(call.id), "--store", store]);
    const file = join(work, "changed.rpc");
    writeFileSync(file, exported.stdout.replace('{"name":"changed"}', '{"name":"other"}'));
    const run = await runCli(["run", file]);
    assert.notEqual(run.code, 0, run.stderr);
  });

  test("an upstream that cannot be reached is `unavailable` in the caller's protocol, naming it", async () => {
    const dead = await startCliServer([
      "proxy",
      "--upstream",
      "http://127.0.0.1:1",
      "--store",
      join(work, "dead.store"),
    ]);
    try {
      for (const [name, flags] of protocols) {
        const r = await runBufCurl([
          ...flags,
          "--schema",
          schema,
          "-d",
          "{}",
          `${dead.url}/demo.v1.GreetService/Greet`,
        ]);
        assert.equal(r.code, 14 * 8, `${name}: ${r.stderr}`);
        assert.match(
          r.stderr,
          /"message": "protocall proxy: the upstream http:\/\/127\.0\.0\.1:1 did not answer: .*ECONNREFUSED/,
          name,
        );
      }
    } finally {
      await dead.stop();
    }
  });

  test("a call whose deadline runs out is stored as deadline_exceeded", async () => {
    const slow = '{"count": 5, "delayMs": 800, "text": "slow"}';
    const r = await runBufCurl([
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      "--timeout",
      "1s",
      "-d",
      slow,
      `${proxy.url}/demo.v1.DemoService/Count`,
    ]);
    assert.equal(r.code, 4 * 8, r.stderr);
    const timedOut = await storedCall(
      (c) => c.method === "demo.v1.DemoService/Count" && c.requestHeaders["grpc-timeout"] !== undefined,
      "the call that timed out",
    );
    assert.equal(timedOut.status, "deadline_exceeded");
  });

  test("show and export explain a missing call or store", async () => {
    const missing = await runCli(["proxy", "show", "99999", "--store", store]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no call 99999 in the store/);
    const noStore = await runCli(["proxy", "list", "--store", join(work, "none.store")]);
    assert.equal(noStore.code, 1);
    assert.match(
      noStore.stderr,
      /no call store at .*none\.store: run `protocall proxy --upstream URL` first/,
    );
    const badUpstream = await runCli(["proxy", "--upstream", "ftp://x", "--store", join(work, "x.store")]);
    assert.equal(badUpstream.code, 1);
    assert.match(badUpstream.stderr, /--upstream must start with http:\/\/ or https:\/\//);
  });
});
