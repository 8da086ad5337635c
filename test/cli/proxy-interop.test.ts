// `protocall proxy` in front of a server nobody on this project wrote: the grpc-go interop server over
// TLS (trusted with --cacert), with `buf curl` calling it directly and through the proxy. Same stdout,
// stderr and exit code for the interop cases that curl flags express (unary, large messages, each
// stream shape, a status with a message, a deadline), and a stream is stored decoded through the
// server's reflection.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { readCalls } from "../../src/core/proxy/call-store";
import { type CliServer, startCliServer, waitFor } from "../core/webhooks/support";
import { runBufCurl } from "../support/buf";
import { buildInteropServers, type InteropServer, startInteropServer } from "../support/interop-servers";
import { createTestPki, type TestPki } from "../support/tls";

const work = mkdtempSync(join(tmpdir(), "protocall-proxy-interop-"));
const store = join(work, "calls.store");
let pki: TestPki;
let server: InteropServer;
let proxy: CliServer;

before(async () => {
  const [p] = await Promise.all([createTestPki(), buildInteropServers()]);
  pki = p;
  server = await startInteropServer("grpc-go", pki);
  proxy = await startCliServer([
    "proxy",
    "--upstream",
    server.tlsUrl,
    "--cacert",
    pki.ca.certPath,
    "--store",
    store,
  ]);
});
after(async () => {
  await proxy?.stop();
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

const zeros = (n: number) => Buffer.alloc(n).toString("base64");
const cases: [string, string, string[]][] = [
  ["empty_unary", "EmptyCall", ["-d", "{}"]],
  ["large_unary", "UnaryCall", ["-d", "@-"]],
  [
    "client_streaming",
    "StreamingInputCall",
    ["-d", [27182, 8, 1828, 45904].map((n) => JSON.stringify({ payload: { body: zeros(n) } })).join("\n")],
  ],
  [
    "server_streaming",
    "StreamingOutputCall",
    ["-d", JSON.stringify({ responseParameters: [31415, 9, 2653, 58979].map((size) => ({ size })) })],
  ],
  [
    "ping_pong",
    "FullDuplexCall",
    ["-d", [31415, 9, 2653].map((size) => JSON.stringify({ responseParameters: [{ size }] })).join("\n")],
  ],
  [
    "status_code_and_message",
    "UnaryCall",
    ["-d", JSON.stringify({ code: 2, message: "test status message" })],
  ],
  [
    "timeout_on_sleeping_server",
    "FullDuplexCall",
    ["--timeout", "1s", "-d", JSON.stringify({ responseParameters: [{ size: 1, intervalUs: 5_000_000 }] })],
  ],
];

for (const [name, method, args] of cases) {
  test(`grpc-go ${name}: the same through the proxy`, async () => {
    const path = `grpc.testing.TestService/${method}`;
    const direct = await runBufCurl([
      "--protocol",
      "grpc",
      "--cacert",
      pki.ca.certPath,
      ...args,
      `${server.tlsUrl}/${path}`,
    ]);
    const proxied = await runBufCurl(["--protocol", "grpc", ...args, `${proxy.url}/${path}`]);
    assert.equal(proxied.code, direct.code, proxied.stderr);
    assert.equal(proxied.stdout, direct.stdout);
    assert.equal(proxied.stderr, direct.stderr);
  });
}

test("the interop calls are stored decoded through the server's reflection", async () => {
  const call = await waitFor(
    () =>
      readCalls(store).find(
        (c) => c.method === "grpc.testing.TestService/StreamingOutputCall" && c.status === "ok",
      ),
    "the server stream stored",
  );
  assert.equal(call.responseMessages.length, 4);
  const sizes = ((call.decoded?.response ?? []) as { payload: { body?: string } }[]).map(
    (m) => Buffer.from(m.payload.body ?? "", "base64").length,
  );
  assert.deepEqual(sizes, [31415, 9, 2653, 58979]);
  // The call whose deadline passed before the server answered: the client gave up, nothing came back.
  const late = await waitFor(
    () => readCalls(store).find((c) => JSON.stringify(c.decoded?.request).includes('"intervalUs":5000000')),
    "the call past its deadline stored",
  );
  assert.ok(["canceled", "deadline_exceeded"].includes(late.status), late.status);
  assert.equal(late.requestHeaders["grpc-timeout"] !== undefined, true);
});
