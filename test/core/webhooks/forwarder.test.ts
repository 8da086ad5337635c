// Forwarding is bounded: a backend that never answers is given up after the timeout, events past the
// queue limit are recorded as not forwarded at once, and stopping abandons what is still in flight
// after a short grace period, recording every event that was not forwarded (for a later replay).
import assert from "node:assert/strict";
import http from "node:http";
import type net from "node:net";
import { after, test } from "node:test";
import { Forwarder } from "../../../src/core/webhooks/forwarder";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import type { ForwardResult } from "../../../src/core/webhooks/store";
import { waitFor } from "./support";

after(() => closePostConnections());

/** A backend that accepts connections and reads requests, and never answers. */
async function silentBackend(): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req) => {
    requests++;
    req.resume();
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hook`,
    requests: () => requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

function recorder() {
  const results = new Map<number, ForwardResult>();
  return {
    results,
    record: async (id: number, result: ForwardResult) => {
      assert.equal(results.has(id), false, `event ${id} recorded twice`);
      results.set(id, result);
    },
  };
}

const body = new Uint8Array([8, 1]);

test("a backend that never answers is given up after the forward timeout", async () => {
  const backend = await silentBackend();
  const { results, record } = recorder();
  const forwarder = new Forwarder({ url: backend.url, timeoutMs: 300 }, record);
  try {
    forwarder.enqueue(1, body);
    await waitFor(() => results.get(1), "the result");
    assert.deepEqual(
      { status: results.get(1)!.status, error: results.get(1)!.error, url: results.get(1)!.url },
      { status: 0, error: "no answer within 300 ms", url: backend.url },
    );
  } finally {
    await forwarder.stop();
    await backend.close();
  }
});

test("past the queue limit, events are recorded as not forwarded at once; stopping records the rest", async () => {
  const backend = await silentBackend();
  const { results, record } = recorder();
  const forwarder = new Forwarder(
    { url: backend.url, timeoutMs: 60_000, maxQueue: 4, concurrency: 3 },
    record,
  );
  try {
    for (let id = 1; id <= 20; id++) forwarder.enqueue(id, body);
    assert.deepEqual(forwarder.pending, { queued: 4, inFlight: 3 });
    await waitFor(() => results.size === 13, "13 events refused");
    for (let id = 8; id <= 20; id++) {
      assert.equal(results.get(id)?.error, "not forwarded: 4 events were already waiting to be forwarded");
      assert.equal(results.get(id)?.url, backend.url);
    }
    await waitFor(() => backend.requests() === 3, "3 requests at the backend");
    const started = Date.now();
    await forwarder.stop(300);
    assert.ok(Date.now() - started < 20_000, "stop does not wait for the forward timeout");
    assert.equal(results.size, 20, "every event has a result");
    for (const id of [1, 2, 3]) {
      assert.equal(results.get(id)?.error, "not forwarded: the listener stopped before the backend answered");
    }
    for (const id of [4, 5, 6, 7])
      assert.equal(results.get(id)?.error, "not forwarded: the listener stopped first");
    forwarder.enqueue(21, body);
    await waitFor(() => results.get(21), "the result of an event after stop");
    assert.equal(results.get(21)?.error, "not forwarded: the listener was stopping");
  } finally {
    await backend.close();
  }
});

test("answers are recorded with status, body and latency; the queue drains in order", async () => {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push(req.headers["content-type"] ?? "");
      res.writeHead(req.url === "/fail" ? 500 : 200);
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  const { results, record } = recorder();
  const forwarder = new Forwarder({ url: `http://127.0.0.1:${port}/hook`, concurrency: 1 }, record);
  try {
    for (let id = 1; id <= 5; id++) forwarder.enqueue(id, body);
    await waitFor(() => results.size === 5, "5 results");
    for (const r of results.values()) {
      assert.equal(r.status, 200);
      assert.equal(r.body, "ok");
      assert.match(String(r.latencyMs), /^\d+(\.\d)?$/, "latency in tenths of a millisecond");
    }
    assert.deepEqual(seen, Array(5).fill("application/proto"));
  } finally {
    await forwarder.stop();
    server.close();
  }
});
