import assert from "node:assert/strict";
import { test } from "node:test";
import { coalesce } from "../../../src/core/invoke/batch";

async function collect(src: AsyncIterable<Uint8Array>): Promise<number[][]> {
  const out: number[][] = [];
  for await (const chunk of src) out.push([...chunk]);
  return out;
}

test("chunks that are ready together are sent as one", async () => {
  async function* ready() {
    for (let i = 0; i < 5; i++) yield Uint8Array.of(i);
  }
  assert.deepEqual(await collect(coalesce(ready())), [[0, 1, 2, 3, 4]]);
});

test("a chunk that is not ready does not hold back the ones before it", async () => {
  const seen: number[][] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  async function* slow() {
    yield Uint8Array.of(1);
    yield Uint8Array.of(2);
    await gate;
    yield Uint8Array.of(3);
  }
  const it = coalesce(slow())[Symbol.asyncIterator]();
  seen.push([...((await it.next()).value as Uint8Array)]);
  assert.deepEqual(seen, [[1, 2]], "the first two are sent before the third exists");
  release();
  seen.push([...((await it.next()).value as Uint8Array)]);
  assert.deepEqual(seen, [[1, 2], [3]]);
  assert.equal((await it.next()).done, true);
});

test("batches stop at 64 KiB", async () => {
  async function* big() {
    for (let i = 0; i < 3; i++) yield new Uint8Array(40000);
  }
  const sizes = (await collect(coalesce(big()))).map((c) => c.length);
  assert.deepEqual(sizes, [80000, 40000]);
});
