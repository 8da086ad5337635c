// The progress of a `--stream-file` upload: the line's units, bar, percent and rate; the meter draws the
// first and last state and at most one per interval between; and the file's documents report the
// bytes the call has taken, from 0 to the file's size.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { streamFileDocuments } from "../../../src/core/invoke/stream-file";
import {
  createProgressMeter,
  formatBytes,
  formatStreamProgress,
  type StreamProgress,
} from "../../../src/core/invoke/stream-progress";

test("sizes in binary units", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(1023), "1023 B");
  assert.equal(formatBytes(1536), "1.5 KiB");
  assert.equal(formatBytes(64 * 1024 * 1024), "64.0 MiB");
  assert.equal(formatBytes(1024 ** 3), "1.00 GiB");
});

test("the line: bar, bytes of total, percent, rate", () => {
  const mib = 1024 * 1024;
  assert.equal(
    formatStreamProgress({ sent: 0, total: 4 * mib }, 0),
    "[--------------------]  0 B / 4.0 MiB  0%",
  );
  assert.equal(
    formatStreamProgress({ sent: mib, total: 4 * mib }, 500),
    "[#####---------------]  1.0 MiB / 4.0 MiB  25%  2.0 MiB/s",
  );
  // Almost done is not shown as done.
  assert.match(formatStreamProgress({ sent: 4 * mib - 1, total: 4 * mib }, 1000), /^\[#{19}-\] .* 99% /);
  assert.equal(formatStreamProgress({ sent: 0, total: 0 }, 0, 0), "0 B / 0 B  100%");
});

test("the meter draws the first and last state, and at most one per interval between", () => {
  let t = 0;
  const drawn: [string, number][] = [];
  const meter = createProgressMeter({ draw: (l, f) => drawn.push([l, f]), intervalMs: 100, now: () => t });
  meter({ sent: 0, total: 1000 });
  for (let sent = 10; sent < 1000; sent += 10) {
    t += 5;
    meter({ sent, total: 1000 });
  }
  t += 1;
  meter({ sent: 1000, total: 1000 });
  // 0 ms, then at 100, 200, ... 495 ms: 1 + 4 draws, then the last.
  assert.equal(drawn.length, 6, drawn.map((d) => d[0]).join("\n"));
  assert.equal(drawn[0][1], 0);
  assert.deepEqual(drawn.at(-1), ["[####################]  1000 B / 1000 B  100%  2.0 KiB/s", 1]);
});

test("the file's documents report the bytes the call has taken, from 0 to the size", async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-stream-progress-"));
  writeFileSync(join(dir, "f.bin"), Buffer.alloc(2500, 1));
  const seen: StreamProgress[] = [];
  const docs = streamFileDocuments("data=f.bin", 1000, dir, (p) => seen.push({ ...p }));
  const taken: number[] = [];
  for await (const d of docs) {
    taken.push(seen.at(-1)?.sent ?? -1);
    assert.ok(d.value);
  }
  // When each chunk is handed over, only the chunks before it count as sent.
  assert.deepEqual(taken, [0, 1000, 2000]);
  assert.deepEqual(seen, [
    { sent: 0, total: 2500 },
    { sent: 1000, total: 2500 },
    { sent: 2000, total: 2500 },
    { sent: 2500, total: 2500 },
  ]);
});
