// gzip on the wire: a client that compresses its requests (and accepts compressed answers) through
// the proxy to the demo server; the store holds each message decompressed and decoded, over gRPC,
// gRPC-Web and Connect (streaming envelopes and a unary body under Content-Encoding), while the
// client still gets its answer.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { gzipSync } from "node:zlib";
import { createClient } from "@connectrpc/connect";
import {
  compressionGzip,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import type { ProxiedCall } from "../../../src/core/proxy/call-store";
import { decodeCall } from "../../../src/core/proxy/decode-call";
import { envelopeReader } from "../../../src/core/proxy/envelopes";
import { type RunningProxy, startProxy } from "../../../src/core/proxy/proxy-server";
import type { SchemaSource } from "../../../src/core/schema/types";
import { GreetService } from "../../../src/gen/demo/v1/greet_pb";
import { type DemoServer, demoDescriptorSet, startDemoServer } from "../../support/servers";

let demo: DemoServer;
let proxy: RunningProxy;
let schema: SchemaSource;
const seen: Omit<ProxiedCall, "id">[] = [];

before(async () => {
  demo = await startDemoServer();
  proxy = await startProxy({ upstream: demo.url, onCall: (c) => void seen.push(c) });
  const { openSchema } = await import("../../../src/core/schema/open-schema");
  schema = await openSchema(await demoDescriptorSet(), { cwd: process.cwd(), stdin: process.stdin });
});
after(async () => {
  await proxy?.close();
  await demo?.close();
  await schema?.close();
});

const name = "z".repeat(3000);

test("gzip messages are stored decompressed and decoded, in both directions, for every protocol", async () => {
  const options = {
    baseUrl: proxy.url,
    httpVersion: "2" as const,
    sendCompression: compressionGzip,
    acceptCompression: [compressionGzip],
    compressMinBytes: 0,
  };
  const transports = {
    grpc: createGrpcTransport(options),
    grpcweb: createGrpcWebTransport(options),
    connect: createConnectTransport(options),
  };
  for (const [protocol, transport] of Object.entries(transports)) {
    const res = await createClient(GreetService, transport).greet({ name });
    assert.equal(res.greeting, `Hello, ${name}!`);
    const call = seen.find((c) => c.protocol === protocol);
    assert.ok(call, `no ${protocol} call stored`);
    const encoding =
      protocol === "connect" ? call.requestHeaders["content-encoding"] : call.requestHeaders["grpc-encoding"];
    assert.equal(encoding, "gzip", `${protocol}: the request was not compressed`);
    // Smaller than the message itself: the bytes on the wire were compressed.
    assert.ok(call.requestBytes < name.length, `${protocol}: ${call.requestBytes} bytes sent`);
    assert.ok(call.responseBytes < name.length, `${protocol}: ${call.responseBytes} bytes received`);
    const decoded = await decodeCall(call, schema);
    assert.deepEqual(decoded.request, [{ name }], protocol);
    assert.deepEqual(decoded.response, [{ greeting: `Hello, ${name}!` }], protocol);
  }
});

test("an envelope flagged compressed is inflated under gzip and kept as it came under another encoding", () => {
  const payload = Buffer.from("hello");
  const packed = gzipSync(payload);
  const envelope = Buffer.concat([Buffer.from([1, 0, 0, 0, packed.length]), packed]);
  const gzip = envelopeReader(true);
  gzip.encoding = "gzip";
  gzip.push(envelope);
  assert.deepEqual(gzip.messages, [payload]);
  const other = envelopeReader(true);
  other.encoding = "br";
  other.push(envelope);
  assert.deepEqual(other.messages, [packed]);
  const unary = envelopeReader(false);
  unary.encoding = "gzip";
  unary.push(packed);
  unary.end();
  assert.deepEqual(unary.messages, [payload]);
});
