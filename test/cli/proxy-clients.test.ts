// Clients nobody here wrote, through `protocall proxy` in front of the grpc-go interop server (h2c):
// grpc-go's interop client passes its test cases (each streaming shape, large messages, a status with
// a message, echoed metadata), and a grpc Python (C-core) client running the same cases prints the same
// answers through the proxy as from the server directly. Every call is stored.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { readCalls } from "../../src/core/proxy/call-store";
import { type CliServer, startCliServer, waitFor } from "../core/webhooks/support";
import { repoRoot, runProcess } from "../support/cli";
import {
  buildInteropServers,
  goClientCases,
  type InteropBuild,
  type InteropServer,
  runGoClient,
  startInteropServer,
} from "../support/interop-servers";
import { createTestPki } from "../support/tls";

const work = mkdtempSync(join(tmpdir(), "protocall-proxy-clients-"));
const store = join(work, "calls.store");
let build: InteropBuild;
let server: InteropServer;
let proxy: CliServer;

before(async () => {
  const [pki, b] = await Promise.all([createTestPki(), buildInteropServers()]);
  build = b;
  server = await startInteropServer("grpc-go", pki);
  proxy = await startCliServer(["proxy", "--upstream", server.plainUrl, "--store", store]);
});
after(async () => {
  await proxy?.stop();
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

test("grpc-go's interop client passes every case through the proxy", { timeout: 180_000 }, async () => {
  const port = new URL(proxy.url).port;
  const r = await runGoClient(build, port);
  assert.equal(r.code, 0, `${r.stderr}\n${proxy.stderr()}`);
  assert.deepEqual(
    r.stdout.trim().split("\n"),
    goClientCases.map((c) => `ok ${c}`),
  );
  // Each call is stored, the streams with their messages.
  const calls = await waitFor(() => {
    const all = readCalls(store);
    return all.some((c) => c.method === "grpc.testing.TestService/FullDuplexCall") ? all : undefined;
  }, "the interop calls stored");
  const pingPong = calls.find((c) => c.method === "grpc.testing.TestService/FullDuplexCall");
  assert.equal(pingPong?.status, "ok");
  assert.equal(pingPong?.requestMessages.length, 4);
  assert.equal(pingPong?.responseMessages.length, 4);
});

test("a grpc Python client gets the same answers through the proxy as from the server", {
  timeout: 120_000,
}, async () => {
  const client = (address: string) =>
    runProcess(
      "/usr/bin/python3",
      [join(repoRoot, "test/support/interop/grpc-python/interop-client.py"), build.pythonGenerated, address],
      { timeoutMs: 60_000 },
    );
  const direct = await client(new URL(server.plainUrl).host);
  const proxied = await client(new URL(proxy.url).host);
  assert.equal(direct.code, 0, direct.stderr);
  assert.equal(proxied.code, 0, `${proxied.stderr}\n${proxy.stderr()}`);
  assert.equal(proxied.stdout, direct.stdout);
  const answers = Object.assign(
    {},
    ...proxied.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l)),
  );
  assert.equal(answers.large_unary.size, 314159);
  assert.equal(answers.client_streaming, 74922);
  assert.deepEqual(
    answers.server_streaming.map((p: { size: number }) => p.size),
    [31415, 9, 2653, 58979],
  );
  assert.deepEqual(
    answers.ping_pong.map((p: { size: number }) => p.size),
    [31415, 9, 2653, 58979],
  );
  assert.deepEqual(answers.status_code_and_message, { code: "UNKNOWN", details: "test status message" });
  assert.deepEqual(answers.custom_metadata, {
    initial: [["x-grpc-test-echo-initial", "test_initial_metadata_value"]],
    trailing: [["x-grpc-test-echo-trailing-bin", "ababab"]],
  });
});
