import assert from "node:assert/strict";
import { test } from "node:test";
import {
  alignRequestHeaders,
  CONNECT_ES,
  encodeGrpcTimeout,
  timeoutHeader,
} from "../../../src/core/invoke/request-headers";

const entries = (h: Headers) => [...h.entries()];

test("gRPC: the short content type and Accept-Encoding: identity, as connect-go sends them", () => {
  const h = new Headers({
    "content-type": "application/grpc+proto",
    "grpc-accept-encoding": "gzip",
    te: "trailers",
    "user-agent": "connect-es/2.1.2 protocall/0.1.0",
  });
  alignRequestHeaders("grpc", h);
  assert.deepEqual(entries(h), [
    ["accept-encoding", "identity"],
    ["content-type", "application/grpc"],
    ["grpc-accept-encoding", "gzip"],
    ["te", "trailers"],
    ["user-agent", "connect-es/2.1.2 protocall/0.1.0"],
  ]);
});

test("gRPC-Web: no X-Grpc-Web, X-User-Agent names the library whatever User-Agent says", () => {
  const h = new Headers({
    "content-type": "application/grpc-web+proto",
    "x-grpc-web": "1",
    "user-agent": "my-agent/1",
    "x-user-agent": "my-agent/1",
  });
  alignRequestHeaders("grpcweb", h);
  assert.deepEqual(entries(h), [
    ["accept-encoding", "identity"],
    ["content-type", "application/grpc-web+proto"],
    ["user-agent", "my-agent/1"],
    ["x-user-agent", CONNECT_ES],
  ]);
});

test("Connect: unary calls keep their Accept-Encoding (message compression), streams get identity", () => {
  const unary = new Headers({ "accept-encoding": "gzip", "content-type": "application/proto" });
  alignRequestHeaders("connect", unary);
  assert.equal(unary.get("accept-encoding"), "gzip");
  assert.equal(unary.get("content-type"), "application/proto");
  const stream = new Headers({
    "connect-accept-encoding": "gzip",
    "content-type": "application/connect+proto",
  });
  alignRequestHeaders("connect", stream);
  assert.equal(stream.get("accept-encoding"), "identity");
});

test("gRPC timeouts use the finest unit that fits in 8 digits, truncated (connect-go's encoding)", () => {
  assert.equal(encodeGrpcTimeout(0), "0n");
  assert.equal(encodeGrpcTimeout(1), "1000000n");
  assert.equal(encodeGrpcTimeout(1.5), "1500000n");
  assert.equal(encodeGrpcTimeout(99.999999), "99999999n");
  assert.equal(encodeGrpcTimeout(100), "100000u");
  assert.equal(encodeGrpcTimeout(2500), "2500000u");
  assert.equal(encodeGrpcTimeout(90_000), "90000000u");
  assert.equal(encodeGrpcTimeout(100_000), "100000m");
  assert.equal(encodeGrpcTimeout(100_000_000), "100000S");
  assert.equal(encodeGrpcTimeout(100_000_000_000), "1666666M");
  assert.equal(encodeGrpcTimeout(1e8 * 60e3), "1666666H");
});

test("the timeout header of each protocol", () => {
  assert.deepEqual(timeoutHeader("connect", 2500.7), ["connect-timeout-ms", "2500"]);
  assert.deepEqual(timeoutHeader("grpc", 2500), ["grpc-timeout", "2500000u"]);
  assert.deepEqual(timeoutHeader("grpcweb", 3_600_000), ["grpc-timeout", "3600000m"]);
});
