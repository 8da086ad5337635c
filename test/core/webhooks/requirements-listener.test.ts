// Listener rules not covered elsewhere: a wrong method and undecodable JSON are recorded as rejected
// with a Connect error, a chunked oversized body is cut off, good and bad deliveries interleaved are
// sorted correctly, a failed forward is recorded, and no event is acknowledged unless it was stored.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { encodeEvent, samplePushEvent } from "../../../src/core/webhooks/event";
import { closePostConnections, post } from "../../../src/core/webhooks/http-post";
import { startListener } from "../../../src/core/webhooks/listener";
import { EventStore, readStoreFile } from "../../../src/core/webhooks/store";
import { waitFor } from "./support";

const proto = { "content-type": "application/proto", "connect-protocol-version": "1" };

async function withListener(
  fn: (l: Awaited<ReturnType<typeof startListener>>, store: EventStore) => Promise<void>,
  options: { maxBodyBytes?: number; forwardTo?: string } = {},
) {
  const store = await EventStore.open(
    join(mkdtempSync(join(tmpdir(), "protocall-req-listener-")), "events.store"),
  );
  const listener = await startListener({ store, ...options });
  try {
    await fn(listener, store);
  } finally {
    await listener.close();
    await store.close().catch(() => {});
    closePostConnections();
  }
}

/** One HTTP/1.1 request with a chunked body (no Content-Length), or none. */
function request(
  url: string,
  method: string,
  headers: Record<string, string>,
  chunks: Buffer[],
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const out: Buffer[] = [];
      res.on("data", (c: Buffer) => out.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(out).toString() }));
    });
    req.on("error", reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

test("a wrong method and an undecodable JSON body: 4xx Connect errors, recorded as rejected", async () => {
  await withListener(async (listener, store) => {
    const get = await request(listener.callbackUrl, "GET", {}, []);
    assert.equal(get.status, 405);
    assert.deepEqual(Object.keys(JSON.parse(get.body)).sort(), ["code", "message"]);
    assert.equal(JSON.parse(get.body).code, "unimplemented");
    const json = await post(listener.callbackUrl, Buffer.from("{not json"), {
      "content-type": "application/json",
    });
    assert.equal(json.status, 400);
    assert.equal(JSON.parse(json.body.toString()).code, "invalid_argument");
    const stored = await store.list();
    assert.deepEqual(
      stored.map((d) => [d.method, d.status, d.httpStatus]),
      [
        ["GET", "rejected", 405],
        ["POST", "rejected", 400],
      ],
    );
    assert.ok(stored.every((d) => d.reason));
    assert.equal(Buffer.from(stored[1].body, "base64").toString(), "{not json");
  });
});

test("a chunked body past the limit is refused with 413 and the listener keeps serving", async () => {
  await withListener(
    async (listener, store) => {
      const big = await request(listener.callbackUrl, "POST", proto, [
        Buffer.alloc(600, 1),
        Buffer.alloc(600, 1),
      ]);
      assert.equal(big.status, 413);
      assert.equal(JSON.parse(big.body).code, "resource_exhausted");
      const ok = await post(listener.callbackUrl, encodeEvent(samplePushEvent()), proto);
      assert.equal(ok.status, 200);
      assert.deepEqual(
        (await store.list()).map((d) => [d.status, d.httpStatus]),
        [
          ["rejected", 413],
          ["accepted", 200],
        ],
      );
    },
    { maxBodyBytes: 1000 },
  );
});

test("good and garbage deliveries sent at the same time: every good one stored, every bad one rejected", async () => {
  await withListener(async (listener, store) => {
    const good = encodeEvent(samplePushEvent());
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0x07, 0x01]);
    const sends = Array.from({ length: 80 }, (_, i) =>
      post(listener.callbackUrl, i % 2 ? garbage : good, proto).then((r) => [i % 2, r.status]),
    );
    const statuses = await Promise.all(sends);
    assert.ok(statuses.every(([bad, status]) => status === (bad ? 400 : 200)));
    const stored = await store.list();
    assert.equal(stored.filter((d) => d.status === "accepted").length, 40);
    assert.equal(stored.filter((d) => d.status === "rejected").length, 40);
    assert.ok(
      stored
        .filter((d) => d.status === "accepted")
        .every((d) => d.body === Buffer.from(good).toString("base64")),
    );
  });
});

