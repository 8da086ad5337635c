// Live streams through the call session: messages queued while the call runs are sent as they are
// queued, a response to message 1 arrives before message 2 is queued, Close Send half-closes, and a
// message queued after the call ended is refused. Against the real demo server (connect-node) over
// gRPC, Connect and gRPC-Web.
import assert from "node:assert/strict";
import { homedir } from "node:os";
import { after, before, describe, test } from "node:test";
import { createCallSession, type MethodInfo } from "../../../src/core/invoke/call-session";
import { createLiveRequests } from "../../../src/core/invoke/live-requests";
import { type CurlOptions, defaultCurlOptions, type Protocol } from "../../../src/core/invoke/options";
import { type DemoServer, startDemoServer } from "../../support/servers";

const io = { cwd: process.cwd(), env: {}, homedir: homedir() };

function options(url: string, protocol: Protocol): CurlOptions {
  return { ...defaultCurlOptions(), url, protocol, http2PriorKnowledge: true };
}

/** Resolves once `check` returns true, polling the events the observer records. */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("live request streams", { timeout: 120_000 }, () => {
  let demo: DemoServer;
  before(async () => {
    demo = await startDemoServer();
  });
  after(async () => {
    await demo.close();
  });

  for (const protocol of ["grpc", "connect", "grpcweb"] as const) {
    test(`bidi over ${protocol}: the response to message 1 arrives before message 2 is sent`, async () => {
      const session = createCallSession();
      try {
        const live = createLiveRequests();
        const events: string[] = [];
        const received: string[] = [];
        let method: MethodInfo | undefined;
        const call = session.call(
          options(`${demo.url}/demo.v1.DemoService/Chat`, protocol),
          io,
          {
            method: (m) => {
              method = m;
            },
            message: (json) => {
              received.push(json);
              events.push(`received ${JSON.parse(json).text}`);
            },
          },
          undefined,
          live,
        );
        await until("the method", () => method !== undefined);
        assert.equal(method?.kind, "bidi_streaming");
        const first = await live.send({ text: "one" });
        events.push("sent one");
        assert.equal(first.index, 0);
        await until("the first response", () => received.length === 1);
        const second = await live.send({ text: "two" });
        events.push("sent two");
        assert.equal(second.index, 1);
        assert.ok(second.at >= first.at);
        await until("the second response", () => received.length === 2);
        live.close();
        const result = await call;
        assert.equal(result.ok, true, result.error?.message);
        assert.deepEqual(events, ["sent one", "received one", "sent two", "received two"]);
        assert.deepEqual(
          result.messages.map((m) => JSON.parse(m)),
          [
            { text: "one", number: 1 },
            { text: "two", number: 2 },
          ],
        );
        await assert.rejects(live.send({ text: "late" }), /the stream has ended/);
      } finally {
        await session.close();
      }
    });
  }

  test("a client stream answers once Close Send half-closes; the method checks messages before they are queued", async () => {
    const session = createCallSession();
    try {
      const live = createLiveRequests();
      let method: MethodInfo | undefined;
      const call = session.call(
        options(`${demo.url}/demo.v1.DemoService/Sum`, "grpc"),
        io,
        {
          method: (m) => {
            method = m;
          },
        },
        undefined,
        live,
      );
      await until("the method", () => method !== undefined);
      assert.equal(method?.kind, "client_streaming");
      assert.equal(method?.checkRequest({ number: 2 }), undefined);
      assert.match(
        method?.checkRequest({ numbr: 2 }) ?? "",
        /not a valid demo\.v1\.SumRequest: .*numbr.*number/,
      );
      for (const n of [1, 2, 39]) await live.send({ number: n });
      live.close();
      await assert.rejects(live.send({ number: 4 }), /closed for sending/);
      const result = await call;
      assert.equal(result.ok, true, result.error?.message);
      assert.deepEqual(JSON.parse(result.messages[0]), { sum: "42", count: 3 });
    } finally {
      await session.close();
    }
  });

  test("messages still queued when the call ends are refused with the reason", async () => {
    const live = createLiveRequests();
    const pending = live.send({ text: "never taken" });
    live.end("the call failed");
    await assert.rejects(pending, /the call failed/);
    assert.equal(live.closed, true);
  });
});
