// `protocall listen` and `listen list` on a store damaged on disk: every intact delivery is kept and a
// warning line on stderr names what was skipped; a torn tail (a crash mid-write) is cut off silently.
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { encodeEvent, samplePushEvent } from "../../src/core/webhooks/event";
import { closePostConnections, post } from "../../src/core/webhooks/http-post";
import { startCliServer, waitFor } from "../core/webhooks/support";
import { runCli } from "../support/cli";

async function ids(store: string): Promise<{ ids: number[]; stderr: string }> {
  const r = await runCli(["listen", "list", "--store", store]);
  assert.equal(r.code, 0, r.stderr);
  return {
    ids: r.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { id: number }).id),
    stderr: r.stderr,
  };
}

test("a corrupt byte in the middle of the store: later deliveries kept, a warning on stderr", {
  timeout: 60_000,
}, async () => {
  const store = join(mkdtempSync(join(tmpdir(), "protocall-listen-store-")), "events.store");
  const first = await startCliServer(["listen", "--store", store, "--quiet"]);
  try {
    for (let i = 0; i < 6; i++) {
      const res = await post(first.url, encodeEvent(samplePushEvent()), {
        "content-type": "application/proto",
      });
      assert.equal(res.status, 200);
    }
  } finally {
    closePostConnections();
    await first.stop();
  }
  // A torn tail alone: cut off without a word.
  appendFileSync(store, Buffer.from([90, 0, 0, 0, 1, 2, 3, 4, 123]));
  assert.deepEqual(await ids(store), { ids: [1, 2, 3, 4, 5, 6], stderr: "" });

  const data = readFileSync(store);
  let at = -1;
  for (let i = 0; i < 3; i++) at = data.indexOf('{"kind":"delivery"', at + 1);
  data[at + 50] ^= 0x01; // inside delivery 3
  writeFileSync(store, data);

  const listed = await ids(store);
  assert.deepEqual(listed.ids, [1, 2, 4, 5, 6]);
  assert.match(
    listed.stderr,
    /^protocall: warning: the event store was damaged: skipped \d+ bytes at offset \d+ of .*events\.store \(between deliveries 2 and 4\), kept every intact record, lost delivery 3\n$/,
  );

  const second = await startCliServer(["listen", "--store", store, "--quiet"]);
  try {
    assert.match(
      second.stderr(),
      /protocall: warning: the event store was damaged: .*lost delivery 3; the damaged bytes were moved to .*events\.store\.damaged/,
    );
    await waitFor(() => /\(5 stored\)/.test(second.stderr()), "the count of stored deliveries");
  } finally {
    await second.stop();
  }
  assert.deepEqual(await ids(store), { ids: [1, 2, 4, 5, 6], stderr: "" });
});
