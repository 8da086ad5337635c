// `protocall listen` under a low limit on open files, held by far more silent connections than it may
// open: valid deliveries still succeed (no connection reset), because the connection cap fits the
// descriptor limit and a new connection takes the place of the longest-silent one. And the flags.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { encodeEvent, samplePushEvent } from "../../src/core/webhooks/event";
import { closePostConnections, post } from "../../src/core/webhooks/http-post";
import { startCliServer } from "../core/webhooks/support";
import { runCli } from "../support/cli";

test("under `ulimit -n 100`, 150 silent connections do not stop valid deliveries", {
  timeout: 120_000,
}, async () => {
  const store = join(mkdtempSync(join(tmpdir(), "protocall-listen-ulimit-")), "events.store");
  // Timeouts far longer than the test: only the cap and the eviction keep deliveries flowing.
  const listener = await startCliServer(
    ["listen", "--store", store, "--quiet", "--header-timeout", "5m", "--idle-timeout", "5m"],
    {},
    15_000,
    100,
  );
  const attackers: net.Socket[] = [];
  try {
    const url = new URL(listener.url);
    for (let i = 0; i < 150; i++) {
      const s = net.connect(Number(url.port), "127.0.0.1");
      s.on("error", () => {});
      attackers.push(s);
      await new Promise<void>((resolve) => {
        s.once("connect", () => resolve());
        s.once("close", () => resolve());
      });
    }
    const statuses: (number | string)[] = [];
    for (let i = 0; i < 20; i++) {
      statuses.push(
        await post(listener.url, encodeEvent(samplePushEvent()), {
          "content-type": "application/proto",
        }).then(
          (r) => r.status,
          (err: NodeJS.ErrnoException) => err.code ?? err.message,
        ),
      );
    }
    assert.deepEqual(statuses, Array(20).fill(200));
    assert.match(listener.stderr(), /serving at most \d+ connections at once \(not 512\).*ulimit -n/);
  } finally {
    for (const s of attackers) s.destroy();
    closePostConnections();
    await listener.stop();
  }
  const listed = await runCli(["listen", "list", "--store", store]);
  assert.equal(listed.stdout.trim().split("\n").length, 20);
});

test("listen refuses bad limit flags with the flag's name", async () => {
  for (const [args, message] of [
    [["--header-timeout", "10"], /invalid value "10" for --header-timeout: it has no unit/],
    [["--body-timeout=-1s"], /invalid value "-1s" for --body-timeout: it must not be negative/],
    [
      ["--max-connections", "0"],
      /invalid value "0" for --max-connections: it must be a positive whole number/,
    ],
    [["--forward-queue", "x"], /invalid value "x" for --forward-queue: it must be a positive whole number/],
  ] as const) {
    const r = await runCli(["listen", ...args]);
    assert.equal(r.code, 1, args.join(" "));
    assert.match(r.stderr, message);
  }
});