test("a forward that fails is recorded with its error", async () => {
  // A port that was just free: nothing listens on it.
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  await withListener(
    async (listener, store) => {
      assert.equal((await post(listener.callbackUrl, encodeEvent(samplePushEvent()), proto)).status, 200);
      const [d] = await waitFor(async () => {
        const all = await store.list();
        return all[0]?.forward ? all : undefined;
      }, "the forward result");
      assert.equal(d.forward?.status, 0);
      assert.equal(d.forward?.url, `http://127.0.0.1:${port}/hook`);
      assert.match(d.forward?.error ?? "", /ECONNREFUSED/);
    },
    { forwardTo: `http://127.0.0.1:${port}/hook` },
  );
});

test("no acknowledgement without storage: when the store cannot write, the answer is 503, never 200", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "protocall-req-listener-")), "events.store");
  const store = await EventStore.open(file);
  const listener = await startListener({ store });
  try {
    assert.equal((await post(listener.callbackUrl, encodeEvent(samplePushEvent()), proto)).status, 200);
    await store.close(); // every later append fails
    const res = await post(listener.callbackUrl, encodeEvent(samplePushEvent()), proto);
    assert.equal(res.status, 503);
    assert.equal(JSON.parse(res.body.toString()).code, "unavailable");
    const json = await post(
      listener.callbackUrl,
      Buffer.from(JSON.stringify({ event: "WEBHOOK_EVENT_REPOSITORY_PUSH" })),
      {
        "content-type": "application/json",
      },
    );
    assert.notEqual(json.status, 200);
    assert.equal(readStoreFile(file).length, 1);
  } finally {
    await listener.close();
    closePostConnections();
  }
});

test("an HTTP/2 body past the limit is answered 413 at once, even while the sender keeps the stream open", {
  timeout: 15_000,
}, async () => {
  await withListener(
    async (listener, store) => {
      const session = http2.connect(listener.url);
      session.on("error", () => {});
      try {
        const stream = session.request({
          ":method": "POST",
          ":path": new URL(listener.callbackUrl).pathname,
          "content-type": "application/proto",
        });
        stream.on("error", () => {});
        const answer = new Promise<{ status: number; body: string }>((resolve) => {
          let status = 0;
          const chunks: Buffer[] = [];
          stream.on("response", (h) => {
            status = Number(h[":status"]);
          });
          stream.on("data", (c: Buffer) => chunks.push(c));
          stream.on("close", () => resolve({ status, body: Buffer.concat(chunks).toString() }));
        });
        stream.write(Buffer.alloc(1500, 1)); // past the limit; the stream is never ended
        const res = await answer;
        assert.equal(res.status, 413);
        assert.equal(JSON.parse(res.body).code, "resource_exhausted");
        // The session is still usable: a good event on a new stream is stored.
        const ok = await new Promise<number>((resolve, reject) => {
          const s2 = session.request({
            ":method": "POST",
            ":path": new URL(listener.callbackUrl).pathname,
            "content-type": "application/proto",
          });
          let status = 0;
          s2.on("response", (h) => {
            status = Number(h[":status"]);
          });
          s2.on("data", () => {});
          s2.on("close", () => resolve(status));
          s2.on("error", reject);
          s2.end(encodeEvent(samplePushEvent()));
        });
        assert.equal(ok, 200);
        assert.deepEqual(
          (await store.list()).map((d) => [d.status, d.httpStatus]),
          [
            ["rejected", 413],
            ["accepted", 200],
          ],
        );
      } finally {
        session.destroy();
      }
    },
    { maxBodyBytes: 1000 },
  );
});
