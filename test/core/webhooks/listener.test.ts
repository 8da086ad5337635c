import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { encodeEvent, samplePushEvent } from "../../../src/core/webhooks/event";
import { closePostConnections, post } from "../../../src/core/webhooks/http-post";
import { type Listener, startListener } from "../../../src/core/webhooks/listener";
import { replayDelivery } from "../../../src/core/webhooks/replay";
import { EventStore, type StoredDelivery } from "../../../src/core/webhooks/store";
import { EventService } from "../../../src/gen/buf/alpha/webhook/v1alpha1/event_pb";
import { createTestPki, type TestPki } from "../../support/tls";
import { waitFor } from "./support";

let pki: TestPki;
let store: EventStore;
let listener: Listener;
const reported: StoredDelivery[] = [];

before(async () => {
  pki = await createTestPki();
  store = await EventStore.open(join(mkdtempSync(join(tmpdir(), "protocall-listener-")), "events.store"));
  listener = await startListener({
    store,
    tls: { cert: pki.server.cert, key: pki.server.key },
    maxBodyBytes: 64 * 1024,
    onDelivery: (d) => reported.push(d),
  });
});

after(async () => {
  await listener.close();
  await store.close();
  closePostConnections();
});

const proto = { "content-type": "application/proto", "connect-protocol-version": "1" };

test("serves https on 127.0.0.1 and stores a binary delivery before answering the empty response", async () => {
  assert.match(
    listener.callbackUrl,
    /^https:\/\/127\.0\.0\.1:\d+\/buf\.alpha\.webhook\.v1alpha1\.EventService\/Event$/,
  );
  const event = samplePushEvent();
  const res = await post(listener.callbackUrl, encodeEvent(event), proto, { ca: pki.ca.cert });
  assert.equal(res.status, 200);
  assert.equal(res.body.length, 0);
  // Durable before the answer: the record is already in the store file.
  const last = (await store.list()).at(-1)!;
  assert.equal(last.status, "accepted");
  assert.equal(last.remoteAddress, "127.0.0.1");
  assert.equal(last.headers["content-type"], "application/proto");
  assert.deepEqual(Buffer.from(last.body, "base64"), Buffer.from(encodeEvent(event)));
  const json = last.event as { event: string; payload: { repositoryPush: { repository: { name: string } } } };
  assert.equal(json.event, "WEBHOOK_EVENT_REPOSITORY_PUSH");
  assert.equal(json.payload.repositoryPush.repository.name, "petapis");
});

test("accepts Connect JSON and gRPC deliveries too", async () => {
  const before = store.count();
  const event = samplePushEvent();
  const connectJson = createClient(
    EventService,
    createConnectTransport({
      baseUrl: listener.url,
      httpVersion: "1.1",
      useBinaryFormat: false,
      nodeOptions: { ca: pki.ca.cert },
    }),
  );
  await connectJson.event(event);
  const grpc = createClient(
    EventService,
    createGrpcTransport({ baseUrl: listener.url, nodeOptions: { ca: pki.ca.cert } }),
  );
  await grpc.event(event);
  const added = (await store.list()).slice(before);
  assert.deepEqual(
    added.map((d) => [d.status, d.headers["content-type"]]),
    [
      ["accepted", "application/json"],
      ["accepted", "application/grpc+proto"],
    ],
  );
});

