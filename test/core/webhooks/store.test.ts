import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { EventStore, readStoreFile } from "../../../src/core/webhooks/store";

function dir(): string {
  return mkdtempSync(join(tmpdir(), "protocall-store-"));
}

function record(store: EventStore, n: number, pad = 0) {
  return {
    id: store.allocateId(),
    receivedAt: new Date().toISOString(),
    remoteAddress: "127.0.0.1",
    method: "POST",
    path: "/buf.alpha.webhook.v1alpha1.EventService/Event",
    listenerUrl: "http://127.0.0.1:1/buf.alpha.webhook.v1alpha1.EventService/Event",
    headers: { "content-type": "application/proto" },
    body: Buffer.from(`event ${n}${"x".repeat(pad)}`).toString("base64"),
    status: "accepted" as const,
    httpStatus: 200,
    event: { n },
  };
}

test("appends survive a reopen, and ids continue after the last one", async () => {
  const file = join(dir(), "events.store");
  let store = await EventStore.open(file);
  await Promise.all([1, 2, 3].map((n) => store.append(record(store, n))));
  await store.appendForward(2, { url: "http://x", status: 200, latencyMs: 1, body: "", time: "t" });
  await store.close();
  store = await EventStore.open(file);
  assert.equal(store.count(), 3);
  const next = record(store, 4);
  assert.equal(next.id, 4);
  await store.append(next);
  const all = await store.list();
  assert.deepEqual(
    all.map((d) => (d.event as { n: number }).n),
    [1, 2, 3, 4],
  );
  assert.equal(all[1].forward?.status, 200);
  assert.equal(all[0].forward, undefined);
  await store.close();
  assert.equal(readStoreFile(file).length, 4);
});

test("a torn last record is cut off on open, and appending continues cleanly", async () => {
  const file = join(dir(), "events.store");
  let store = await EventStore.open(file);
  for (const n of [1, 2]) await store.append(record(store, n));
  await store.close();
  const intact = statSync(file).size;
  // A crash in the middle of a write: a header that promises 500 bytes, followed by only a few.
  const torn = Buffer.alloc(8 + 20);
  torn.writeUInt32LE(500, 0);
  appendFileSync(file, torn);
  store = await EventStore.open(file);
  assert.equal(store.count(), 2);
  assert.equal(statSync(file).size, intact);
  await store.append(record(store, 3));
  await store.close();
  assert.deepEqual(
    readStoreFile(file).map((d) => (d.event as { n: number }).n),
    [1, 2, 3],
  );
});

test("a last record with a bad checksum is cut off", async () => {
  const file = join(dir(), "events.store");
  const store = await EventStore.open(file);
  for (const n of [1, 2]) await store.append(record(store, n));
  await store.close();
  const data = readFileSync(file);
  data[data.length - 3] ^= 0xff; // flip a byte inside the last record's JSON
  writeFileSync(file, data);
  const reopened = await EventStore.open(file);
  assert.equal(reopened.count(), 1);
  await reopened.close();
});

test("a file that is not a store is refused with a clear message", async () => {
  const file = join(dir(), "not-a-store");
  writeFileSync(file, "hello world, this is text");
  await assert.rejects(EventStore.open(file), /not a protocall event store/);
});

test("past the size limit the oldest records are pruned; the newest survive a reopen", async () => {
  const file = join(dir(), "events.store");
  const store = await EventStore.open(file, { maxBytes: 8000 });
  for (let n = 1; n <= 100; n++) await store.append(record(store, n, 200));
  const kept = await store.list(); // also waits until pruning after the last append is done
  assert.ok(store.byteSize() <= 8000, `size ${store.byteSize()}`);
  assert.ok(kept.length > 5 && kept.length < 100, `kept ${kept.length}`);
  assert.equal((kept[kept.length - 1].event as { n: number }).n, 100);
  const ns = kept.map((d) => (d.event as { n: number }).n);
  assert.deepEqual(
    ns,
    Array.from({ length: ns.length }, (_, i) => 101 - ns.length + i),
  );
  await store.close();
  assert.ok(statSync(file).size <= 8000);
  const reopened = await EventStore.open(file, { maxBytes: 8000 });
  assert.equal(reopened.count(), kept.length);
  assert.equal(reopened.allocateId(), 101);
  await reopened.close();
});

test("concurrent appends share fdatasyncs (group commit)", async () => {
  const file = join(dir(), "events.store");
  const store = await EventStore.open(file);
  await Promise.all(Array.from({ length: 300 }, (_, n) => store.append(record(store, n))));
  assert.equal(store.count(), 300);
  assert.ok(store.syncCount < 30, `expected far fewer syncs than appends, got ${store.syncCount}`);
  await store.close();
});

test("one writer per store: a live owner is refused, a dead owner's lock is taken over", async () => {
  const file = join(dir(), "events.store");
  const store = await EventStore.open(file);
  await assert.rejects(EventStore.open(file), /already open in this process/);
  await store.close();
  // A lock held by another live process (our parent).
  writeFileSync(`${file}.lock`, String(process.ppid));
  await assert.rejects(
    EventStore.open(file),
    new RegExp(`in use by process ${process.ppid}.*another --store`),
  );
  // A lock left by a process that no longer runs (killed): taken over.
  writeFileSync(`${file}.lock`, "2147483646");
  const again = await EventStore.open(file);
  assert.equal(readFileSync(`${file}.lock`, "utf8"), String(process.pid));
  await again.close();
  assert.throws(() => statSync(`${file}.lock`), /ENOENT/);
});

test("pruning keeps the size bounded under continuous concurrent appends", async () => {
  const file = join(dir(), "events.store");
  const store = await EventStore.open(file, { maxBytes: 20_000 });
  let max = 0;
  const writers = Array.from({ length: 20 }, async (_, w) => {
    for (let i = 0; i < 30; i++) {
      await store.append(record(store, w * 100 + i, 100));
      max = Math.max(max, store.byteSize());
    }
  });
  await Promise.all(writers);
  assert.equal(store.allocateId(), 601);
  await store.list(); // waits until pruning after the last group is done
  assert.ok(store.byteSize() <= 20_000, `size ${store.byteSize()}`);
  // Between prunings the file may exceed the limit by the groups in flight, never by much more.
  assert.ok(max < 20_000 + 2 * 20 * 400, `peak ${max}`);
  await store.close();
  assert.ok(statSync(file).size <= 20_000);
});
