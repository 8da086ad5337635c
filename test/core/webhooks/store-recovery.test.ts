// Recovery of a damaged event store: a damaged record in the middle is skipped, every record after it
// is kept, and the damage is reported (and moved out of the store so that the next open is clean);
// a torn tail is still cut off silently; stores written in the first format still load.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { crc32 } from "node:zlib";
import { encodeEvent, samplePushEvent } from "../../../src/core/webhooks/event";
import { describeRecovery, EventStore, readStore } from "../../../src/core/webhooks/store";

function dir(): string {
  return mkdtempSync(join(tmpdir(), "protocall-store-recovery-"));
}

function head(id: number, n: number) {
  return {
    id,
    receivedAt: "2025-01-01T00:00:00.000Z",
    remoteAddress: "127.0.0.1",
    method: "POST",
    path: "/buf.alpha.webhook.v1alpha1.EventService/Event",
    listenerUrl: "http://127.0.0.1:1/buf.alpha.webhook.v1alpha1.EventService/Event",
    headers: { "content-type": "application/json" },
    status: "accepted" as const,
    httpStatus: 200,
    event: { n },
  };
}

/** A store of `count` deliveries (ids 1..count), closed; returns the file and each record's offset. */
async function filled(count: number): Promise<{ file: string; offsets: number[] }> {
  const file = join(dir(), "events.store");
  const store = await EventStore.open(file);
  const offsets: number[] = [];
  for (let n = 1; n <= count; n++) {
    offsets.push(store.byteSize());
    await store.appendRaw(head(store.allocateId(), n), Buffer.from(`{"n":${n}}`));
  }
  await store.close();
  return { file, offsets };
}

function ns(deliveries: { event?: unknown }[]): number[] {
  return deliveries.map((d) => (d.event as { n: number }).n);
}

test("one corrupt byte in a middle record: that record is skipped, every later one kept, the damage reported", async () => {
  const { file, offsets } = await filled(10);
  const data = readFileSync(file);
  data[offsets[4] + 30] ^= 0x5a; // inside the JSON of delivery 5
  writeFileSync(file, data);

  // Read-only (listen list): reported, the file left as it is.
  const read = readStore(file);
  assert.deepEqual(ns(read.deliveries), [1, 2, 3, 4, 6, 7, 8, 9, 10]);
  assert.equal(read.recovery.skipped.length, 1);
  assert.deepEqual(read.recovery.skipped[0].lostIds, [5]);
  assert.equal(read.recovery.moved, false);
  assert.deepEqual(readFileSync(file), data);

  const store = await EventStore.open(file);
  assert.equal(store.count(), 9);
  const [skipped] = store.recovery.skipped;
  assert.equal(skipped.offset, offsets[4]);
  assert.equal(skipped.length, offsets[5] - offsets[4]);
  assert.equal(skipped.afterId, 4);
  assert.equal(skipped.beforeId, 6);
  assert.deepEqual(skipped.lostIds, [5]);
  const line = describeRecovery(store.recovery)!;
  assert.match(line, /damaged: skipped \d+ bytes .*between deliveries 4 and 6.*lost delivery 5/);
  assert.match(line, /moved to .*events\.store\.damaged/);
  // The damaged bytes are kept aside, and the store no longer holds them.
  assert.equal(statSync(`${file}.damaged`).size, skipped.length);
  assert.equal(statSync(file).size, data.length - skipped.length);
  // Appending goes on; ids continue after the highest one.
  const id = store.allocateId();
  assert.equal(id, 11);
  await store.appendRaw(head(id, 11), Buffer.from("{}"));
  assert.deepEqual(ns(await store.list()), [1, 2, 3, 4, 6, 7, 8, 9, 10, 11]);
  await store.close();

  // The next open is clean.
  const again = await EventStore.open(file);
  assert.deepEqual(again.recovery.skipped, []);
  assert.equal(describeRecovery(again.recovery), undefined);
  assert.equal(again.count(), 10);
  await again.close();
});

test("a damaged length or checksum in a record's header: the scan finds the next record", async () => {
  for (const [what, at] of [
    ["length", 1],
    ["checksum", 5],
  ] as const) {
    const { file, offsets } = await filled(6);
    const data = readFileSync(file);
    data[offsets[2] + at] ^= 0xff; // the header of delivery 3
    writeFileSync(file, data);
    const store = await EventStore.open(file);
    assert.deepEqual(ns(await store.list()), [1, 2, 4, 5, 6], what);
    assert.deepEqual(store.recovery.skipped[0]?.lostIds, [3], what);
    await store.close();
  }
});

