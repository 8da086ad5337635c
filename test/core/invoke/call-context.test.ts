// The deadline, cancellation and HTTP-status texts of calls made through the curl transport, against
// the real demo server: buf's (Go's) words, for all three protocols.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { Protocol } from "../../../src/core/invoke/options";
import { type CurlTransport, createCurlTransport } from "../../../src/core/invoke/transport";
import { createVerboseLog } from "../../../src/core/invoke/verbose";
import { type DemoServer, startDemoServer } from "../../../src/demo/server";
import { DemoService } from "../../../src/gen/demo/v1/demo_pb";
import { GreetService } from "../../../src/gen/demo/v1/greet_pb";

const protocols: Protocol[] = ["connect", "grpc", "grpcweb"];

async function failure(call: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof ConnectError, `a ConnectError: ${err}`);
    return err;
  }
  assert.fail("the call succeeded");
}

describe("call context: buf's words for deadlines, cancellation and HTTP statuses", () => {
  let server: DemoServer;
  let prefixed: DemoServer;
  const transports: CurlTransport[] = [];
  before(async () => {
    [server, prefixed] = await Promise.all([
      startDemoServer(),
      startDemoServer({ pathPrefix: "/only-here" }),
    ]);
  });
  after(async () => {
    for (const t of transports) t.close();
    await Promise.all([server?.close(), prefixed?.close()]);
  });

  async function open(protocol: Protocol, baseUrl = server.url, log = createVerboseLog(false, () => {})) {
    const t = await createCurlTransport({ baseUrl, protocol, mode: "h2", log });
    transports.push(t);
    return t;
  }

  for (const protocol of protocols) {
    test(`${protocol}: a call past its deadline fails with "context deadline exceeded"`, async () => {
      const demo = createClient(DemoService, (await open(protocol)).transport);
      const err = await failure(async () => {
        for await (const _ of demo.count({ count: 3, delayMs: 5000 }, { timeoutMs: 300 })) {
          // the first response comes after 5 s, past the deadline
        }
      });
      assert.equal(err.code, Code.DeadlineExceeded);
      assert.equal(err.rawMessage, "context deadline exceeded");
    });

    test(`${protocol}: the deadline goes out in connect-go's timeout format`, async () => {
      const lines: string[] = [];
      const log = createVerboseLog(true, (t) => lines.push(t));
      const greet = createClient(GreetService, (await open(protocol, server.url, log)).transport);
      await greet.greet({ name: "x" }, { timeoutMs: 2500 });
      const expected = protocol === "connect" ? "Connect-Timeout-Ms: 2500" : "Grpc-Timeout: 2500000u";
      assert.ok(
        lines.some((l) => l.endsWith(`> (#1) ${expected}\n`)),
        `the request carries ${expected}:\n${lines.join("")}`,
      );
    });

    test(`${protocol}: a call canceled by its caller fails with "context canceled"`, async () => {
      const demo = createClient(DemoService, (await open(protocol)).transport);
      const controller = new AbortController();
      const err = await failure(async () => {
        for await (const _ of demo.count({ count: 3, delayMs: 200 }, { signal: controller.signal })) {
          controller.abort();
        }
      });
      assert.equal(err.code, Code.Canceled);
      assert.equal(err.rawMessage, "context canceled");
    });

    test(`${protocol}: an HTTP 404 reads as buf words it`, async () => {
      const t = await open(protocol, prefixed.url.replace("/only-here", "/elsewhere"));
      const unary = await failure(() => createClient(GreetService, t.transport).greet({ name: "x" }));
      assert.equal(unary.code, Code.Unimplemented);
      assert.equal(unary.rawMessage, protocol === "connect" ? "404 Not Found" : "HTTP status 404 Not Found");
      const stream = await failure(async () => {
        for await (const _ of createClient(DemoService, t.transport).count({ count: 1 })) {
          // no message comes
        }
      });
      assert.equal(stream.rawMessage, "HTTP status 404 Not Found");
    });
  }

  test("a reason given to the caller's signal is kept", async () => {
    const demo = createClient(DemoService, (await open("connect")).transport);
    const controller = new AbortController();
    const err = await failure(async () => {
      for await (const _ of demo.count({ count: 3, delayMs: 200 }, { signal: controller.signal })) {
        controller.abort(new ConnectError("stopped by the test", Code.Aborted));
      }
    });
    assert.equal(err.code, Code.Aborted);
    assert.equal(err.rawMessage, "stopped by the test");
  });
});
