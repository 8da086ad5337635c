import assert from "node:assert/strict";
import { test } from "node:test";
import { exportDeliveries, exportFormatOf } from "../../../src/core/webhooks/delivery-export";
import type { StoredDelivery } from "../../../src/core/webhooks/store";

function delivery(id: number): StoredDelivery {
  return {
    kind: "delivery",
    id,
    receivedAt: `2026-03-04T05:06:0${id}.000Z`,
    remoteAddress: "127.0.0.1",
    method: "POST",
    path: "/buf.alpha.webhook.v1alpha1.EventService/Event",
    listenerUrl: "http://127.0.0.1:1/buf.alpha.webhook.v1alpha1.EventService/Event",
    headers: { "content-type": "application/json" },
    body: Buffer.from(`{"n":${id}}`).toString("base64"),
    status: "accepted",
    httpStatus: 200,
    event: { event: "WEBHOOK_EVENT_REPOSITORY_PUSH" },
  };
}

test("JSON Lines: one object per line, in order, with the raw body", () => {
  const text = exportDeliveries([delivery(1), delivery(2)], "jsonl");
  const lines = text.trimEnd().split("\n");
  assert.equal(lines.length, 2);
  const parsed = lines.map((l) => JSON.parse(l));
  assert.deepEqual(
    parsed.map((p) => p.id),
    [1, 2],
  );
  assert.equal(Buffer.from(parsed[1].body, "base64").toString(), '{"n":2}');
  assert.equal(parsed[0].rawSize, 7);
  assert.deepEqual(parsed[0].event, { event: "WEBHOOK_EVENT_REPOSITORY_PUSH" });
});

test("JSON array: the same objects in one array", () => {
  const parsed = JSON.parse(exportDeliveries([delivery(1), delivery(2)], "json"));
  assert.ok(Array.isArray(parsed));
  assert.deepEqual(
    parsed.map((p: { id: number }) => p.id),
    [1, 2],
  );
  assert.equal(exportDeliveries([], "json").trim(), "[]");
  assert.equal(exportDeliveries([], "jsonl"), "");
});

test("the file name suggests the format", () => {
  assert.equal(exportFormatOf("/tmp/x.jsonl"), "jsonl");
  assert.equal(exportFormatOf("x.NDJSON"), "jsonl");
  assert.equal(exportFormatOf("x.json"), "json");
});
