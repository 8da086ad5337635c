// The load histogram: HdrHistogram's layout (3 significant digits), its percentiles against exact
// ones, merging, and the standard compressed encoding read back.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeHdr, encodeHdr } from "../../../src/core/load/hdr-encoding";
import { Histogram, highestAt, indexOf, lowestAt } from "../../../src/core/load/histogram";

describe("load histogram", () => {
  test("indexes values as HdrHistogram does with 3 significant digits (2048 sub-buckets)", () => {
    assert.equal(indexOf(0), 0);
    assert.equal(indexOf(2047), 2047);
    assert.equal(indexOf(2048), 2048); // bucket 1, sub-bucket 1024
    assert.equal(indexOf(2049), 2048); // resolution 2 from 2048
    assert.equal(indexOf(4096), 3072);
    for (const v of [1, 999, 2048, 5000, 123_456, 9_999_999, 2 ** 33 + 17]) {
      const i = indexOf(v);
      assert.ok(lowestAt(i) <= v && v <= highestAt(i), `${v} in [${lowestAt(i)}, ${highestAt(i)}]`);
      assert.ok((highestAt(i) - lowestAt(i)) / v < 0.001, `${v}: 3 significant digits`);
    }
  });

  test("percentiles are within 0.1% of the exact ones, and min/max are exact", () => {
    const h = new Histogram();
    const values: number[] = [];
    let seed = 7;
    for (let i = 0; i < 20_000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const v = 100 + (seed % 5_000_000);
      values.push(v);
      h.record(v);
    }
    values.sort((a, b) => a - b);
    for (const p of [50, 90, 99, 99.9]) {
      const exact = values[Math.ceil((p / 100) * values.length) - 1];
      const got = h.percentile(p);
      assert.ok(Math.abs(got - exact) / exact <= 0.001, `p${p}: ${got} vs ${exact}`);
    }
    assert.equal(h.min, values[0]);
    assert.equal(h.max, values[values.length - 1]);
    assert.equal(h.count, values.length);
  });

  test("merging adds the counts", () => {
    const a = new Histogram();
    const b = new Histogram();
    for (let i = 1; i <= 100; i++) a.record(i * 1000);
    for (let i = 101; i <= 200; i++) b.record(i * 1000);
    a.add(b);
    assert.equal(a.count, 200);
    assert.ok(Math.abs(a.percentile(50) - 100_000) <= 100);
    assert.equal(a.max, 200_000);
  });

  test("the HdrHistogram V2 compressed encoding reads back to the same counts", () => {
    const h = new Histogram();
    for (const v of [1, 5, 5, 2047, 2048, 70_000, 70_000, 3_000_000_000]) h.record(v);
    const text = encodeHdr(h);
    // The compressed cookie of HdrHistogram's V2 format, big-endian, base64 "HIST…".
    assert.equal(Buffer.from(text, "base64").readInt32BE(0), 0x1c849314);
    const back = decodeHdr(text);
    assert.equal(back.count, h.count);
    assert.deepEqual([...back.counts], [...h.counts]);
    assert.equal(back.percentile(50), h.percentile(50));
    assert.equal(encodeHdr(new Histogram()).length > 0, true);
    assert.throws(
      () => decodeHdr("bm90IGEgaGlzdG9ncmFt"),
      /not an HdrHistogram of a load report: unknown header/,
    );
  });
});
