// The record log under the event store: where a group's durable write runs (on the event loop while
// writes are fast, in the thread pool for a while after a slow one), and the zeros it writes ahead of
// the records (readers and reopening stop at them; closing cuts them off).
import assert from "node:assert/strict";
import fs, { copyFileSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { frame, RecordLog, type RecordLogOptions, scanLog } from "../../../src/core/serve/record-log";

const MAGIC = "PCTST01\n";

function file(): string {
  return join(mkdtempSync(join(tmpdir(), "protocall-record-log-")), "test.log");
}

function record(n: number, pad = 0): Buffer {
  return frame(Buffer.from(`{"kind":"t","n":${n}${pad > 0 ? `,"pad":"${"x".repeat(pad)}"` : ""}}`));
}

async function open(path: string, options: Partial<RecordLogOptions> = {}) {
  return RecordLog.open(path, { magic: MAGIC, notThis: "not a test log", ...options });
}

/** The `n` of every intact record in a log file, and the damage a scan reports. */
function scan(path: string): { ns: number[]; damaged: number } {
  const result = scanLog(readFileSync(path), [MAGIC], "not a test log");
  return {
    ns: result.records.map((r) => JSON.parse(r.payload.toString("utf8")).n),
    damaged: result.damaged.length,
  };
}

type Write = (...args: unknown[]) => void;

/** Runs `fn` with fs.write (the thread-pool write the log uses) going through `hook`. */
async function withWrite(hook: (real: Write, args: unknown[]) => void, fn: () => Promise<void>) {
  const real = fs.write as unknown as Write;
  (fs as { write: unknown }).write = (...args: unknown[]) => hook(real, args);
  syncBuiltinESMExports();
  try {
    await fn();
  } finally {
    (fs as { write: unknown }).write = real;
    syncBuiltinESMExports();
  }
}

test("a synced log writes its groups on the event loop while writes are fast", async () => {
  // No write counts as slow here, however busy the machine.
  const { log } = await open(file(), { inlineSlowMs: 60_000 });
  for (let round = 0; round < 5; round++) {
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => log.append(record(round * 10 + i), round * 10 + i)),
    );
  }
  assert.ok(log.writes.inline >= 5, `${JSON.stringify(log.writes)}`);
  assert.equal(log.writes.pool, 0);
  assert.equal(log.syncCount, log.writes.inline);
  await log.close();
});

test("after a slow write the next groups go to the thread pool, and back to the loop later", async () => {
  // Every write counts as slow (more than -1 ms): the first group is written on the loop, and the
  // groups in the next 300 ms go to the thread pool (fs.write with a callback).
  const path = file();
  let pooled = 0;
  await withWrite(
    (real, args) => {
      pooled++;
      real(...args);
    },
    async () => {
      const { log } = await open(path, { inlineSlowMs: -1, poolForMs: 300 });
      const started = performance.now();
      await log.append(record(1), 1);
      assert.deepEqual(log.writes, { inline: 1, pool: 0 });
      assert.equal(pooled, 0);
      await log.append(record(2), 2);
      await log.append(record(3), 3);
      if (performance.now() - started < 300) assert.deepEqual(log.writes, { inline: 1, pool: 2 });
      assert.ok(pooled >= 1 && pooled === log.writes.pool, `${pooled} pooled, ${JSON.stringify(log.writes)}`);
      await new Promise((r) => setTimeout(r, 350));
      const before = log.writes.inline;
      await log.append(record(4), 4);
      assert.equal(log.writes.inline, before + 1, "written on the loop again once the time has passed");
      await log.close();
    },
  );
  assert.deepEqual(scan(path).ns, [1, 2, 3, 4]);
});

test("writeOnLoop: false sends every group to the thread pool, however fast the writes are", async () => {
  const path = file();
  let pooled = 0;
  await withWrite(
    (real, args) => {
      pooled++;
      real(...args);
    },
    async () => {
      const { log } = await open(path, { inlineSlowMs: 60_000, writeOnLoop: false });
      for (let n = 1; n <= 5; n++) await log.append(record(n), n);
      assert.deepEqual(log.writes, { inline: 0, pool: 5 });
      assert.ok(pooled >= 5, `${pooled} writes through the pool`);
      await log.close();
    },
  );
  assert.deepEqual(scan(path).ns, [1, 2, 3, 4, 5]);
});

test("zeros are written ahead of the records; readers stop at them and close cuts them off", async () => {
  const path = file();
  const { log } = await open(path);
  for (let n = 1; n <= 40; n++) await log.append(record(n, 100), n);
  const onDisk = statSync(path).size;
  assert.ok(onDisk > log.size, `${onDisk} bytes on disk, ${log.size} in records`);
  const data = readFileSync(path);
  assert.ok(
    data.subarray(log.size).every((b) => b === 0),
    "the bytes ahead are zeros",
  );
  // A reader while the log is open: every record, no damage.
  assert.deepEqual(scan(path), { ns: Array.from({ length: 40 }, (_, i) => i + 1), damaged: 0 });
  // The file as a crash would leave it (zeros and all) reopens with every record, silently.
  const crashed = `${path}.crashed`;
  copyFileSync(path, crashed);
  const size = log.size;
  await log.close();
  assert.equal(statSync(path).size, size, "closing cuts the zeros off");
  const reopened = await open(crashed);
  assert.equal(reopened.records.length, 40);
  assert.deepEqual(reopened.damaged, []);
  assert.equal(statSync(crashed).size, size);
  await reopened.log.append(record(41), 41);
  await reopened.log.close();
  assert.deepEqual(
    scan(crashed).ns,
    Array.from({ length: 41 }, (_, i) => i + 1),
  );
});

test("no zeros are written ahead when preallocation is off", async () => {
  const path = file();
  const { log } = await open(path, { preallocateBytes: 0 });
  for (let n = 1; n <= 10; n++) await log.append(record(n), n);
  assert.equal(statSync(path).size, log.size);
  await log.close();
});

test("groups in the thread pool never overwrite each other where the file grows", async () => {
  // All groups in the pool, four at a time. Each write that grows the file (its records plus the
  // zeros ahead, 4 KiB or more) is held back 30 ms: a later group running beside it would land inside
  // those zeros first and then be overwritten by them. So no group may start beside it.
  let delayed = 0;
  const path = file();
  // At least 200 records, and on until two writes grew the file (a slow machine groups more records
  // into each write, so fewer writes grow it): the case this test is about has to happen.
  let n = 0;
  await withWrite(
    (real, args) => {
      const length = args[3];
      if (typeof length === "number" && length >= 4096) {
        delayed++;
        setTimeout(() => real(...args), 30);
      } else {
        real(...args);
      }
    },
    async () => {
      const options = { inlineSlowMs: -1, poolForMs: 60_000, depth: 4, lingerMs: 0, preallocateBytes: 4096 };
      const { log } = await open(path, options);
      const appends: Promise<void>[] = [];
      while (n < 200 || (delayed < 2 && n < 20_000)) {
        n++;
        appends.push(log.append(record(n, 300), n));
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(appends);
      await log.close();
    },
  );
  assert.deepEqual(scan(path), { ns: Array.from({ length: n }, (_, i) => i + 1), damaged: 0 });
  assert.ok(delayed >= 2, `${delayed} writes grew the file`);
});
