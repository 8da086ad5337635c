// Rejected requests are kept apart from accepted deliveries: in their own capped log, with a body
// excerpt only, so that no number or size of bad requests can push an accepted event out of the store.
import assert from "node:assert/strict";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { encodeEvent, samplePushEvent } from "../../../src/core/webhooks/event";
import { closePostConnections, post } from "../../../src/core/webhooks/http-post";
import { startListener } from "../../../src/core/webhooks/listener";
import {
  EventStore,
  REJECTED_BODY_EXCERPT,
  readStoreFile,
  rejectedFile,
} from "../../../src/core/webhooks/store";

function dir(): string {
  return mkdtempSync(join(tmpdir(), "protocall-store-rejected-"));
}

function delivery(id: number, status: "accepted" | "rejected") {
  return {
    id,
    receivedAt: "2025-01-01T00:00:00.000Z",
    remoteAddress: "127.0.0.1",
    method: "POST",
    path: "/buf.alpha.webhook.v1alpha1.EventService/Event",
    listenerUrl: "http://127.0.0.1:1/buf.alpha.webhook.v1alpha1.EventService/Event",
    headers: {
      "content-type": "application/proto",
      ...(status === "rejected" ? { "x-long": "v".repeat(5000) } : {}),
    },
    status,
    httpStatus: status === "accepted" ? 200 : 400,
    ...(status === "accepted" ? { event: { id } } : { reason: `bad ${"r".repeat(5000)}` }),
  };
}

test("60 rejected 4 MiB bodies do not prune any of 200 accepted events", async () => {
  const file = join(dir(), "events.store");
  // Room for the 200 accepted events (about 600 bytes each), far less than one rejected body.
  const store = await EventStore.open(file, { maxBytes: 256 * 1024 });
  for (let i = 0; i < 200; i++) {
    await store.appendRaw(delivery(store.allocateId(), "accepted"), Buffer.alloc(500, 7));
  }
  const big = Buffer.alloc(4 * 1024 * 1024, 1);
  await Promise.all(
    Array.from({ length: 60 }, () => store.appendRaw(delivery(store.allocateId(), "rejected"), big)),
  );
  const all = await store.list();
  const accepted = all.filter((d) => d.status === "accepted");
  const rejected = all.filter((d) => d.status === "rejected");
  assert.equal(accepted.length, 200);
  assert.equal(rejected.length, 60);
  assert.deepEqual(
    all.map((d) => d.id),
    Array.from({ length: 260 }, (_, i) => i + 1),
    "listed in id order",
  );
  // Only an excerpt of each rejected body, short header values and reasons.
  const r = rejected[0];
  assert.equal(Buffer.from(r.body, "base64").length, REJECTED_BODY_EXCERPT);
  assert.equal(r.bodySize, 4 * 1024 * 1024);
  assert.ok(r.headers["x-long"].length <= 257);
  assert.ok((r.reason ?? "").length <= 1025);
  assert.ok(statSync(rejectedFile(file)).size < 60 * 3000, `${statSync(rejectedFile(file)).size} bytes`);
  assert.ok(statSync(file).size < 256 * 1024);
  await store.close();
  assert.equal(readStoreFile(file).length, 260);
});

test("rejections are capped by count, oldest first, whatever the accepted deliveries do", async () => {
  const file = join(dir(), "events.store");
  const store = await EventStore.open(file, { maxRejected: 20 });
  for (let i = 0; i < 100; i++) {
    const status = i % 10 === 0 ? "accepted" : "rejected";
    await store.appendRaw(delivery(store.allocateId(), status), Buffer.from("x"));
  }
  const all = await store.list();
  const rejected = all.filter((d) => d.status === "rejected").map((d) => d.id);
  assert.equal(all.filter((d) => d.status === "accepted").length, 10);
  assert.ok(rejected.length >= 20 && rejected.length <= 25, `${rejected.length} rejections kept`);
  assert.equal(rejected.at(-1), 100, "the newest are kept");
  const allRejected = Array.from({ length: 100 }, (_, i) => i + 1).filter((id) => (id - 1) % 10 !== 0);
  assert.deepEqual(rejected, allRejected.slice(-rejected.length));
  await store.close();
  const reopened = await EventStore.open(file, { maxRejected: 20 });
  assert.equal(reopened.count(), all.length);
  assert.equal(reopened.allocateId(), 101);
  await reopened.clear();
  assert.equal(reopened.count(), 0);
  assert.equal(statSync(rejectedFile(file)).size, 8);
  await reopened.close();
});

test("through the listener: 60 rejected 1 MiB bodies leave all 200 acknowledged events in a 256 KiB store", {
  timeout: 120_000,
}, async () => {
  const file = join(dir(), "events.store");
  const store = await EventStore.open(file, { maxBytes: 256 * 1024 });
  const listener = await startListener({ store, maxBodyBytes: 1024 * 1024 });
  const headers = { "content-type": "application/proto", "connect-protocol-version": "1" };
  try {
    const good = encodeEvent(samplePushEvent());
    for (let i = 0; i < 200; i++) assert.equal((await post(listener.callbackUrl, good, headers)).status, 200);
    const garbage = Buffer.alloc(1024 * 1024, 0xff); // within the body limit, not an EventRequest
    for (let i = 0; i < 60; i++) {
      assert.equal((await post(listener.callbackUrl, garbage, headers)).status, 400);
    }
    const all = await store.list();
    assert.equal(all.filter((d) => d.status === "accepted").length, 200);
    const rejected = all.filter((d) => d.status === "rejected");
    assert.equal(rejected.length, 60);
    assert.ok(rejected.every((d) => d.bodySize === 1024 * 1024 && d.body.length < 2000));
  } finally {
    await listener.close();
    await store.close();
    closePostConnections();
  }
  assert.equal(readStoreFile(file).filter((d) => d.status === "accepted").length, 200);
});
