// Compressed deliveries: Connect requests with Content-Encoding gzip (or br) and gRPC requests with
// grpc-encoding gzip are accepted and stored decompressed; a body that decompresses past the body
// limit (a gzip bomb) is refused with a 4xx and a reason, without being decompressed whole; a corrupt
// body or an unknown encoding gets a 4xx that says why.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { Code, createClient } from "@connectrpc/connect";
import { compressionGzip, createGrpcTransport } from "@connectrpc/connect-node";
import { encodeEvent, samplePushEvent } from "../../../src/core/webhooks/event";
import { closePostConnections, post } from "../../../src/core/webhooks/http-post";
import { type Listener, startListener } from "../../../src/core/webhooks/listener";
import { EventStore } from "../../../src/core/webhooks/store";
import { EventService } from "../../../src/gen/buf/alpha/webhook/v1alpha1/event_pb";

const MAX = 1024 * 1024;
let store: EventStore;
let listener: Listener;

before(async () => {
  store = await EventStore.open(join(mkdtempSync(join(tmpdir(), "protocall-gzip-")), "events.store"));
  listener = await startListener({ store, maxBodyBytes: MAX });
});
after(async () => {
  await listener.close();
  await store.close();
  closePostConnections();
});

const event = Buffer.from(encodeEvent(samplePushEvent()));
const headers = (encoding: string, type = "application/proto") => ({
  "content-type": type,
  "connect-protocol-version": "1",
  "content-encoding": encoding,
});

/** A gzip body of `mib` MiB of zeros: gzip members of 1 MiB each, concatenated (about 1 KiB each). */
function gzipBomb(mib: number): Buffer {
  const member = gzipSync(Buffer.alloc(1024 * 1024));
  return Buffer.concat(Array(mib).fill(member));
}

/** POSTs over HTTP/2 (prior knowledge), as the registry may. */
function postH2(body: Uint8Array, h: Record<string, string>): Promise<{ status: number; body: string }> {
  const session = http2.connect(listener.url);
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": new URL(listener.callbackUrl).pathname,
      ...h,
    });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on("response", (r) => {
      status = Number(r[":status"]);
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      session.close();
      resolve({ status, body: Buffer.concat(chunks).toString() });
    });
    stream.on("error", reject);
    stream.end(body);
  });
}

test("gzip and br Connect deliveries are accepted (HTTP/1.1 and HTTP/2) and stored decompressed", async () => {
  const before = store.count();
  assert.equal((await post(listener.callbackUrl, gzipSync(event), headers("gzip"))).status, 200);
  assert.equal((await postH2(gzipSync(event), headers("gzip"))).status, 200);
  assert.equal((await post(listener.callbackUrl, brotliCompressSync(event), headers("br"))).status, 200);
  const json = Buffer.from(JSON.stringify({ event: "WEBHOOK_EVENT_REPOSITORY_PUSH" }));
  assert.equal(
    (await post(listener.callbackUrl, gzipSync(json), headers("gzip", "application/json"))).status,
    200,
  );
  const added = (await store.list()).slice(before);
  assert.deepEqual(
    added.map((d) => [d.status, d.headers["content-encoding"]]),
    [
      ["accepted", "gzip"],
      ["accepted", "gzip"],
      ["accepted", "br"],
      ["accepted", "gzip"],
    ],
  );
  assert.deepEqual(Buffer.from(added[0].body, "base64"), event);
  assert.equal((added[1].event as { event: string }).event, "WEBHOOK_EVENT_REPOSITORY_PUSH");
  assert.equal((added[3].event as { event: string }).event, "WEBHOOK_EVENT_REPOSITORY_PUSH");
});

test("a gzip bomb is refused with 413 and a reason, without decompressing it whole", async () => {
  const bomb = gzipBomb(200); // 200 MiB once decompressed, about 200 KiB on the wire
  assert.ok(bomb.length < MAX);
  const rss = process.memoryUsage().rss;
  for (const send of [
    () => post(listener.callbackUrl, bomb, headers("gzip")),
    () => postH2(bomb, headers("gzip")),
  ]) {
    const res = await send();
    assert.equal(res.status, 413);
    const error = JSON.parse(res.body.toString()) as { code: string; message: string };
    assert.equal(error.code, "resource_exhausted");
    assert.equal(error.message, `the gzip request body decompresses to more than the limit of ${MAX} bytes`);
  }
  assert.ok(process.memoryUsage().rss - rss < 100 * 1024 * 1024, "memory grew by less than the bomb");
  const last = (await store.list()).at(-1)!;
  assert.equal(last.status, "rejected");
  assert.equal(last.httpStatus, 413);
  // Still serving.
  assert.equal((await post(listener.callbackUrl, event, headers("identity"))).status, 200);
});

test("a corrupt gzip body and an unknown encoding get a 4xx that says why", async () => {
  const corrupt = await post(listener.callbackUrl, Buffer.from("not gzip at all"), headers("gzip"));
  assert.equal(corrupt.status, 400);
  assert.match(corrupt.body.toString(), /"code":"invalid_argument".*cannot decompress the gzip request body/);
  const zstd = await post(listener.callbackUrl, event, headers("zstd"));
  assert.equal(zstd.status, 415);
  assert.match(
    zstd.body.toString(),
    /unsupported content encoding \\"zstd\\": send gzip, br or an uncompressed body/,
  );
});

test("gRPC with grpc-encoding gzip is accepted; a gRPC gzip bomb is refused with resource_exhausted", async () => {
  const client = createClient(
    EventService,
    createGrpcTransport({ baseUrl: listener.url, sendCompression: compressionGzip, compressMinBytes: 1 }),
  );
  const before = store.count();
  await client.event(samplePushEvent());
  const stored = (await store.list()).at(-1)!;
  assert.equal(store.count(), before + 1);
  assert.equal(stored.status, "accepted");
  assert.equal(stored.headers["grpc-encoding"], "gzip");
  // A raw gRPC frame: compressed flag, length, then the bomb.
  const bomb = gzipBomb(20);
  const frame = Buffer.alloc(5 + bomb.length);
  frame[0] = 1;
  frame.writeUInt32BE(bomb.length, 1);
  bomb.copy(frame, 5);
  const session = http2.connect(listener.url);
  const trailers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": new URL(listener.callbackUrl).pathname,
      "content-type": "application/grpc",
      "grpc-encoding": "gzip",
      te: "trailers",
    });
    let headersSeen: http2.IncomingHttpHeaders = {};
    stream.on("response", (h) => {
      headersSeen = h;
    });
    stream.on("trailers", (t) => resolve(t));
    stream.on("data", () => {});
    stream.on("end", () => resolve(headersSeen));
    stream.on("error", reject);
    stream.end(frame);
  });
  session.close();
  assert.equal(trailers["grpc-status"], String(Code.ResourceExhausted), JSON.stringify(trailers));
});
