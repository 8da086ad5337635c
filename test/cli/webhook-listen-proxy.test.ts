// `protocall listen --forward-to` and `listen replay` reach the backend through the environment's
// proxy (HTTP_PROXY, as calls do): a real tinyproxy's log shows the CONNECT of each.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { encodeEvent, samplePushEvent } from "../../src/core/webhooks/event";
import { closePostConnections, post } from "../../src/core/webhooks/http-post";
import { startCliServer, waitFor } from "../core/webhooks/support";
import { runCli } from "../support/cli";
import { startTinyproxy, viaProxyName } from "../support/proxy";

test("listen forwards and replays through HTTP_PROXY", { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-listen-proxy-"));
  const proxy = await startTinyproxy();
  const backend = await startCliServer(["listen", "--store", join(dir, "backend.store")]);
  const forwardTo = viaProxyName(backend.url);
  const env = { HTTP_PROXY: proxy.url, NO_PROXY: "", no_proxy: "" };
  const front = await startCliServer(
    ["listen", "--store", join(dir, "front.store"), "--forward-to", forwardTo],
    env,
  );
  const through = () => proxy.connects().filter((c) => c === new URL(forwardTo).host).length;
  try {
    const res = await post(front.url, encodeEvent(samplePushEvent()), {
      "content-type": "application/proto",
    });
    assert.equal(res.status, 200);
    await waitFor(() => backend.lines.length === 2, "the forwarded event at the backend");
    assert.ok(through() >= 1, `no CONNECT ${forwardTo} in the proxy's log`);
    await waitFor(() => front.lines.some((l) => l.includes('"forward"')), "the forward result");
    const forwarded = front.lines.find((l) => l.includes('"forward"')) ?? "";
    assert.equal(JSON.parse(forwarded).forward.status, 200);
    const before = through();
    const replayed = await runCli(
      [
        "listen",
        "replay",
        String(JSON.parse(forwarded).id),
        "--store",
        join(dir, "front.store"),
        "--to-forward",
      ],
      { env },
    );
    assert.equal(replayed.code, 0, replayed.stderr);
    await waitFor(() => backend.lines.length === 3, "the replay at the backend");
    assert.equal(through(), before + 1);
  } finally {
    await front.stop();
    await backend.stop();
    await proxy.stop();
    closePostConnections();
  }
});
