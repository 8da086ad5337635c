import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import * as http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { DescService } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { type DemoServer, startDemoServer } from "../../src/demo/server";
import { Code as DemoCode, DemoService, Detail, QuotaExceededSchema } from "../../src/gen/demo/v1/demo_pb";
import { GreetResponseSchema, GreetService } from "../../src/gen/demo/v1/greet_pb";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  RetryInfoSchema,
} from "../../src/gen/google/rpc/error_details_pb";
import { ServerReflection as ReflectionV1 } from "../../src/gen/grpc/reflection/v1/reflection_pb";
import { ServerReflection as ReflectionV1alpha } from "../../src/gen/grpc/reflection/v1alpha/reflection_pb";
import { createTestPki, type TestPki } from "../support/tls";

const timeoutMs = 5000;

function client<T extends DescService>(service: T, transport: Transport): Client<T> {
  return createClient(service, transport);
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function* from<T>(...items: T[]): AsyncIterable<T> {
  for (const x of items) yield x;
}

describe("demo server", { timeout: 300_000 }, () => {
  let plain: DemoServer;
  before(async () => {
    plain = await startDemoServer();
  });
  after(() => plain.close());

  test("serves Connect over HTTP/1.1 and gRPC over h2c on the same port", async () => {
    const h1 = client(DemoService, createConnectTransport({ baseUrl: plain.url, httpVersion: "1.1" }));
    const h2 = client(DemoService, createGrpcTransport({ baseUrl: plain.url }));
    const a = await h1.inspect({ headerNames: ["x-demo"] }, { headers: { "x-demo": "one" }, timeoutMs });
    const b = await h2.inspect({}, { timeoutMs });
    assert.equal(a.httpVersion, "1.1");
    assert.deepEqual(
      a.headers.map((h) => [h.name, h.value]),
      [["x-demo", "one"]],
    );
    assert.equal(a.path, "/demo.v1.DemoService/Inspect");
    assert.equal(b.httpVersion, "2.0");
    assert.ok(b.headers.some((h) => h.name === "content-type" && h.value === "application/grpc+proto"));
  });

  test("runs all four streaming shapes over all three protocols", async () => {
    const transports = [
      createConnectTransport({ baseUrl: plain.url, httpVersion: "2" }),
      createGrpcTransport({ baseUrl: plain.url }),
      createGrpcWebTransport({ baseUrl: plain.url, httpVersion: "2" }),
    ];
    for (const transport of transports) {
      const demo = client(DemoService, transport);
      const greet = client(GreetService, transport);
      assert.equal((await greet.greet({ name: "Ada" }, { timeoutMs })).greeting, "Hello, Ada!");
      assert.equal((await greet.greet({}, { timeoutMs })).greeting, "Hello, world!");
      const counted = await collect(demo.count({ count: 3, text: "t" }, { timeoutMs }));
      assert.deepEqual(
        counted.map((r) => [r.number, r.text]),
        [
          [1, "t"],
          [2, "t"],
          [3, "t"],
        ],
      );
      const sum = await demo.sum(from({ number: 2n }, { number: 40n }), { timeoutMs });
      assert.equal(sum.sum, 42n);
      assert.equal(sum.count, 2);
      const chat = await collect(demo.chat(from({ text: "a" }, { text: "b" }), { timeoutMs }));
      assert.deepEqual(
        chat.map((r) => [r.text, r.number]),
        [
          ["a", 1],
          ["b", 2],
        ],
      );
    }
  });

  test("Echo returns the request and Sample sets every kind of field", async () => {
    const demo = client(DemoService, createConnectTransport({ baseUrl: plain.url, httpVersion: "1.1" }));
    const echoed = await demo.echo({ text: "x", counts: { b: 1n, a: 2n }, maybeNumber: 0 }, { timeoutMs });
    assert.equal(echoed.text, "x");
    assert.deepEqual(echoed.counts, { b: 1n, a: 2n });
    assert.equal(echoed.maybeNumber, 0);
    const sample = await demo.sample({ text: "s" }, { timeoutMs });
    assert.equal(sample.text, "s");
    assert.equal(sample.uint64Value, 18446744073709551615n);
    assert.equal(sample.choice.case, "choiceNested");
    assert.deepEqual(sample.attributes, {
      name: "demo",
      count: 2,
      ok: true,
      none: null,
      nested: { list: [1, "two"] },
    });
    assert.ok(sample.extra);
    assert.equal(anyUnpack(sample.extra, GreetResponseSchema)?.greeting, "packed in an Any");
    assert.equal(sample.wrappedText, "");
    assert.equal(sample.maybeText, "");
  });

  test("Fail fails with the requested code, message and details; Count can end with an error", async () => {
    const demo = client(DemoService, createGrpcTransport({ baseUrl: plain.url }));
    const err = await demo
      .fail(
        {
          code: DemoCode.NOT_FOUND,
          message: "no such thing",
          details: [Detail.ERROR_INFO, Detail.BAD_REQUEST, Detail.RETRY_INFO, Detail.QUOTA_EXCEEDED],
        },
        { timeoutMs },
      )
      .then(
        () => assert.fail("Fail succeeded"),
        (e: unknown) => ConnectError.from(e),
      );
    assert.equal(err.code, Code.NotFound);
    assert.equal(err.rawMessage, "no such thing");
    assert.equal(err.findDetails(ErrorInfoSchema)[0]?.reason, "DEMO_FAILURE");
    assert.equal(err.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field, "name");
    assert.equal(err.findDetails(RetryInfoSchema)[0]?.retryDelay?.seconds, 1n);
    assert.equal(err.findDetails(QuotaExceededSchema)[0]?.limit, 100n);
    const internal = await demo.fail({}, { timeoutMs }).then(
      () => assert.fail("Fail succeeded"),
      (e: unknown) => ConnectError.from(e),
    );
    assert.equal(internal.code, Code.Internal);

    const got: number[] = [];
    const streamErr = await (async () => {
      for await (const r of demo.count({ count: 2, errorCode: DemoCode.ABORTED }, { timeoutMs }))
        got.push(r.number);
    })().catch((e: unknown) => ConnectError.from(e));
    assert.deepEqual(got, [1, 2]);
    assert.equal(streamErr?.code, Code.Aborted);
  });

  test("Count waits delay_ms between responses", async () => {
    const demo = client(DemoService, createGrpcTransport({ baseUrl: plain.url }));
    const start = performance.now();
    const out = await collect(demo.count({ count: 3, delayMs: 60 }, { timeoutMs }));
    assert.equal(out.length, 3);
    assert.ok(performance.now() - start >= 110, "two delays of 60 ms");
  });

  test("Inspect reports the headers of the latest reflection request when asked", async () => {
    const own = await startDemoServer({ http: "h2c" });
    try {
      const transport = createGrpcTransport({ baseUrl: own.url });
      const demo = client(DemoService, transport);
      const before = await demo.inspect({ reflectionHeaderNames: ["x-reflect"] }, { timeoutMs });
      assert.deepEqual(before.reflectionHeaders, []);
      await collect(
        client(ReflectionV1, transport).serverReflectionInfo(
          from({ messageRequest: { case: "listServices", value: "" } }),
          { timeoutMs, headers: { "x-reflect": "yes" } },
        ),
      );
      const after = await demo.inspect(
        { headerNames: ["x-none"], reflectionHeaderNames: ["x-reflect"] },
        { timeoutMs },
      );
      assert.deepEqual(
        after.reflectionHeaders.map((h) => [h.name, h.value]),
        [["x-reflect", "yes"]],
      );
      assert.deepEqual(after.headers, []);
      const unasked = await demo.inspect({}, { timeoutMs });
      assert.deepEqual(unasked.reflectionHeaders, [], "only when asked");
    } finally {
      await own.close();
    }
  });

  test("serves reflection v1 and v1alpha by default", async () => {
    const transport = createGrpcTransport({ baseUrl: plain.url });
    for (const service of [ReflectionV1, ReflectionV1alpha] as const) {
      const reflection = client(service as typeof ReflectionV1, transport);
      const res = await collect(
        reflection.serverReflectionInfo(from({ messageRequest: { case: "listServices", value: "" } }), {
          timeoutMs,
        }),
      );
      const names =
        res[0]?.messageResponse.case === "listServicesResponse"
          ? res[0].messageResponse.value.service.map((s) => s.name)
          : [];
      assert.ok(names.includes("demo.v1.DemoService"), `${service.typeName}: ${names.join(",")}`);
      assert.ok(names.includes("demo.v1.GreetService"));
    }
  });
});

describe("demo server options", { timeout: 300_000 }, () => {
  let pki: TestPki;
  before(async () => {
    pki = await createTestPki();
  });

  test("reflection can be limited to v1alpha or turned off", async () => {
    const alphaOnly = await startDemoServer({ reflection: ["v1alpha"], http: "h2c" });
    const none = await startDemoServer({ reflection: false, http: "h2c" });
    try {
      const ask = (url: string, service: typeof ReflectionV1) =>
        collect(
          client(service, createGrpcTransport({ baseUrl: url })).serverReflectionInfo(
            from({ messageRequest: { case: "listServices", value: "" } }),
            { timeoutMs },
          ),
        ).then(
          () => Code[0],
          (e: unknown) => Code[ConnectError.from(e).code],
        );
      assert.equal(await ask(alphaOnly.url, ReflectionV1), Code[Code.Unimplemented]);
      assert.equal(await ask(alphaOnly.url, ReflectionV1alpha as unknown as typeof ReflectionV1), Code[0]);
      assert.equal(
        await ask(none.url, ReflectionV1alpha as unknown as typeof ReflectionV1),
        Code[Code.Unimplemented],
      );
    } finally {
      await Promise.all([alphaOnly.close(), none.close()]);
    }
  });

  test("http: 1.1 refuses HTTP/2 and h2c refuses HTTP/1.1", async () => {
    const h1 = await startDemoServer({ http: "1.1", reflection: false });
    const h2 = await startDemoServer({ http: "h2c", reflection: false });
    try {
      const ok = await client(
        GreetService,
        createConnectTransport({ baseUrl: h1.url, httpVersion: "1.1" }),
      ).greet({}, { timeoutMs });
      assert.equal(ok.greeting, "Hello, world!");
      await assert.rejects(
        client(GreetService, createGrpcTransport({ baseUrl: h1.url })).greet({}, { timeoutMs }),
      );
      const ok2 = await client(GreetService, createGrpcTransport({ baseUrl: h2.url })).greet(
        {},
        { timeoutMs },
      );
      assert.equal(ok2.greeting, "Hello, world!");
      await assert.rejects(
        client(GreetService, createConnectTransport({ baseUrl: h2.url, httpVersion: "1.1" })).greet(
          {},
          { timeoutMs },
        ),
      );
    } finally {
      await Promise.all([h1.close(), h2.close()]);
    }
  });

  test("TLS offers h2 and http/1.1; mutual TLS reports the client certificate", async () => {
    const server = await startDemoServer({
      tls: { cert: pki.server.cert, key: pki.server.key, ca: pki.ca.cert, requestClientCert: true },
    });
    try {
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const clientTls = { ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key };
      const viaH2 = client(DemoService, createGrpcTransport({ baseUrl: server.url, nodeOptions: clientTls }));
      const viaH1 = client(
        DemoService,
        createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", nodeOptions: clientTls }),
      );
      const a = await viaH2.inspect({ headerNames: ["none"] }, { timeoutMs });
      const b = await viaH1.inspect({ headerNames: ["none"] }, { timeoutMs });
      assert.equal(a.httpVersion, "2.0");
      assert.equal(b.httpVersion, "1.1");
      assert.equal(a.clientCertificate, "protocall-test-client");
      assert.equal(b.clientCertificate, "protocall-test-client");
      const noCert = client(
        DemoService,
        createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", nodeOptions: { ca: pki.ca.cert } }),
      );
      await assert.rejects(noCert.inspect({}, { timeoutMs }));
    } finally {
      await server.close();
    }
  });

  test("listens on a Unix socket and under a path prefix", async () => {
    const socketPath = join(mkdtempSync(join(tmpdir(), "protocall-demo-")), "demo.sock");
    const server = await startDemoServer({ unixSocket: socketPath, pathPrefix: "/api/" });
    try {
      assert.equal(server.url, "http://localhost/api");
      assert.equal(server.unixSocket, socketPath);
      const demo = client(
        DemoService,
        createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", nodeOptions: { socketPath } }),
      );
      const res = await demo.inspect({}, { timeoutMs });
      assert.equal(res.path, "/api/demo.v1.DemoService/Inspect");
      const status = await new Promise<number>((resolve, reject) => {
        http
          .request({ socketPath, path: "/demo.v1.DemoService/Inspect", method: "POST" }, (r) => {
            r.resume();
            resolve(r.statusCode ?? 0);
          })
          .on("error", reject)
          .end();
      });
      assert.equal(status, 404, "without the prefix");
    } finally {
      await server.close();
    }
  });

  test("close() ends open connections and streams promptly", { timeout: 60_000 }, async () => {
    const server = await startDemoServer({ reflection: false });
    const demo = client(DemoService, createGrpcTransport({ baseUrl: server.url }));
    // A stream that would run for days, without a deadline: close() returns without waiting for it.
    const stream = demo.count({ count: 1000, delayMs: 600_000 });
    const it = stream[Symbol.asyncIterator]();
    assert.equal((await it.next()).value?.number, 1);
    await server.close();
    await assert.rejects(async () => {
      for (;;) if ((await it.next()).done) break;
    });
  });
});
