// A client nobody here wrote gets the answers the stubs say: grpc-go (Debian's golang-google-grpc-dev)
// runs the gRPC interop test goClientCases (test/support/interop/grpc-go-client/main.go, built by
// scripts/build-interop.sh) against `protocall mock` serving the interop schema with stubs
// that answer as an interop server would: all four streaming shapes, an error status, and request
// metadata echoed into response headers and trailers.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { startCliServer } from "../core/webhooks/support";
import { buildInteropServers, goClientCases, runGoClient } from "../support/interop-servers";

/** `size` zero bytes as proto JSON writes bytes. */
const zeros = (size: number) => Buffer.alloc(size).toString("base64");

const stubs = `### empty_unary
/grpc.testing.TestService/EmptyCall

>>> ok

{}

### custom_metadata: the request's metadata echoed
# @priority 10
# @match headers["x-grpc-test-echo-initial"] exists
/grpc.testing.TestService/UnaryCall

{"responseSize": 314159}

>>> ok
x-grpc-test-echo-initial: {{headers["x-grpc-test-echo-initial"]}}
# @trailer x-grpc-test-echo-trailing-bin: {{headers["x-grpc-test-echo-trailing-bin"]}}

{"payload": {"type": "COMPRESSABLE", "body": "${zeros(314159)}"}}

### large_unary
/grpc.testing.TestService/UnaryCall

{"responseSize": 314159}

>>> ok

{"payload": {"type": "COMPRESSABLE", "body": "${zeros(314159)}"}}

### status_code_and_message
/grpc.testing.TestService/UnaryCall

{"responseStatus": {"code": 2}}

>>> unknown "{{request.responseStatus.message}}"

### client_streaming
# @match requests.length == 4
/grpc.testing.TestService/StreamingInputCall

>>> ok

{"aggregatedPayloadSize": 74922}

### server_streaming
/grpc.testing.TestService/StreamingOutputCall

>>> ok

{"payload": {"type": "COMPRESSABLE", "body": "${zeros(31415)}"}}
{"payload": {"type": "COMPRESSABLE", "body": "${zeros(9)}"}}
{"payload": {"type": "COMPRESSABLE", "body": "${zeros(2653)}"}}
{"payload": {"type": "COMPRESSABLE", "body": "${zeros(58979)}"}}

### status_code_and_message, streamed
# @priority 10
/grpc.testing.TestService/FullDuplexCall

{"responseStatus": {"code": 2}}

>>> unknown "{{request.responseStatus.message}}"

### ping_pong: an answer per message, in order
# @per-message
/grpc.testing.TestService/FullDuplexCall

>>> ok

{"payload": {"type": "COMPRESSABLE", "body": "${zeros(31415)}"}}
>>> ok

{"payload": {"type": "COMPRESSABLE", "body": "${zeros(9)}"}}
>>> ok

{"payload": {"type": "COMPRESSABLE", "body": "${zeros(2653)}"}}
>>> ok

{"payload": {"type": "COMPRESSABLE", "body": "${zeros(58979)}"}}
`;

test("a grpc-go client passes the interop test goClientCases against stubs: every streaming shape, an error, metadata", {
  timeout: 300_000,
}, async () => {
  const build = await buildInteropServers();
  const dir = mkdtempSync(join(tmpdir(), "protocall-mock-go-"));
  writeFileSync(join(dir, "interop.rpc"), stubs);
  const mock = await startCliServer(["mock", dir, "--schema", build.descriptorSet, "--no-watch"], {}, 60_000);
  try {
    const port = new URL(mock.url).port;
    const r = await runGoClient(build, port);
    assert.equal(r.code, 0, `${r.stderr}\n${mock.stderr()}`);
    assert.deepEqual(
      r.stdout.trim().split("\n"),
      goClientCases.map((c) => `ok ${c}`),
    );
    // The stubs answered, not generated messages.
    assert.doesNotMatch(mock.stderr(), /← generated/);
  } finally {
    await mock.stop();
  }
});
