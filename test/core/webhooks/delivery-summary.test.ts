import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonValue } from "@bufbuild/protobuf";
import {
  deliveryDocument,
  plainText,
  shortTime,
  summarizeDelivery,
} from "../../../src/core/webhooks/delivery-summary";
import { eventToJson, samplePushEvent } from "../../../src/core/webhooks/event";
import type { StoredDelivery } from "../../../src/core/webhooks/store";

/** The parts of a push event's protobuf JSON the tests read and change. */
interface PushJson {
  payload: {
    repositoryPush: {
      repository: { name: string };
      repositoryCommit: { name: string; author: string; tags: { name: string }[] };
    };
  };
}

function delivery(over: Partial<StoredDelivery> = {}): StoredDelivery {
  return {
    kind: "delivery",
    id: 7,
    receivedAt: "2026-03-04T05:06:07.000Z",
    remoteAddress: "127.0.0.1",
    method: "POST",
    path: "/buf.alpha.webhook.v1alpha1.EventService/Event",
    listenerUrl: "https://127.0.0.1:1/buf.alpha.webhook.v1alpha1.EventService/Event",
    headers: { "content-type": "application/proto", "user-agent": "registry" },
    body: Buffer.from("0123456789").toString("base64"),
    status: "accepted",
    httpStatus: 200,
    event: eventToJson(samplePushEvent(new Date("2026-03-04T05:06:00Z"))),
    ...over,
  };
}

test("an accepted push: repository and short commit, then time, author and tags", () => {
  const d = delivery();
  const commit = (
    (d.event as unknown as PushJson).payload.repositoryPush.repositoryCommit.name as string
  ).slice(0, 8);
  const s = summarizeDelivery(d, new Date("2026-03-04T05:06:07.000Z"));
  assert.equal(s.rejected, false);
  assert.equal(s.label, `acme/petapis ${commit}`);
  assert.equal(s.description, `${shortTime(d.receivedAt, new Date(d.receivedAt))} · alice · v1.0.0`);
  assert.equal(s.repository, "acme/petapis");
  assert.equal(s.author, "alice");
  assert.deepEqual(s.tags, ["v1.0.0"]);
  assert.match(s.tooltip, /^#7 accepted \(HTTP 200\)/);
  assert.match(s.tooltip, /10 bytes/);
});

test("a rejected delivery: its status and reason", () => {
  const s = summarizeDelivery(
    delivery({
      status: "rejected",
      httpStatus: 415,
      reason: 'unsupported content type "text/plain"',
      event: undefined,
    }),
  );
  assert.equal(s.rejected, true);
  assert.equal(s.label, "Rejected (HTTP 415)");
  assert.match(s.description, / · unsupported content type "text\/plain"$/);
  assert.match(s.tooltip, /reason: unsupported content type/);
});

test("hostile text stays literal, on one line, and bounded", () => {
  const ev = eventToJson(samplePushEvent()) as unknown as PushJson;
  ev.payload.repositoryPush.repositoryCommit.author = "<img src=x onerror=alert(1)>";
  ev.payload.repositoryPush.repositoryCommit.tags[0].name = "v1\n[x](command:workbench.action.quit)";
  ev.payload.repositoryPush.repository.name = "p".repeat(500);
  const s = summarizeDelivery(delivery({ event: ev as unknown as JsonValue }));
  assert.equal(s.author, "<img src=x onerror=alert(1)>");
  assert.ok(s.description.includes("<img src=x onerror=alert(1)>"));
  assert.ok(!s.description.includes("\n"));
  assert.ok(s.tooltip.includes("author: <img src=x onerror=alert(1)>"));
  assert.ok(s.label.length <= 110, `label is ${s.label.length} characters`);
  assert.equal(plainText("a\u0000b\r\nc\u2028d"), "a b c d");
});

test("a replayed delivery says which one it replays", () => {
  const s = summarizeDelivery(
    delivery({ headers: { "content-type": "application/proto", "x-protocall-replay-of": "3" } }),
  );
  assert.equal(s.replayOf, "3");
  assert.match(s.description, /replay of #3$/);
});

test("shortTime shows the date only for another day", () => {
  const t = new Date(2026, 2, 4, 5, 6, 7);
  assert.equal(shortTime(t.toISOString(), new Date(2026, 2, 4, 23, 0, 0)), "05:06:07");
  assert.equal(shortTime(t.toISOString(), new Date(2026, 2, 5, 1, 0, 0)), "2026-03-04 05:06:07");
});

test("the document has the decoded event, the headers and the raw size", () => {
  const d = delivery();
  const doc = deliveryDocument(d);
  assert.equal(doc.received, d.receivedAt);
  assert.equal(doc.remoteAddress, "127.0.0.1");
  assert.equal(doc.rawSize, 10);
  assert.deepEqual(doc.headers, d.headers);
  assert.deepEqual(doc.event, d.event);
});
