// `protocall listen` killed with SIGKILL while 20 senders deliver events, then restarted on the same
// store: every event it acknowledged is in the store (the answer is sent only after fsync).
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { samplePushEvent } from "../../src/core/webhooks/event";
import { EventRequestSchema } from "../../src/gen/buf/alpha/webhook/v1alpha1/event_pb";
import { startCliServer } from "../core/webhooks/support";
import { runCli } from "../support/cli";

function eventBytes(n: number): Uint8Array {
  const event = samplePushEvent();
  const push = event.payload!.payload.value!;
  push.repositoryCommit!.id = `commit-${n}`;
  return toBinary(EventRequestSchema, create(EventRequestSchema, event));
}

test("every acknowledged event survives SIGKILL under load, and the store reopens", {
  timeout: 60_000,
}, async () => {
  const store = join(mkdtempSync(join(tmpdir(), "protocall-crash-")), "events.store");
  const listener = await startCliServer(["listen", "--store", store, "--quiet"]);
  const url = new URL(listener.url);
  const acked = new Set<number>();
  let next = 0;
  let stop = false;
  const sessions = Array.from({ length: 20 }, () => http2.connect(url.origin));
  for (const s of sessions) s.on("error", () => {});
  const send = (session: http2.ClientHttp2Session, n: number) =>
    new Promise<number>((resolve) => {
      try {
        const stream = session.request({
          ":method": "POST",
          ":path": url.pathname,
          "content-type": "application/proto",
        });
        let status = 0;
        stream.on("response", (h) => {
          status = Number(h[":status"]);
        });
        stream.on("data", () => {});
        stream.on("close", () => resolve(status));
        stream.on("error", () => resolve(0));
        stream.end(eventBytes(n));
      } catch {
        resolve(0);
      }
    });
  const senders = sessions.map(async (session) => {
    while (!stop && !session.destroyed) {
      const n = ++next;
      if ((await send(session, n)) === 200) acked.add(n);
    }
  });
  const deadline = Date.now() + 20_000;
  while (acked.size < 500 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await listener.kill(); // SIGKILL while requests are in flight
  stop = true;
  await Promise.all(senders);
  for (const s of sessions) s.destroy();
  assert.ok(acked.size >= 500, `only ${acked.size} events acknowledged before the kill`);

  // Restart on the same store: it opens (cutting a torn tail, if any) and keeps serving.
  const restarted = await startCliServer(["listen", "--store", store, "--quiet"]);
  try {
    const sent = await runCli(["webhook", "send-test", "--to", restarted.url]);
    assert.equal(sent.code, 0, sent.stderr);
  } finally {
    await restarted.stop();
  }
  const listed = await runCli(["listen", "list", "--store", store], { timeoutMs: 30_000 });
  assert.equal(listed.code, 0, listed.stderr);
  const stored = new Set<string>();
  for (const line of listed.stdout.trim().split("\n")) {
    const d = JSON.parse(line) as {
      status: string;
      event?: { payload: { repositoryPush: { repositoryCommit: { id: string } } } };
    };
    if (d.status === "accepted") stored.add(d.event!.payload.repositoryPush.repositoryCommit.id);
  }
  const lost = [...acked].filter((n) => !stored.has(`commit-${n}`));
  assert.deepEqual(lost, [], `${lost.length} of ${acked.size} acknowledged events missing`);
  assert.ok(stored.size >= acked.size + 1);
});
