// The status a stored call gets when its stream was reset before the answer ended: the caller's reset
// is its cancel, the upstream's is mapped from the HTTP/2 code as gRPC maps it; a status the answer
// did carry (grpc-status in the trailers) wins.
import assert from "node:assert/strict";
import { test } from "node:test";
import { callEnd, requestTimeoutMs, resetStatus } from "../../../src/core/proxy/call-status";

const answer = {
  httpStatus: 200,
  responseHeaders: { "content-type": "application/grpc" },
  trailers: {},
  controls: [],
  messages: [Buffer.from("partial")],
};

test("a stream the caller reset is canceled, on every protocol", () => {
  for (const protocol of ["grpc", "grpcweb", "connect"] as const) {
    const end = callEnd({ ...answer, protocol, reset: { by: "client", code: 0x8 } });
    assert.equal(end.status, "canceled", protocol);
  }
});

test("a caller's reset when its timeout ran out is its deadline; one well before it is a cancel", () => {
  const reset = (elapsedMs: number) => ({ by: "client" as const, code: 0x8, timeoutMs: 1000, elapsedMs });
  assert.equal(callEnd({ ...answer, protocol: "grpc", reset: reset(960) }).status, "deadline_exceeded");
  assert.equal(callEnd({ ...answer, protocol: "grpc", reset: reset(1200) }).status, "deadline_exceeded");
  assert.equal(callEnd({ ...answer, protocol: "grpc", reset: reset(300) }).status, "canceled");
});

test("the timeout of a call comes from grpc-timeout or connect-timeout-ms", () => {
  assert.equal(requestTimeoutMs({ "grpc-timeout": "1000000u" }), 1000);
  assert.equal(requestTimeoutMs({ "grpc-timeout": "2S" }), 2000);
  assert.equal(requestTimeoutMs({ "grpc-timeout": "1H" }), 3_600_000);
  assert.equal(requestTimeoutMs({ "connect-timeout-ms": "250" }), 250);
  assert.equal(requestTimeoutMs({ "grpc-timeout": "soon" }), undefined);
  assert.equal(requestTimeoutMs({}), undefined);
});

test("a stream the upstream reset takes gRPC's mapping of the HTTP/2 code", () => {
  assert.equal(resetStatus({ by: "upstream", code: 0x8 }), "canceled");
  assert.equal(resetStatus({ by: "upstream", code: 0x7 }), "unavailable");
  assert.equal(resetStatus({ by: "upstream", code: 0xb }), "resource_exhausted");
  assert.equal(resetStatus({ by: "upstream", code: 0xc }), "permission_denied");
  assert.equal(resetStatus({ by: "upstream", code: 0x2 }), "internal");
  assert.equal(
    callEnd({ ...answer, protocol: "grpc", reset: { by: "upstream", code: 0x2 } }).status,
    "internal",
  );
});

test("a status the answer carried wins over a reset after it", () => {
  const end = callEnd({
    ...answer,
    protocol: "grpc",
    trailers: { "grpc-status": "0" },
    reset: { by: "client", code: 0x8 },
  });
  assert.equal(end.status, "ok");
});

test("without a reset, a Connect unary answer keeps its HTTP status", () => {
  assert.equal(callEnd({ ...answer, protocol: "connect" }).status, "ok");
  assert.equal(callEnd({ ...answer, protocol: "connect", httpStatus: 502 }).status, "http 502");
});
