// The mock server with stubs, called by connect-node clients over Connect, gRPC and gRPC-Web: one test
// per stub feature (matching, priorities, answers, streams, errors, delays, templates, sequences,
// per-message answers), the "nothing matched" error, generated answers, and the admin path.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { create, fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ChatRequestSchema, QuotaExceededSchema, SumRequestSchema } from "../../../src/gen/demo/v1/demo_pb";
import { ErrorInfoSchema } from "../../../src/gen/google/rpc/error_details_pb";
import { demoClient, greetClient, protocols, startTestMock, type TestMock, until } from "./support";

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  assert.fail("the call succeeded");
}

async function* messages<T>(...items: T[]) {
  for (const i of items) yield i;
}

const greet = `@greeting = Hello

### world, with priority
# @priority 10
# @match request.name matches /^w/
/demo.v1.GreetService/Greet

{"name": "world"}

>>> ok
x-served-by: mock
# @trailer x-cost: 3

{"greeting": "{{greeting}}, {{request.name}}! id={{$uuid}}"}

### tenant a
# @match headers["x-tenant"] == "a"
/demo.v1.GreetService/Greet

>>> ok

{"greeting": "tenant a"}

### tenant header
/demo.v1.GreetService/Greet
x-tenant: b

>>> ok

{"greeting": "tenant b"}

### any world (lower priority)
/demo.v1.GreetService/Greet

{"name": "world"}

>>> ok

{"greeting": "low"}
`;

const demo = `### fail with details
/demo.v1.DemoService/Fail

{"message": "quota"}

>>> resource_exhausted "over quota for {{request.message}}"
# @detail google.rpc.ErrorInfo {"reason": "QUOTA", "domain": "demo.example"}
# @detail demo.v1.QuotaExceeded {"resource": "calls", "limit": "10", "retryAfter": "30s"}

### retry then succeed
/demo.v1.DemoService/Fail

{"message": "retry"}

>>> unavailable "try again"
>>> unavailable "try again"
>>> ok

{}

### slow
/demo.v1.DemoService/Echo

{"text": "slow"}

>>> ok
# @delay 3s

{"text": "late"}

### count stream
/demo.v1.DemoService/Count

{"count": 3}

>>> ok
x-stream: yes

{"number": 1, "text": "{{request.count}}"}
# @delay 200ms
{"number": 2}
{"number": 3}

### count then error
/demo.v1.DemoService/Count

{"count": 9}

>>> data_loss "gone"

{"number": 1}

### sum of many
# @match requests.length >= 3
/demo.v1.DemoService/Sum

{"number": 1}

>>> ok

{"sum": "{{requests.length}}", "count": {{requests.length}}}

### chat per message
# @per-message
/demo.v1.DemoService/Chat

>>> ok
# @when request.text == "ping"

{"text": "pong"}
>>> ok
# @when {"text": "hello"}

{"text": "hi {{request.text}}"}
{"text": "two"}
>>> ok

{"text": "what is {{request.text}}?"}
`;

