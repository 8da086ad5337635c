import assert from "node:assert/strict";
import http from "node:http";
import { test } from "node:test";
import { Deliverer } from "../../../src/core/registry-emulator/deliverer";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { waitFor } from "../webhooks/support";

test("batches of up to batch-size, one per interval, each event POSTed as Connect binary; no retries", async () => {
  const seen: { body: string; type: string; at: number }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        body: Buffer.concat(chunks).toString(),
        type: req.headers["content-type"] ?? "",
        at: Date.now(),
      });
      const fail = Buffer.concat(chunks).toString() === "fail";
      res.writeHead(fail ? 500 : 200);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  const deliverer = new Deliverer({ batchSize: 20, batchIntervalMs: 150 });
  try {
    const queuedAt = Date.now();
    for (let i = 0; i < 45; i++) {
      deliverer.enqueue({
        webhookId: "w",
        owner: "acme",
        repository: i % 2 ? "a" : "b",
        callbackUrl: url,
        commitId: `c${i}`,
        body: Buffer.from(i === 44 ? "fail" : `e${i}`),
      });
    }
    await waitFor(() => deliverer.list().length === 45, "45 attempts");
    const sizes = new Map<number, number>();
    for (const a of deliverer.list()) sizes.set(a.batch, (sizes.get(a.batch) ?? 0) + 1);
    assert.deepEqual(
      [...sizes.entries()],
      [
        [1, 20],
        [2, 20],
        [3, 5],
      ],
    );
    assert.ok(seen[0].at - queuedAt >= 140, "the first batch waits one interval");
    assert.ok(seen.every((s) => s.type === "application/proto"));
    // Per repository, push order.
    for (const repo of ["a", "b"]) {
      const ids = deliverer
        .list()
        .filter((a) => a.repository === repo)
        .map((a) => Number(a.commitId.slice(1)));
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => x - y),
      );
    }
    const failed = deliverer.list().find((a) => a.commitId === "c44")!;
    assert.equal(failed.success, false);
    assert.equal(failed.httpStatus, 500);
    assert.equal(failed.error, "HTTP 500");
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(seen.length, 45, "a failed delivery is not retried");
  } finally {
    await deliverer.close();
    closePostConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
