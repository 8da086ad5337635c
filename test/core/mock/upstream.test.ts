// --upstream: calls that no stub answers go to the real server (the demo server here), and its
// answers come back as sent: messages, streams in both directions, request and response headers,
// errors with their details; the stubs still answer what they match.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Recorder } from "../../../src/core/mock/record";
import { createUpstream, type UpstreamProtocol } from "../../../src/core/mock/upstream";
import { startDemoServer } from "../../../src/demo/server";
import { ChatRequestSchema, Code as DemoCode, Detail } from "../../../src/gen/demo/v1/demo_pb";
import { ErrorInfoSchema } from "../../../src/gen/google/rpc/error_details_pb";
import { demoClient, demoSchema, greetClient, startTestMock, type TestMock } from "./support";

type Demo = Awaited<ReturnType<typeof startDemoServer>>;

async function* messages<T>(...items: T[]) {
  for (const i of items) yield i;
}

const stubs = {
  "greet.rpc": `/demo.v1.GreetService/Greet\n\n{"name": "stub"}\n\n>>> ok\n\n{"greeting": "from the stub"}\n`,
};

for (const protocol of ["grpc", "connect", "grpcweb"] as UpstreamProtocol[]) {
  describe(`--upstream over ${protocol}`, () => {
    let demo: Demo;
    let mock: TestMock;
    before(async () => {
      demo = await startDemoServer();
      mock = await startTestMock(stubs, { upstream: createUpstream(demo.url, protocol) });
    });
    after(async () => {
      await mock.close();
      await demo.close();
    });

    test("a matching stub answers; any other call goes upstream and is logged so", async () => {
      const client = greetClient(mock.url, "grpc");
      assert.equal((await client.greet({ name: "stub" })).greeting, "from the stub");
      assert.equal((await client.greet({ name: "ada" })).greeting, "Hello, ada!");
      assert.equal(mock.calls.at(-1)?.source, "upstream");
      assert.deepEqual(mock.calls.at(-1)?.responses, [{ greeting: "Hello, ada!" }]);
    });

    test("request headers reach the upstream; errors come back with code, message and details", async () => {
      const inspected = await demoClient(mock.url).inspect(
        { headerNames: ["x-tenant"] },
        { headers: { "x-tenant": "acme" } },
      );
      assert.deepEqual(
        inspected.headers.map((h) => [h.name, h.value]),
        [["x-tenant", "acme"]],
      );
      try {
        await demoClient(mock.url, "grpc-web").fail({
          code: DemoCode.NOT_FOUND,
          message: "gone",
          details: [Detail.ERROR_INFO],
        });
        assert.fail("the call succeeded");
      } catch (err) {
        const e = ConnectError.from(err);
        assert.equal(e.code, Code.NotFound);
        assert.equal(e.rawMessage, "gone");
        assert.equal(e.findDetails(ErrorInfoSchema).length, 1);
      }
    });

    test("streams pass through: server stream, client stream and (over HTTP/2) bidirectional", async () => {
      const numbers: number[] = [];
      for await (const m of demoClient(mock.url, "grpc").count({ count: 3, text: "x" }))
        numbers.push(m.number);
      assert.deepEqual(numbers, [1, 2, 3]);
      const sum = await demoClient(mock.url, "grpc").sum(messages({ number: 2n }, { number: 5n }));
      assert.equal(sum.sum, 7n);
      if (protocol === "grpcweb") return; // gRPC-Web has no bidirectional streams
      const texts: string[] = [];
      for await (const m of demoClient(mock.url, "grpc").chat(
        messages(...["a", "b"].map((text) => create(ChatRequestSchema, { text }))),
      )) {
        texts.push(`${m.text}${m.number}`);
      }
      assert.deepEqual(texts, ["a1", "b2"]);
    });
  });
}

test("--record writes the upstreamed calls as stubs that, served without the upstream, answer the same", async () => {
  const demo = await startDemoServer();
  const dir = mkdtempSync(join(tmpdir(), "protocall-record-"));
  const calls = async (url: string) => {
    const out: unknown[] = [];
    const greet = greetClient(url, "grpc");
    out.push(await greet.greet({ name: "ada" }));
    out.push(await greet.greet({ name: "bob" }));
    const demoGrpc = demoClient(url, "grpc");
    for await (const m of demoGrpc.count({ count: 2, text: "n" })) out.push(m);
    out.push(await demoGrpc.sum(messages({ number: 1n }, { number: 2n })));
    try {
      await demoGrpc.fail({ code: DemoCode.UNAVAILABLE, message: "down", details: [Detail.ERROR_INFO] });
    } catch (err) {
      const e = ConnectError.from(err);
      out.push([e.code, e.rawMessage, e.findDetails(ErrorInfoSchema)]);
    }
    return out;
  };
  let live: unknown[];
  const recording = await startTestMock(
    {},
    { upstream: createUpstream(demo.url), recorder: new Recorder(dir, demoSchema) },
  );
  try {
    live = await calls(recording.url);
  } finally {
    await recording.close();
    await demo.close();
  }
  assert.ok(readdirSync(dir).includes("demo.v1.GreetService.Greet.rpc"), String(readdirSync(dir)));
  const replay = await startTestMock({}, { paths: [dir], generate: false });
  try {
    assert.deepEqual(await calls(replay.url), live);
    assert.ok(
      replay.calls.every((c) => c.source.includes("recorded")),
      JSON.stringify(replay.calls.map((c) => c.source)),
    );
  } finally {
    await replay.close();
  }
});

test("an unreachable upstream is unavailable, naming it", async () => {
  const mock = await startTestMock({}, { upstream: createUpstream("http://127.0.0.1:1") });
  try {
    await greetClient(mock.url).greet({ name: "x" });
    assert.fail("the call succeeded");
  } catch (err) {
    const e = ConnectError.from(err);
    assert.equal(e.code, Code.Unavailable);
    assert.match(e.rawMessage, /upstream http:\/\/127\.0\.0\.1:1/);
  } finally {
    await mock.close();
  }
  assert.throws(
    () => createUpstream("localhost:80"),
    /invalid --upstream "localhost:80": it must start with http:\/\/ or https:\/\//,
  );
});
