// `protocall proxy` killed with SIGKILL while 10 clients call through it: every call whose line it
// printed is in the store (a call is printed only after it is written and synced), and the store
// reopens for the next proxy.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readCalls } from "../../src/core/proxy/call-store";
import { startCliServer, waitFor } from "../core/webhooks/support";
import { runBufCurl } from "../support/buf";
import { startDemoServer } from "../support/servers";

test("every printed call survives SIGKILL under load, and the store reopens", {
  timeout: 90_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-proxy-crash-"));
  const store = join(dir, "calls.store");
  const demo = await startDemoServer();
  try {
    const proxy = await startCliServer(["proxy", "--upstream", demo.url, "--store", store]);
    const url = new URL(proxy.url);
    let stop = false;
    const sessions = Array.from({ length: 10 }, () => http2.connect(url.origin));
    for (const s of sessions) s.on("error", () => {});
    const call = (session: http2.ClientHttp2Session, n: number) =>
      new Promise<void>((resolve) => {
        try {
          const stream = session.request({
            ":method": "POST",
            ":path": "/demo.v1.GreetService/Greet",
            "content-type": "application/json",
          });
          stream.on("data", () => {});
          stream.on("close", () => resolve());
          stream.on("error", () => resolve());
          stream.end(JSON.stringify({ name: `n${n}` }));
        } catch {
          resolve();
        }
      });
    let next = 0;
    const clients = sessions.map(async (s) => {
      while (!stop && !s.destroyed) await call(s, ++next);
    });
    const printed = () =>
      proxy
        .stderr()
        .split("\n")
        .map((l) => /^#(\d+) demo\.v1\.GreetService\/Greet connect ok /.exec(l)?.[1])
        .filter((id): id is string => id !== undefined)
        .map(Number);
    await waitFor(() => printed().length >= 300, "300 calls printed");
    await proxy.kill();
    stop = true;
    await Promise.all(clients);
    for (const s of sessions) s.destroy();

    const ids = new Set(readCalls(store).map((c) => c.id));
    const lost = printed().filter((id) => !ids.has(id));
    assert.deepEqual(lost, [], `${lost.length} printed calls are not in the store`);
    for (const c of readCalls(store))
      assert.match(JSON.stringify(c.decoded?.request), /^\[\{"name":"n\d+"\}\]$/);

    // The next proxy opens the store (taking over the dead one's lock, cutting a torn tail) and goes on.
    const restarted = await startCliServer(["proxy", "--upstream", demo.url, "--store", store]);
    try {
      const r = await runBufCurl(["-d", '{"name":"after"}', `${restarted.url}/demo.v1.GreetService/Greet`]);
      assert.equal(r.code, 0, r.stderr);
      await waitFor(
        () => readCalls(store).find((c) => JSON.stringify(c.decoded?.request) === '[{"name":"after"}]'),
        "the call after",
      );
      const after = readCalls(store);
      assert.equal(new Set(after.map((c) => c.id)).size, after.length, "ids are reused after the restart");
    } finally {
      await restarted.stop();
    }
  } finally {
    await demo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
