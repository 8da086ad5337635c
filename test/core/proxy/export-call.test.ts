// Exporting a stored call as a stub: a call that ended without an RPC status (an HTTP error from
// something that is not an RPC server) is refused with what to do instead, not written as a stub
// the mock could not read; a call with a status is written in the stub format.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ProxiedCall } from "../../../src/core/proxy/call-store";
import { exportCall } from "../../../src/core/proxy/export-call";
import { parseStubFile } from "../../../src/core/rpcfile/stub-syntax";

function call(status: string, httpStatus: number): ProxiedCall {
  return {
    id: 4,
    startedAt: "2026-01-02T03:04:05.000Z",
    upstream: "http://127.0.0.1:8080",
    method: "demo.v1.GreetService/Greet",
    protocol: "connect",
    httpVersion: "1.1",
    status,
    ...(status !== "ok" ? { statusMessage: "no such user" } : {}),
    httpStatus,
    durationMs: 1,
    requestBytes: 10,
    responseBytes: 10,
    requestHeaders: { "content-type": "application/json" },
    responseHeaders: { "x-served-by": "api-1", "trailer-x-cost": "3" },
    trailers: {},
    requestMessages: [],
    responseMessages: [],
    truncated: false,
    decoded: { request: [{ name: "bob" }], response: [{ greeting: "Hello, bob!" }], kind: "unary" },
  };
}

test("a call without an RPC status is not exported as a stub, and says why", () => {
  assert.throws(
    () => exportCall(call("http 502", 502), "stub"),
    /call 4 ended without an RPC status \(http 502\): .*--as rpc/,
  );
});

test("a stub is written in the stub format: request, status, headers, trailers, message", () => {
  const ok = exportCall(call("ok", 200), "stub");
  const parsed = parseStubFile(ok);
  assert.deepEqual(parsed.diagnostics, []);
  assert.equal(parsed.stubs.length, 1);
  assert.match(
    ok,
    /^\/demo\.v1\.GreetService\/Greet\n\n\{"name":"bob"\}\n\n>>> ok\nx-served-by: api-1\n# @trailer x-cost: 3\n\n\{"greeting":"Hello, bob!"\}\n$/m,
  );
  const failed = exportCall(call("not_found", 404), "stub");
  assert.match(failed, /^>>> not_found "no such user"$/m);
  assert.doesNotMatch(failed, /greeting/, "a Connect unary error's body is not a message");
});
