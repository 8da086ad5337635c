// `protocall listen --forward-to` a backend that never answers, stopped with SIGTERM while forwards
// are in flight and queued: it exits within seconds (not after the forward timeout), and every event
// it accepted has a forward result saying it was not forwarded, with the URL to replay it to.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import http from "node:http";
import type net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { encodeEvent, samplePushEvent } from "../../src/core/webhooks/event";
import { closePostConnections, post } from "../../src/core/webhooks/http-post";
import { startCliServer, waitFor } from "../core/webhooks/support";
import { runCli } from "../support/cli";

test("SIGTERM stops within seconds while a backend never answers; unforwarded events are recorded", {
  timeout: 120_000,
}, async () => {
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const backend = http.createServer((req) => {
    requests++;
    req.resume(); // and never answer
  });
  backend.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => backend.listen(0, "127.0.0.1", r));
  const backendUrl = `http://127.0.0.1:${(backend.address() as net.AddressInfo).port}/hook`;
  const store = join(mkdtempSync(join(tmpdir(), "protocall-listen-stop-")), "events.store");
  const listener = await startCliServer([
    "listen",
    "--store",
    store,
    "--forward-to",
    backendUrl,
    "--forward-timeout",
    "10m",
    "--quiet",
  ]);
  try {
    const body = encodeEvent(samplePushEvent());
    for (let i = 0; i < 100; i++) {
      assert.equal((await post(listener.url, body, { "content-type": "application/proto" })).status, 200);
    }
    await waitFor(() => requests >= 16, "forwards in flight at the backend");
    const exited = new Promise<number | null>((resolve) =>
      listener.child.once("exit", (code) => resolve(code)),
    );
    listener.child.kill("SIGTERM");
    const code = await Promise.race([
      exited,
      new Promise((r) => setTimeout(() => r("still running"), 20_000)),
    ]);
    assert.equal(code, 0, "exited on SIGTERM");
  } finally {
    await listener.kill();
    closePostConnections();
    for (const s of sockets) s.destroy();
    backend.close();
  }
  const listed = await runCli(["listen", "list", "--store", store]);
  const rows = listed.stdout
    .trim()
    .split("\n")
    .map(
      (l) => JSON.parse(l) as { status: string; forward?: { url: string; status: number; error?: string } },
    );
  assert.equal(rows.length, 100);
  for (const r of rows) {
    assert.equal(r.forward?.url, backendUrl);
    assert.equal(r.forward?.status, 0);
    assert.match(r.forward?.error ?? "", /^not forwarded: the listener stopped/);
  }
});
