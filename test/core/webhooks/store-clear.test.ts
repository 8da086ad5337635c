import assert from "node:assert/strict";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { EventStore, readStoreFile } from "../../../src/core/webhooks/store";

function dir(): string {
  return mkdtempSync(join(tmpdir(), "protocall-store-clear-"));
}

function record(store: EventStore, n: number) {
  return {
    id: store.allocateId(),
    receivedAt: new Date().toISOString(),
    remoteAddress: "127.0.0.1",
    method: "POST",
    path: "/buf.alpha.webhook.v1alpha1.EventService/Event",
    listenerUrl: "http://127.0.0.1:1/buf.alpha.webhook.v1alpha1.EventService/Event",
    headers: { "content-type": "application/proto" },
    body: Buffer.from(`event ${n}`).toString("base64"),
    status: "accepted" as const,
    httpStatus: 200,
    event: { n },
  };
}

test("clear removes every delivery, on disk too, and ids keep counting", async () => {
  const file = join(dir(), "events.store");
  let store = await EventStore.open(file);
  await Promise.all([1, 2, 3].map((n) => store.append(record(store, n))));
  assert.equal(store.count(), 3);
  await store.clear();
  assert.equal(store.count(), 0);
  assert.deepEqual(await store.list(), []);
  assert.equal(statSync(file).size, 8, "only the header is left");
  assert.deepEqual(readStoreFile(file), []);
  const next = record(store, 4);
  assert.equal(next.id, 4);
  await store.append(next);
  await store.close();
  store = await EventStore.open(file);
  assert.deepEqual(
    (await store.list()).map((d) => d.id),
    [4],
  );
  await store.close();
});

test("appends made before clear are removed; appends made while it runs are kept", async () => {
  const file = join(dir(), "events.store");
  const store = await EventStore.open(file);
  const before = [1, 2, 3, 4, 5].map((n) => store.append(record(store, n)));
  const clearing = store.clear();
  const afterRecords = [6, 7].map((n) => record(store, n));
  const after = afterRecords.map((r) => store.append(r));
  await Promise.all([...before, clearing, ...after]);
  assert.deepEqual(
    (await store.list()).map((d) => d.id),
    afterRecords.map((r) => r.id),
  );
  assert.equal(store.count(), 2);
  await store.close();
  assert.deepEqual(
    readStoreFile(file).map((d) => d.event),
    [{ n: 6 }, { n: 7 }],
  );
});

test("clear on a closed store is refused", async () => {
  const store = await EventStore.open(join(dir(), "events.store"));
  await store.close();
  await assert.rejects(store.clear(), /closed/);
});