test("bad deliveries get a 4xx Connect error, are stored as rejected, and the listener keeps serving", async () => {
  const good = encodeEvent(samplePushEvent());
  const cases: {
    name: string;
    url?: string;
    method?: string;
    headers?: Record<string, string>;
    body: Uint8Array;
    status: number;
    code: string;
  }[] = [
    {
      name: "wrong content type",
      headers: { "content-type": "text/plain" },
      body: good,
      status: 415,
      code: "invalid_argument",
    },
    {
      name: "garbage bytes",
      body: Buffer.from([0xff, 0xff, 0xff, 0x07, 0x01]),
      status: 400,
      code: "invalid_argument",
    },
    {
      name: "truncated message",
      body: good.subarray(0, good.length - 7),
      status: 400,
      code: "invalid_argument",
    },
    { name: "oversized body", body: Buffer.alloc(65 * 1024, 1), status: 413, code: "resource_exhausted" },
    {
      name: "wrong path",
      url: `${listener.url}/buf.alpha.webhook.v1alpha1.EventService/Other`,
      body: good,
      status: 404,
      code: "unimplemented",
    },
  ];
  for (const c of cases) {
    const before = store.count();
    const res = await post(c.url ?? listener.callbackUrl, c.body, c.headers ?? proto, { ca: pki.ca.cert });
    assert.equal(res.status, c.status, c.name);
    const err = JSON.parse(res.body.toString("utf8")) as { code: string; message: string };
    assert.equal(err.code, c.code, c.name);
    assert.ok(err.message.length > 0, c.name);
    await waitFor(() => store.count() === before + 1, `${c.name} recorded`);
    const last = (await store.list()).at(-1)!;
    assert.equal(last.status, "rejected", c.name);
    await waitFor(() => reported.at(-1)?.id === last.id, `${c.name} reported`);
    assert.equal(reported.at(-1)?.reason, last.reason, c.name);
    assert.equal(last.httpStatus, c.status, c.name);
    assert.ok(last.reason, c.name);
  }
  // Wrong method (GET) over plain https.
  const getStatus = await new Promise<number>((resolve, reject) => {
    const req = (require("node:https") as typeof import("node:https")).request(
      listener.callbackUrl,
      { method: "GET", ca: pki.ca.cert },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end();
  });
  assert.equal(getStatus, 405);
  // Still serving.
  const ok = await post(listener.callbackUrl, good, proto, { ca: pki.ca.cert });
  assert.equal(ok.status, 200);
});

test("forwards accepted events to a backend and records status, body and latency; replays a delivery", async () => {
  const received: Buffer[] = [];
  const backend = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push(Buffer.concat(chunks));
      res.writeHead(200, { "content-type": "application/proto" });
      res.end("ok");
    });
  });
  await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
  const port = (backend.address() as { port: number }).port;
  const fstore = await EventStore.open(
    join(mkdtempSync(join(tmpdir(), "protocall-forward-")), "events.store"),
  );
  const forwarded: number[] = [];
  const fl = await startListener({
    store: fstore,
    prefix: "acme",
    forwardTo: `http://127.0.0.1:${port}/hook`,
    onForward: (id) => forwarded.push(id),
  });
  try {
    assert.match(fl.callbackUrl, /\/acme\.alpha\.webhook\.v1alpha1\.EventService\/Event$/);
    const body = encodeEvent(samplePushEvent());
    const res = await post(fl.callbackUrl, body, proto);
    assert.equal(res.status, 200);
    await waitFor(() => forwarded.length === 1, "the forward");
    assert.deepEqual(received[0], Buffer.from(body));
    const [stored] = await fstore.list();
    assert.equal(stored.forward?.status, 200);
    assert.equal(stored.forward?.body, "ok");
    assert.ok((stored.forward?.latencyMs ?? -1) >= 0);

    // Replay to the listener that received it, and to any URL.
    const again = await replayDelivery(stored, stored.listenerUrl);
    assert.equal(again.status, 200);
    const all = await fstore.list();
    assert.equal(all.length, 2);
    assert.deepEqual(all[1].event, stored.event);
    assert.equal(all[1].headers["x-protocall-replay-of"], String(stored.id));
    await replayDelivery(stored, `http://127.0.0.1:${port}/elsewhere`);
    await waitFor(() => received.length === 3, "the replay to the backend");
  } finally {
    await fl.close();
    await fstore.close();
    await new Promise<void>((r) => backend.close(() => r()));
  }
});

test("plain http serves HTTP/1.1 and cleartext HTTP/2 on one port", async () => {
  const pstore = await EventStore.open(join(mkdtempSync(join(tmpdir(), "protocall-h2c-")), "events.store"));
  const pl = await startListener({ store: pstore });
  try {
    const body = encodeEvent(samplePushEvent());
    assert.equal((await post(pl.callbackUrl, body, proto)).status, 200);
    const h2 = createClient(
      EventService,
      createConnectTransport({ baseUrl: pl.url, httpVersion: "2", useBinaryFormat: true }),
    );
    await h2.event(samplePushEvent());
    assert.equal(pstore.count(), 2);
  } finally {
    await pl.close();
    await pstore.close();
  }
});

test("HTTP/2 deliveries in the registry's form: stored, and bad ones rejected the same way", async () => {
  const session = http2.connect(listener.url, { ca: pki.ca.cert });
  const send = (body: Uint8Array, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": new URL(listener.callbackUrl).pathname,
        "content-type": "application/proto",
        ...headers,
      });
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on("response", (h) => {
        status = Number(h[":status"]);
      });
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString() }));
      stream.on("error", reject);
      stream.end(body);
    });
  try {
    const before = store.count();
    const good = encodeEvent(samplePushEvent());
    const ok = await send(good, { "x-custom": "yes" });
    assert.deepEqual(ok, { status: 200, body: "" });
    const stored = (await store.list()).at(-1)!;
    assert.equal(stored.status, "accepted");
    assert.equal(stored.headers["x-custom"], "yes");
    assert.equal(stored.remoteAddress, "127.0.0.1");
    assert.deepEqual(Buffer.from(stored.body, "base64"), Buffer.from(good));
    const garbage = await send(Buffer.from([0xff, 0xff, 0xff]));
    assert.equal(garbage.status, 400);
    assert.match(garbage.body, /"code":"invalid_argument"/);
    const big = await send(Buffer.alloc(70 * 1024, 1));
    assert.equal(big.status, 413);
    assert.match(big.body, /"code":"resource_exhausted"/);
    assert.deepEqual(
      (await store.list()).slice(before).map((d) => [d.status, d.httpStatus]),
      [
        ["accepted", 200],
        ["rejected", 400],
        ["rejected", 413],
      ],
    );
  } finally {
    session.close();
  }
});

test("an event the quick wire check cannot vouch for is decoded, and accepted when it decodes", async () => {
  // An unknown field with an 11-byte varint: valid for fromBinary, beyond what the check models.
  const odd = Buffer.concat([
    encodeEvent(samplePushEvent()),
    Buffer.from([0x98, 0x06, ...Array(10).fill(0xff), 0x01]),
  ]);
  const res = await post(listener.callbackUrl, odd, proto, { ca: pki.ca.cert });
  assert.equal(res.status, 200);
  const stored = (await store.list()).at(-1)!;
  assert.equal(stored.status, "accepted");
  assert.equal((stored.event as { event: string }).event, "WEBHOOK_EVENT_REPOSITORY_PUSH");
});