test("several damaged records, and damage in the first record, are all skipped and reported", async () => {
  const { file, offsets } = await filled(12);
  const data = readFileSync(file);
  for (const i of [0, 3, 4, 9]) data[offsets[i] + 20] ^= 0x01;
  writeFileSync(file, data);
  const store = await EventStore.open(file);
  assert.deepEqual(ns(await store.list()), [2, 3, 6, 7, 8, 9, 11, 12]);
  assert.deepEqual(
    store.recovery.skipped.map((s) => s.lostIds),
    [[], [4, 5], [10]],
  );
  assert.equal(store.recovery.skipped[0].beforeId, 2);
  assert.match(describeRecovery(store.recovery)!, /lost deliveries 4-5, 10/);
  await store.close();
});

test("a torn tail is cut off silently: nothing reported", async () => {
  const { file } = await filled(3);
  const intact = statSync(file).size;
  const torn = Buffer.concat([Buffer.from([200, 0, 0, 0, 1, 2, 3, 4]), Buffer.from('{"kind":"deliv')]);
  writeFileSync(file, Buffer.concat([readFileSync(file), torn]));
  assert.deepEqual(readStore(file).recovery.skipped, []);
  const store = await EventStore.open(file);
  assert.deepEqual(store.recovery.skipped, []);
  assert.equal(store.count(), 3);
  assert.equal(statSync(file).size, intact);
  assert.equal(existsSync(`${file}.damaged`), false);
  await store.close();
});

test("a damaged last record is treated as a torn tail (cut off, not reported)", async () => {
  const { file } = await filled(3);
  const data = readFileSync(file);
  data[data.length - 2] ^= 0xff;
  writeFileSync(file, data);
  const store = await EventStore.open(file);
  assert.deepEqual(ns(await store.list()), [1, 2]);
  assert.deepEqual(store.recovery.skipped, []);
  await store.close();
});

/** A store in the first format: records are [len][crc32][JSON], the body base64 inside the JSON. */
function legacyStore(file: string, records: object[]): number[] {
  const parts = [Buffer.from("PCEVT01\n", "latin1")];
  const offsets: number[] = [];
  let offset = 8;
  for (const r of records) {
    const json = Buffer.from(JSON.stringify(r));
    const h = Buffer.alloc(8);
    h.writeUInt32LE(json.length, 0);
    h.writeUInt32LE(crc32(json), 4);
    parts.push(h, json);
    offsets.push(offset);
    offset += 8 + json.length;
  }
  writeFileSync(file, Buffer.concat(parts));
  return offsets;
}

test("a store in the first format loads (damage skipped there too), and is upgraded on open", async () => {
  const file = join(dir(), "events.store");
  const body = Buffer.from(encodeEvent(samplePushEvent()));
  const records = [1, 2, 3, 4].map((id) => ({
    kind: "delivery",
    ...head(id, id),
    headers: { "content-type": "application/proto" },
    body: body.toString("base64"),
  }));
  const offsets = legacyStore(file, [
    ...records.slice(0, 2),
    {
      kind: "forward",
      id: 2,
      forward: { url: "http://x", status: 200, latencyMs: 1, body: "", time: "t" },
    },
    ...records.slice(2),
  ]);
  const data = readFileSync(file);
  data[offsets[3] + 40] ^= 0x10; // delivery 3
  writeFileSync(file, data);
  assert.deepEqual(ns(readStore(file).deliveries), [1, 2, 4]);
  const store = await EventStore.open(file);
  const all = await store.list();
  assert.deepEqual(ns(all), [1, 2, 4]);
  assert.equal(all[1].forward?.status, 200);
  assert.equal(all[0].body, body.toString("base64"));
  assert.deepEqual(store.recovery.skipped[0].lostIds, [3]);
  const { event: _, ...withoutEvent } = head(store.allocateId(), 5);
  await store.appendRaw({ ...withoutEvent, headers: { "content-type": "application/proto" } }, body);
  await store.close();
  assert.equal(readFileSync(file).subarray(0, 8).toString("latin1"), "PCEVT02\n");
  const reread = readStore(file).deliveries;
  assert.equal(reread.length, 4);
  // Stored without its decoded form, the binary event is decoded from its body when read.
  const last = reread[3] as unknown as { event: { event: string }; body: string };
  assert.equal(last.event.event, "WEBHOOK_EVENT_REPOSITORY_PUSH");
  assert.equal(last.body, body.toString("base64"));
});
