// The emulator's durable log: group commit (one sync for a burst of appends), records with raw blobs,
// a torn tail cut off on open, a foreign file refused, one writer per file, atomic rewrite.
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Journal, journalMagic } from "../../../src/core/registry-emulator/journal";

const newFile = () => join(mkdtempSync(join(tmpdir(), "protocall-journal-")), "state");
const noFailure = () => assert.fail("no write should fail");

test("concurrent appends share a sync; records and their blobs read back after a reopen", async () => {
  const file = newFile();
  const { journal, records } = await Journal.open(file, noFailure);
  assert.deepEqual(records, []);
  await Promise.all(
    Array.from({ length: 50 }, (_, i) => journal.append([{ json: { i }, blob: Buffer.from(`blob ${i}`) }])),
  );
  assert.ok(journal.syncCount < 50, `${journal.syncCount} syncs for 50 appends`);
  await journal.append([{ json: { last: true } }]);
  await journal.barrier();
  await journal.close();
  const again = await Journal.open(file, noFailure);
  assert.equal(again.records.length, 51);
  assert.deepEqual(again.records[7].json, { i: 7 });
  assert.equal(Buffer.from(again.records[7].blob!).toString(), "blob 7");
  assert.deepEqual(again.records[50].json, { last: true });
  await again.journal.close();
});

test("a torn last record (a crash in the middle of a write) is cut off; the records before it stay", async () => {
  const file = newFile();
  const { journal } = await Journal.open(file, noFailure);
  await journal.append([{ json: { a: 1 } }, { json: { b: 2 } }]);
  await journal.close();
  const size = statSync(file).size;
  appendFileSync(file, Buffer.from([40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 123]));
  const { journal: reopened, records } = await Journal.open(file, noFailure);
  assert.deepEqual(
    records.map((r) => r.json),
    [{ a: 1 }, { b: 2 }],
  );
  assert.equal(statSync(file).size, size, "the torn bytes are gone");
  await reopened.append([{ json: { c: 3 } }]);
  await reopened.close();
  const last = await Journal.open(file, noFailure);
  await last.journal.close();
  assert.deepEqual(
    last.records.map((r) => r.json),
    [{ a: 1 }, { b: 2 }, { c: 3 }],
  );
});

test("a file that is not a state file is refused with what to do; one writer per file", async () => {
  const file = newFile();
  writeFileSync(file, "hello, not a journal");
  await assert.rejects(
    Journal.open(file, noFailure),
    /registry state .* is not a state file written by protocall: move it away or pass another --state/,
  );
  const other = newFile();
  const { journal } = await Journal.open(other, noFailure);
  await assert.rejects(Journal.open(other, noFailure), /already open in this process/);
  await journal.close();
  // A lock left by a process that no longer runs is taken over.
  writeFileSync(`${other}.lock`, "999999999");
  const { journal: taken } = await Journal.open(other, noFailure);
  assert.equal(readFileSync(`${other}.lock`, "utf8"), String(process.pid));
  await taken.close();
});

test("rewrite replaces the file atomically with the given records; appends go on after it", async () => {
  const file = newFile();
  const { journal } = await Journal.open(file, noFailure);
  await journal.append([{ json: 1 }, { json: 2 }, { json: 3 }]);
  await journal.rewrite([{ json: "snapshot", blob: Buffer.from("x") }]);
  await journal.append([{ json: 4 }]);
  await journal.close();
  const { journal: j, records } = await Journal.open(file, noFailure);
  assert.deepEqual(
    records.map((r) => r.json),
    ["snapshot", 4],
  );
  assert.ok(readFileSync(file).subarray(0, 8).equals(journalMagic));
  await j.close();
});
