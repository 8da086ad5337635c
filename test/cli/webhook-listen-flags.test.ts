// `protocall listen` flags end to end: --forward-to (to a second listener), --max-body, --max-store.
import assert from "node:assert/strict";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { encodeEvent, samplePushEvent } from "../../src/core/webhooks/event";
import { closePostConnections, post } from "../../src/core/webhooks/http-post";
import { startCliServer, waitFor } from "../core/webhooks/support";
import { runCli } from "../support/cli";

test("listen --forward-to relays events; --max-body rejects big bodies; --max-store prunes the oldest", {
  timeout: 90_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-listen-flags-"));
  const backend = await startCliServer(["listen", "--store", join(dir, "backend.store")]);
  const front = await startCliServer([
    "listen",
    "--store",
    join(dir, "front.store"),
    "--forward-to",
    backend.url,
    "--max-body",
    "1000",
    "--max-store",
    "12000",
  ]);
  try {
    const body = encodeEvent(samplePushEvent());
    const headers = { "content-type": "application/proto" };
    for (let i = 0; i < 30; i++) {
      const res = await post(front.url, body, headers);
      assert.equal(res.status, 200);
    }
    const big = await post(front.url, Buffer.alloc(2000, 1), headers);
    assert.equal(big.status, 413);
    assert.match(big.body.toString(), /"code":"resource_exhausted".*exceeds the limit of 1000 bytes/);
    await waitFor(
      () => front.lines.filter((l) => l.includes('"forward"')).length === 30,
      "30 forward results",
    );
    const forwards = front.lines.filter((l) => l.includes('"forward"')).map((l) => JSON.parse(l));
    assert.ok(forwards.every((f) => f.forward.status === 200 && f.forward.url === backend.url));
    await waitFor(() => backend.lines.length === 31, "30 events at the backend");
    // Replay a stored delivery to the URL it was forwarded to: the newest, which --max-store keeps
    // (forwards finish in any order, so the last line printed may be an older, pruned one).
    const newest = forwards.reduce((a, b) => (b.id > a.id ? b : a));
    const replayed = await runCli([
      "listen",
      "replay",
      String(newest.id),
      "--store",
      join(dir, "front.store"),
      "--to-forward",
    ]);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(JSON.parse(replayed.stdout).to, backend.url);
    await waitFor(() => backend.lines.length === 32, "the replay at the backend");
  } finally {
    await front.stop();
    await backend.stop();
    closePostConnections();
  }
  assert.ok(statSync(join(dir, "front.store")).size <= 12000);
  const frontList = await runCli(["listen", "list", "--store", join(dir, "front.store")]);
  const rows = frontList.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.ok(rows.length < 31, `expected pruning, found ${rows.length} deliveries`);
  assert.equal(rows.at(-1).status, "rejected");
  assert.equal(rows.at(-1).httpStatus, 413);
  const ids = rows.map((r) => r.id);
  assert.deepEqual(
    ids,
    Array.from({ length: ids.length }, (_, i) => 32 - ids.length + i),
    "the newest are kept",
  );
  const back = await runCli(["listen", "list", "--store", join(dir, "backend.store")]);
  assert.equal(back.stdout.trim().split("\n").length, 31);
});
