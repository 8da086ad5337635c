// The call store's bound: past --max-store the oldest calls leave the file and the calls kept in
// memory alike, so a long-running proxy holds no more calls than its store does.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { CallStore, type ProxiedCall, readCalls } from "../../../src/core/proxy/call-store";

const work = mkdtempSync(join(tmpdir(), "protocall-call-store-"));
after(() => rmSync(work, { recursive: true, force: true }));

function call(id: number): ProxiedCall {
  return {
    id,
    startedAt: new Date(0).toISOString(),
    upstream: "http://127.0.0.1:1",
    method: "demo.v1.GreetService/Greet",
    protocol: "grpc",
    httpVersion: "2",
    status: "ok",
    httpStatus: 200,
    durationMs: 1,
    requestBytes: 1000,
    responseBytes: 0,
    requestHeaders: {},
    responseHeaders: {},
    trailers: {},
    requestMessages: [Buffer.alloc(1000, id % 251).toString("base64")],
    responseMessages: [],
    truncated: false,
  };
}

test("the calls in memory are bounded with the store: the oldest are dropped from both", async () => {
  const file = join(work, "bounded.store");
  const maxBytes = 32 * 1024;
  const store = await CallStore.open(file, maxBytes);
  for (let i = 0; i < 300; i++) await store.add(call(store.allocateId()));
  const onDisk = readCalls(file).map((c) => c.id);
  assert.ok(onDisk.length < 300 && onDisk.length > 0, `${onDisk.length} calls on disk`);
  assert.deepEqual(
    store.calls.map((c) => c.id),
    onDisk,
  );
  assert.equal(store.calls[store.calls.length - 1].id, 300, "the newest call is kept");
  // Durable writes never hold up the calls passing through: none ran on the event loop.
  assert.equal(store.writes.inline, 0);
  assert.ok(store.writes.pool > 0);
  await store.close();
  // Reopened, it holds the same calls, and numbering goes on after the newest.
  const again = await CallStore.open(file, maxBytes);
  assert.deepEqual(
    again.calls.map((c) => c.id),
    onDisk,
  );
  assert.equal(again.allocateId(), 301);
  await again.close();
});
