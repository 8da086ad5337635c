// The batched output of response messages: few large writes, backpressure honoured, and no listener
// piled onto the stream however many writers wait or however many calls share it.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { OutputSink, sinkFor } from "../../../src/core/invoke/output-sink";

/** A stream that takes one write at a time and drains only when the test says so. */
class SlowStream extends Writable {
  chunks: string[] = [];
  private pending: (() => void)[] = [];
  constructor() {
    super({ highWaterMark: 1, decodeStrings: false });
  }
  override _write(chunk: string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.chunks.push(chunk);
    this.pending.push(() => cb());
  }
  release(): void {
    const all = this.pending;
    this.pending = [];
    for (const cb of all) cb();
  }
}

test("many writers waiting on a full stream share one wait: no listener piles up; order is kept", async () => {
  const stream = new SlowStream();
  const sink = new OutputSink(stream, true);
  const big = (i: number) => `${String(i).padStart(4, "0")}${"x".repeat(70_000)}\n`;
  const waits: Promise<void>[] = [];
  for (let i = 0; i < 30; i++) {
    const w = sink.write(big(i));
    if (w) waits.push(w);
    assert.ok(stream.listenerCount("error") <= 2, `error listeners: ${stream.listenerCount("error")}`);
    assert.ok(stream.listenerCount("drain") <= 1, `drain listeners: ${stream.listenerCount("drain")}`);
  }
  assert.ok(waits.length > 0, "the writers were asked to wait");
  const released = setInterval(() => stream.release(), 1);
  try {
    await Promise.all(waits);
    await sink.close();
  } finally {
    clearInterval(released);
  }
  const text = stream.chunks.join("");
  assert.equal(text.length, 30 * big(0).length);
  const order = text
    .split("\n")
    .filter(Boolean)
    .map((line) => Number(line.slice(0, 4)));
  assert.deepEqual(
    order,
    Array.from({ length: 30 }, (_, i) => i),
  );
  assert.ok(stream.chunks.length < 30, "batched into fewer writes than messages");
});

test("one sink per stream: calls that share stdout add no listener each", async () => {
  const chunks: string[] = [];
  const stdout = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  const before = stdout.listenerCount("error");
  for (let i = 0; i < 15; i++) {
    const sink = sinkFor(stdout);
    sink.write(`message ${i}\n`);
    await sink.close();
  }
  assert.equal(sinkFor(stdout), sinkFor(stdout));
  assert.equal(stdout.listenerCount("error"), before + 1);
  assert.equal(chunks.join(""), Array.from({ length: 15 }, (_, i) => `message ${i}\n`).join(""));
});

test("a broken stream is reported once to each listener, and later writes are dropped", async () => {
  const stream = new Writable({
    write(_chunk, _enc, cb) {
      cb(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    },
  });
  const sink = new OutputSink(stream, false);
  const seen: string[] = [];
  const off = sink.onBroken((err) => seen.push(err.message));
  sink.write("x".repeat(70_000));
  await new Promise((r) => setImmediate(r));
  assert.equal(sink.broken?.code, "EPIPE");
  assert.deepEqual(seen, ["write EPIPE"]);
  off();
  assert.equal(sink.write("more"), undefined);
  await sink.close();
});