describe("mock server with stubs", () => {
  let mock: TestMock;
  before(async () => {
    mock = await startTestMock({
      "greet.rpc": greet,
      "demo.rpc": demo,
      "chat.rpc": `### scripted chat
# @per-message
# @priority -1
/demo.v1.DemoService/Chat
x-script: 1

>>> ok

{"text": "first"}
>>> ok

{"text": "second"}
`,
    });
  });
  after(() => mock.close());

  test("a request body matches as a JSON subset, and the higher priority wins; the answer fills {{request.x}}, file variables and generators, over every protocol", async () => {
    for (const protocol of protocols) {
      const headers: [string, string][] = [];
      const trailers: [string, string][] = [];
      const res = await greetClient(mock.url, protocol).greet(
        { name: "world" },
        {
          onHeader: (h) => h.forEach((v, k) => void headers.push([k, v])),
          onTrailer: (t) => t.forEach((v, k) => void trailers.push([k, v])),
        },
      );
      assert.match(res.greeting, /^Hello, world! id=[0-9a-f-]{36}$/, protocol);
      assert.ok(
        headers.some(([k, v]) => k === "x-served-by" && v === "mock"),
        `${protocol}: ${headers}`,
      );
      assert.ok(
        trailers.some(([k, v]) => k === "x-cost" && v === "3"),
        `${protocol}: ${trailers}`,
      );
    }
  });

  test("@match predicates test request headers; request headers of a stub must be present", async () => {
    const client = greetClient(mock.url);
    assert.equal((await client.greet({ name: "x" }, { headers: { "x-tenant": "a" } })).greeting, "tenant a");
    assert.equal((await client.greet({ name: "x" }, { headers: { "x-tenant": "b" } })).greeting, "tenant b");
  });

  test("when nothing matches, the error names the closest stubs and the first check each failed", async () => {
    const e = await failure(greetClient(mock.url).greet({ name: "wrld" }));
    assert.equal(e.code, Code.NotFound);
    assert.match(
      e.rawMessage,
      /^no stub of demo\.v1\.GreetService\/Greet matches this request \(closest 3 of 4 stubs\): /,
    );
    assert.match(e.rawMessage, /greet\.rpc:8: request\.name == "world", got "wrld"/);
    assert.match(e.rawMessage, /greet\.rpc:17: headers\["x-tenant"\] == "a", got nothing/);
    assert.match(e.rawMessage, /greet\.rpc:26: headers\["x-tenant"\] == "b", got nothing/);
    const wOnly = await failure(greetClient(mock.url).greet({ name: "whale" }));
    assert.match(wOnly.rawMessage, /greet\.rpc:8: request\.name == "world", got "whale"/);
  });

  test("an error answer has its code, message (with {{request.x}}) and typed details: google.rpc and the schema's own", async () => {
    for (const protocol of protocols) {
      const e = await failure(demoClient(mock.url, protocol).fail({ message: "quota" }));
      assert.equal(e.code, Code.ResourceExhausted, protocol);
      assert.equal(e.rawMessage, "over quota for quota");
      const [info] = e.findDetails(ErrorInfoSchema);
      assert.equal(info.reason, "QUOTA");
      assert.equal(info.domain, "demo.example");
      const [quota] = e.findDetails(QuotaExceededSchema);
      assert.equal(quota.resource, "calls");
      assert.equal(quota.limit, 10n);
      assert.equal(quota.retryAfter?.seconds, 30n);
    }
  });

  test("sequences: the Nth call of a stub gets its Nth answer, the last repeats, and a reset on the admin path starts over", async () => {
    const client = demoClient(mock.url);
    const codes = async () => {
      const out: string[] = [];
      for (let i = 0; i < 4; i++) {
        try {
          await client.fail({ message: "retry" });
          out.push("ok");
        } catch (err) {
          out.push(Code[ConnectError.from(err).code]);
        }
      }
      return out;
    };
    assert.deepEqual(await codes(), ["Unavailable", "Unavailable", "ok", "ok"]);
    const reset = await fetch(`${mock.url}/.protocall/mock/reset`, { method: "POST" });
    assert.equal(reset.status, 200);
    assert.deepEqual(await codes(), ["Unavailable", "Unavailable", "ok", "ok"]);
  });

  test("a delay is bounded by the call's deadline: the call fails with deadline_exceeded when the deadline comes first", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      const started = Date.now();
      const e = await failure(demoClient(mock.url, protocol).echo({ text: "slow" }, { timeoutMs: 300 }));
      assert.equal(e.code, Code.DeadlineExceeded, protocol);
      assert.ok(Date.now() - started < 2900, "the call waited for the whole delay");
    }
    // The server logs the call as ended by its deadline, or canceled when the client's own timer
    // closed the stream first (on a busy machine either comes first).
    await until(
      () =>
        mock.calls.filter(
          (c) => c.method.endsWith("/Echo") && /^(deadline_exceeded|canceled)$/.test(c.status),
        ).length === 2,
      "the log of the calls",
    );
  });

  test("a delay is waited before the answer", async () => {
    const dir = mock.dir;
    writeFileSync(
      join(dir, "delay.rpc"),
      `/demo.v1.DemoService/Echo\n\n{"text": "short"}\n\n>>> ok\n# @delay 300ms\n\n{"text": "done"}\n`,
    );
    await mock.stubs.load();
    const started = performance.now();
    const res = await demoClient(mock.url).echo({ text: "short" });
    assert.equal(res.text, "done");
    assert.ok(performance.now() - started >= 290);
  });

  test("a server stream sends its messages, each after its own delay, with headers; a stream can end with an error", async () => {
    for (const protocol of protocols) {
      const got: { number: number; text: string; at: number }[] = [];
      const started = performance.now();
      for await (const m of demoClient(mock.url, protocol).count({ count: 3 })) {
        got.push({ number: m.number, text: m.text, at: performance.now() - started });
      }
      assert.deepEqual(
        got.map((g) => g.number),
        [1, 2, 3],
        protocol,
      );
      assert.equal(got[0].text, "3");
      assert.ok(
        got[1].at - got[0].at >= 150,
        `${protocol}: the second message came ${got[1].at - got[0].at}ms after the first`,
      );
    }
    const numbers: number[] = [];
    const e = await failure(
      (async () => {
        for await (const m of demoClient(mock.url, "grpc").count({ count: 9 })) numbers.push(m.number);
      })(),
    );
    assert.deepEqual(numbers, [1]);
    assert.equal(e.code, Code.DataLoss);
  });

  test("a client stream is matched on all its messages (requests.length) and its first messages (body subset)", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      const client = demoClient(mock.url, protocol);
      const res = await client.sum(
        messages(...[1n, 2n, 3n, 4n].map((n) => create(SumRequestSchema, { number: n }))),
      );
      assert.equal(res.sum, 4n, protocol);
      assert.equal(res.count, 4);
      const e = await failure(
        client.sum(messages(...[1n, 2n].map((n) => create(SumRequestSchema, { number: n })))),
      );
      assert.match(e.rawMessage, /demo\.rpc:\d+: requests\.length >= 3, got 2/);
    }
  });

  test("a per-message stub answers each message of a bidirectional stream: by @when, by subset, or a fallback; a scripted one answers in order", async () => {
    for (const protocol of ["connect-h2", "grpc"] as const) {
      const client = demoClient(mock.url, protocol);
      const texts: string[] = [];
      for await (const m of client.chat(
        messages(...["ping", "hello", "what"].map((text) => create(ChatRequestSchema, { text }))),
      )) {
        texts.push(m.text);
      }
      assert.deepEqual(texts, ["pong", "hi hello", "two", "what is what?"], protocol);
      const scripted: string[] = [];
      for await (const m of client.chat(
        messages(...["a", "b", "c"].map((text) => create(ChatRequestSchema, { text }))),
        {
          headers: { "x-script": "1" },
        },
      )) {
        scripted.push(m.text);
      }
      // The higher-priority stub has no conditions on the call, so the header decides nothing here:
      // both stubs match, and "chat per message" (priority 0) wins over "scripted chat" (-1).
      assert.deepEqual(scripted, ["what is a?", "what is b?", "what is c?"]);
    }
  });

  test("the admin path lists the calls (method, stub, status, request and response messages)", async () => {
    await fetch(`${mock.url}/.protocall/mock/reset`, { method: "POST" });
    await greetClient(mock.url).greet({ name: "world" });
    const body = (await (await fetch(`${mock.url}/.protocall/mock/calls`)).json()) as {
      calls: Record<string, unknown>[];
    };
    assert.equal(body.calls.length, 1);
    const [call] = body.calls;
    assert.equal(call.method, "demo.v1.GreetService/Greet");
    assert.equal(call.source, `greet.rpc:6 "world, with priority"`);
    assert.equal(call.status, "ok");
    assert.equal(call.protocol, "connect");
    assert.deepEqual(call.requests, [{ name: "world" }]);
    assert.match(String((call.responses as { greeting: string }[])[0].greeting), /^Hello, world!/);
    const stubs = (await (await fetch(`${mock.url}/.protocall/mock/stubs`)).json()) as { stubs: unknown[] };
    assert.ok(stubs.stubs.length >= 10);
    const unknown = await fetch(`${mock.url}/.protocall/mock/nope`);
    assert.equal(unknown.status, 404);
    assert.match(await unknown.text(), /use GET \/\.protocall\/mock\/calls/);
  });
});

