// A proxied call as a document: its line, headers with secrets redacted, each message with its time
// (sent and received interleaved as they passed), response headers, trailers, the error.
import assert from "node:assert/strict";
import { test } from "node:test";
import { callDocument } from "../../../src/core/proxy/call-document";
import type { ProxiedCall } from "../../../src/core/proxy/call-store";

const call: ProxiedCall = {
  id: 7,
  startedAt: "2026-01-02T03:04:05.000Z",
  upstream: "http://127.0.0.1:8080",
  method: "demo.v1.DemoService/Chat",
  protocol: "grpc",
  httpVersion: "2",
  status: "not_found",
  statusMessage: "gone",
  httpStatus: 200,
  durationMs: 12.34,
  requestBytes: 20,
  responseBytes: 30,
  requestHeaders: { authorization: "Bearer secret-token", "x-id": "1" },
  responseHeaders: { "content-type": "application/grpc" },
  trailers: { "grpc-status": "5", "x-cost": "3" },
  requestMessages: [],
  responseMessages: [],
  requestTimes: [0.5, 4],
  responseTimes: [2, 6],
  truncated: false,
  decoded: {
    request: [{ text: "a" }, { text: "b" }],
    response: [{ text: "A" }, { text: "B" }],
    details: [{ type: "google.rpc.ErrorInfo", json: { reason: "R" } }],
  },
};

test("a call reads as its line, headers, timed messages in the order they passed, trailers", () => {
  assert.equal(
    callDocument(call),
    [
      "#7 demo.v1.DemoService/Chat",
      "grpc over HTTP/2 to http://127.0.0.1:8080, 2026-01-02T03:04:05.000Z",
      "not_found: gone in 12.3 ms, 20 bytes sent, 30 received",
      "",
      "Request headers:",
      "  authorization: Bearer [redacted]",
      "  x-id: 1",
      "",
      "Messages:",
      '  → +0.5 ms {"text":"a"}',
      '  ← +2.0 ms {"text":"A"}',
      '  → +4.0 ms {"text":"b"}',
      '  ← +6.0 ms {"text":"B"}',
      "",
      "Response headers:",
      "  content-type: application/grpc",
      "",
      "Trailers:",
      "  grpc-status: 5",
      "  x-cost: 3",
      "",
      "Error details:",
      '  google.rpc.ErrorInfo {"reason":"R"}',
      "",
    ].join("\n"),
  );
});