describe("mock server without stubs", () => {
  test("a method without stubs answers a generated message, the same for the same seed; --no-generate answers unimplemented", async () => {
    const mock = await startTestMock({});
    try {
      const a = await demoClient(mock.url).sample({});
      const b = await demoClient(mock.url, "grpc").sample({});
      assert.deepEqual(a, b);
      assert.notEqual(a.text, "");
      assert.ok(a.createdAt !== undefined && a.ttl !== undefined);
      assert.ok(a.createdAt.seconds > 1_767_000_000n, "a Timestamp near 2026");
      assert.notEqual(a.color, 0, "an enum value other than the zero one");
      const counts: number[] = [];
      for await (const m of demoClient(mock.url).count({ count: 1 })) counts.push(m.number);
      assert.equal(counts.length, 3);
      assert.equal(mock.calls.at(-1)?.source, "generated");
    } finally {
      await mock.close();
    }
    const off = await startTestMock({}, { generate: false });
    try {
      const e = await failure(demoClient(off.url).sample({}));
      assert.equal(e.code, Code.Unimplemented);
      assert.match(e.rawMessage, /demo\.v1\.DemoService\/Sample has no stub and generated answers are off/);
    } finally {
      await off.close();
    }
  });

  test("reflection, health, CORS and the message size limit", async () => {
    const mock = await startTestMock({}, { maxMessageBytes: 1024 });
    try {
      const { createClient } = await import("@connectrpc/connect");
      const { createGrpcTransport } = await import("@connectrpc/connect-node");
      const { Health } = await import("../../../src/gen/grpc/health/v1/health_pb");
      const health = createClient(Health, createGrpcTransport({ baseUrl: mock.url }));
      assert.equal((await health.check({ service: "demo.v1.DemoService" })).status, 1);
      assert.equal((await health.check({ service: "" })).status, 1);
      assert.equal((await failure(health.check({ service: "nope.Service" }))).code, Code.NotFound);
      const { ServerReflection } = await import("../../../src/gen/grpc/reflection/v1/reflection_pb");
      const reflection = createClient(ServerReflection, createGrpcTransport({ baseUrl: mock.url }));
      for await (const res of reflection.serverReflectionInfo(
        messages({ messageRequest: { case: "listServices" as const, value: "" } }),
      )) {
        const names =
          res.messageResponse.case === "listServicesResponse"
            ? res.messageResponse.value.service.map((s) => s.name)
            : [];
        assert.ok(
          names.includes("demo.v1.DemoService") && names.includes("demo.v1.GreetService"),
          String(names),
        );
      }
      const preflight = await fetch(`${mock.url}/demo.v1.GreetService/Greet`, {
        method: "OPTIONS",
        headers: {
          origin: "http://page.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type,connect-protocol-version",
        },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get("access-control-allow-origin"), "http://page.example");
      assert.match(String(preflight.headers.get("access-control-allow-headers")), /connect-protocol-version/);
      const call = await fetch(`${mock.url}/demo.v1.GreetService/Greet`, {
        method: "POST",
        headers: { origin: "http://page.example", "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(call.status, 200);
      assert.equal(call.headers.get("access-control-allow-origin"), "http://page.example");
      const big = await failure(demoClient(mock.url).echo({ text: "x".repeat(4096) }));
      assert.equal(big.code, Code.ResourceExhausted);
    } finally {
      await mock.close();
    }
  });
});

test("a silent client is disconnected after the headers timeout, as the listener's are", async () => {
  const mock = await startTestMock({}, { limits: { headersTimeoutMs: 300 } });
  try {
    const { port } = new URL(mock.url);
    const closed = await new Promise<boolean>((resolve) => {
      const socket = connect(Number(port), "127.0.0.1");
      socket.on("error", () => {});
      socket.once("close", () => resolve(true));
      // A hang guard only: the guard closes the socket long before.
      setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, 30_000).unref();
    });
    assert.equal(closed, true);
  } finally {
    await mock.close();
  }
});

describe("stub reload", () => {
  test("a changed stub file is reloaded; one with an error is reported at file:line:col and the last good stubs keep serving", async () => {
    const stub = (greeting: string) =>
      `/demo.v1.GreetService/Greet\n\n>>> ok\n\n{"greeting": "${greeting}"}\n`;
    const mock = await startTestMock({ "g.rpc": stub("one") }, { watch: true });
    try {
      const client = greetClient(mock.url);
      assert.equal((await client.greet({})).greeting, "one");
      writeFileSync(join(mock.dir, "g.rpc"), stub("two"));
      await until(async () => (await client.greet({})).greeting === "two", "the reload");
      writeFileSync(
        join(mock.dir, "g.rpc"),
        `/demo.v1.GreetService/Greet\n\n>>> ok\n\n{"greting": "three"}\n`,
      );
      await until(() => mock.log.some((l) => l.includes("not reloaded")), "the error report");
      assert.ok(
        mock.log.some((l) =>
          /^g\.rpc:5:2: unknown field "greting" in message demo\.v1\.GreetResponse \(did you mean "greeting"\?\)/.test(
            l,
          ),
        ),
        mock.log.join("\n"),
      );
      assert.equal((await client.greet({})).greeting, "two");
    } finally {
      await mock.close();
    }
  });
});

// The binary check that the detail went over the wire as its own type (not as JSON text).
test("typed details are binary messages of their type", () => {
  const info = fromBinary(ErrorInfoSchema, new Uint8Array([10, 4, 78, 79, 80, 69]));
  assert.equal(info.reason, "NOPE");
});
