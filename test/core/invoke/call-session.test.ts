import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { createCallSession } from "../../../src/core/invoke/call-session";
import { type CurlOptions, defaultCurlOptions } from "../../../src/core/invoke/options";
import { openSchema } from "../../../src/core/schema/open-schema";
import type { SchemaSource } from "../../../src/core/schema/types";
import { file_demo_v1_greet } from "../../../src/gen/demo/v1/greet_pb";
import type { GrpcJsReflectionServer } from "../../support/grpc-js-reflection-server";
import {
  type DemoServer,
  demoDescriptorSet,
  examplesDir,
  startDemoServer,
  startGrpcJsReflectionServer,
  startSilentServer,
  startTlsDemoServer,
} from "../../support/servers";
import { createTestPki, type TestPki } from "../../support/tls";

const io = { cwd: process.cwd(), env: {}, homedir: homedir() };

function options(url: string, more: Partial<CurlOptions> = {}): CurlOptions {
  return { ...defaultCurlOptions(), url, ...more };
}

/** `p`, or a failure naming `what` if it has not settled within `ms` (a hang fails, it does not stall). */
function within<T>(p: Promise<T>, what: string, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Waits until `cond()` holds (polling), or fails naming `what`. */
async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A TCP proxy to a loopback port that counts the connections open through it. */
async function countingProxy(port: number): Promise<{ url: string; open(): number; close(): Promise<void> }> {
  const open = new Set<Socket>();
  const proxy = createServer((client) => {
    open.add(client);
    const upstream = connect(port, "127.0.0.1");
    const end = () => {
      open.delete(client);
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on("error", end);
      s.on("close", end);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    open: () => open.size,
    async close() {
      for (const s of open) s.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}

describe("call session", { timeout: 300_000 }, () => {
  let demo: DemoServer;
  let noReflection: DemoServer;
  let http1: DemoServer;
  let tls: DemoServer;
  let grpcJs: GrpcJsReflectionServer;
  let pki: TestPki;
  before(async () => {
    pki = await createTestPki();
    [demo, noReflection, http1, grpcJs] = await Promise.all([
      startDemoServer(),
      startDemoServer({ reflection: false }),
      startDemoServer({ http: "1.1", reflection: false }),
      startGrpcJsReflectionServer(),
    ]);
    tls = await startTlsDemoServer(pki);
  });
  after(async () => {
    await Promise.all([demo.close(), noReflection.close(), http1.close(), tls.close(), grpcJs.close()]);
  });

  test("a unary call returns the formatted response, headers and status; a second call reuses the connection and schema", async () => {
    const session = createCallSession({ product: "protocall/test" });
    try {
      const o = options(`${demo.url}/demo.v1.GreetService/Greet`, { data: '{"name": "session"}' });
      const first: string[] = [];
      const r1 = await session.call(o, io, { log: (l) => first.push(l) });
      assert.equal(r1.ok, true, r1.error?.message);
      assert.equal(r1.code, "ok");
      assert.equal(r1.exitCode, 0);
      assert.equal(r1.method, "demo.v1.GreetService/Greet");
      assert.equal(r1.methodKind, "unary");
      assert.deepEqual(r1.messages, ['{\n  "greeting": "Hello, session!"\n}']);
      assert.ok(r1.headers.some(([n]) => n === "content-type"));
      assert.ok(r1.durationMs > 0);
      assert.ok(
        first.some((l) => l.includes("* Dialing (tcp)")),
        first.join("\n"),
      );
      assert.ok(first.some((l) => l.includes("Invoking RPC demo.v1.GreetService.Greet")));
      assert.ok(
        first.some((l) => l.includes("ServerReflection")),
        first.join("\n"),
      );

      const second: string[] = [];
      const r2 = await session.call(o, io, { log: (l) => second.push(l) });
      assert.equal(r2.ok, true);
      assert.deepEqual(r2.messages, r1.messages);
      assert.ok(!second.some((l) => l.includes("Dialing")), `dialed again:\n${second.join("\n")}`);
      assert.ok(
        !second.some((l) => l.includes("ServerReflection")),
        `reflected again:\n${second.join("\n")}`,
      );
      assert.deepEqual(session.stats(), { transports: 1, resolvers: 1 });
    } finally {
      await session.close();
    }
    assert.deepEqual(session.stats(), { transports: 0, resolvers: 0 });
  });

  test("refresh() drops connections and schemas: the next call dials and reflects again", async () => {
    const session = createCallSession();
    try {
      const o = options(`${demo.url}/demo.v1.GreetService/Greet`, { data: "{}" });
      assert.equal((await session.call(o, io)).ok, true);
      await session.refresh();
      assert.deepEqual(session.stats(), { transports: 0, resolvers: 0 });
      const lines: string[] = [];
      const r = await session.call(o, io, { log: (l) => lines.push(l) });
      assert.equal(r.ok, true);
      assert.ok(lines.some((l) => l.includes("Dialing")));
    } finally {
      await session.close();
    }
  });

  test("refresh() while a call runs: the call goes on with its connection and schema, which close once it ends", async () => {
    const proxy = await countingProxy(Number(new URL(demo.url).port));
    const session = createCallSession();
    try {
      let firstMessage!: () => void;
      const started = new Promise<void>((resolve) => {
        firstMessage = resolve;
      });
      const call = session.call(
        options(`${proxy.url}/demo.v1.DemoService/Count`, {
          protocol: "grpc",
          data: '{"count": 3, "delayMs": 300, "text": "tick"}',
        }),
        io,
        { message: () => firstMessage() },
      );
      await within(started, "the first message");
      // What the editor does when a setting or a .proto file changes while a request runs.
      await session.refresh();
      assert.deepEqual(session.stats(), { transports: 0, resolvers: 0 });
      assert.equal(proxy.open(), 1, "the running call's connection stays open");
      const r = await within(call, "the call");
      assert.equal(r.ok, true, r.error?.message);
      assert.equal(r.messages.length, 3);
      // Dropped by the refresh, it is closed now that its last call ended.
      await until(() => proxy.open() === 0, "the old connection to close");
      const next: string[] = [];
      const again = await session.call(
        options(`${proxy.url}/demo.v1.GreetService/Greet`, { data: "{}" }),
        io,
        { log: (l) => next.push(l) },
      );
      assert.equal(again.ok, true, again.error?.message);
      assert.ok(
        next.some((l) => l.includes("Dialing")),
        "the next call dials anew",
      );
    } finally {
      await session.close();
      await proxy.close();
    }
  });

  test("close() while a call waits for a response that never comes: the call fails at once, it does not wait on", async () => {
    const server = http2.createServer();
    let streams = 0;
    server.on("stream", () => {
      streams++; // never answered
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const session = createCallSession();
    try {
      const port = (server.address() as AddressInfo).port;
      const call = session.call(
        options(`http://127.0.0.1:${port}/demo.v1.GreetService/Greet`, {
          protocol: "grpc",
          schemas: [await demoDescriptorSet()],
          data: "{}",
        }),
        io,
      );
      await until(() => streams === 1, "the request to reach the server");
      await session.close();
      const r = await within(call, "the call after close()");
      assert.equal(r.ok, false);
      assert.equal(r.code, "unavailable");
      assert.match(r.error?.message ?? "", /the connection was closed/);
    } finally {
      await session.close();
      server.close();
    }
  });

  test("a lease of fallback sources is held for the whole call and released once it ends", async () => {
    const workspace: SchemaSource = await openSchema(examplesDir, {
      cwd: process.cwd(),
      stdin: process.stdin,
    });
    let leases = 0;
    let released = 0;
    const session = createCallSession({
      fallbackSources: () => {
        leases++;
        return { sources: [workspace], release: () => released++ };
      },
    });
    try {
      const seen: number[] = [];
      const r = await session.call(
        options(`${noReflection.url}/demo.v1.DemoService/Count`, {
          protocol: "grpc",
          data: '{"count": 2, "delayMs": 50, "text": "tick"}',
        }),
        io,
        { message: () => seen.push(released) },
      );
      assert.equal(r.ok, true, r.error?.message);
      assert.deepEqual(seen, [0, 0], "not released while messages arrive");
      assert.equal(leases, 1);
      assert.equal(released, 1);
      // A call that names a schema takes none.
      await session.call(
        options(`${noReflection.url}/demo.v1.GreetService/Greet`, {
          schemas: [await demoDescriptorSet()],
          data: "{}",
        }),
        io,
      );
      assert.equal(leases, 1);
    } finally {
      await session.close();
      await workspace.close();
    }
  });

  test("a server stream: method, headers, then each message in order as it arrives, then trailers", async () => {
    const session = createCallSession();
    try {
      const events: string[] = [];
      const r = await session.call(
        options(`${demo.url}/demo.v1.DemoService/Count`, {
          protocol: "grpc",
          data: '{"count": 3, "delayMs": 150, "text": "tick"}',
        }),
        io,
        {
          method: (m) => events.push(`method ${m.name} ${m.kind}`),
          headers: () => events.push("headers"),
          message: (json, i) => events.push(`message ${i} ${JSON.parse(json).number}`),
        },
      );
      assert.equal(r.ok, true, r.error?.message);
      assert.deepEqual(events, [
        "method demo.v1.DemoService/Count server_streaming",
        "headers",
        "message 0 1",
        "message 1 2",
        "message 2 3",
      ]);
      // That each message is handed over as it arrives, not collected at the end, the cancel test
      // below shows without a clock: it ends a stream from its first message's callback.
      assert.ok(
        r.trailers.some(([n]) => n === "grpc-status"),
        JSON.stringify(r.trailers),
      );
    } finally {
      await session.close();
    }
  });

  test("an RPC error: code name, exit code (code × 8), message, error details decoded to JSON", async () => {
    const session = createCallSession();
    try {
      for (const protocol of ["connect", "grpc", "grpcweb"] as const) {
        const r = await session.call(
          options(`${demo.url}/demo.v1.DemoService/Fail`, {
            protocol,
            data: '{"code": "CODE_NOT_FOUND", "message": "no such order", "details": ["DETAIL_ERROR_INFO", "DETAIL_QUOTA_EXCEEDED"]}',
          }),
          io,
        );
        assert.equal(r.ok, false, protocol);
        assert.equal(r.code, "not_found");
        assert.equal(r.exitCode, 40);
        assert.equal(r.error?.message, "no such order");
        assert.deepEqual(
          r.error?.details.map((d) => d.type),
          ["google.rpc.ErrorInfo", "demo.v1.QuotaExceeded"],
        );
        assert.deepEqual(JSON.parse(r.error?.details[0].json ?? "null"), {
          reason: "DEMO_FAILURE",
          domain: "demo.example.com",
          metadata: { requested: "5" },
        });
        assert.deepEqual(JSON.parse(r.error?.details[1].json ?? "null"), {
          resource: "requests",
          limit: "100",
          retryAfter: "30s",
        });
        assert.match(r.error?.text ?? "", /^\{\n {3}"code": "not_found",\n {3}"message": "no such order",/);
      }
      // A failing call leaves the connection warm.
      assert.equal(session.stats().transports, 3);
    } finally {
      await session.close();
    }
  });

  test("cancel: aborting the signal ends a stream at once as canceled (exit 8)", async () => {
    const session = createCallSession();
    try {
      const controller = new AbortController();
      // The stream would run for hours: only the cancel can end it.
      const r = await session.call(
        options(`${demo.url}/demo.v1.DemoService/Count`, { data: '{"count": 50, "delayMs": 600000}' }),
        io,
        { message: () => controller.abort() },
        controller.signal,
      );
      assert.equal(r.ok, false);
      assert.equal(r.code, "canceled");
      assert.equal(r.exitCode, 8);
      // The first message arrived while the stream was open (streamed, not collected at the end).
      assert.equal(r.messages.length, 1);
      // The session still works after a cancel.
      const again = await session.call(options(`${demo.url}/demo.v1.GreetService/Greet`, { data: "{}" }), io);
      assert.equal(again.ok, true, again.error?.message);
    } finally {
      await session.close();
    }
  });

  test("--timeout bounds the setup too: a server that never answers reflection fails at the deadline; its connection is not kept", async () => {
    const silent = await startSilentServer();
    const session = createCallSession({ reflectionTimeoutMs: 600_000 });
    try {
      const r = await session.call(
        options(`http://${silent.host}/demo.v1.GreetService/Greet`, { timeoutMs: 1000 }),
        io,
      );
      assert.equal(r.ok, false);
      assert.equal(r.exitCode, 1);
      assert.equal(
        r.error?.text,
        "protocall: timed out after 1s (--timeout) before the call was sent: context deadline exceeded\n",
      );
      assert.deepEqual(session.stats(), { transports: 0, resolvers: 0 });
    } finally {
      await session.close();
      await silent.close();
    }
  });

  test("cancel before the call: a server that never answers reflection; the call ends as canceled at once", async () => {
    const sockets = new Set<Socket>();
    const controller = new AbortController();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
      // Cancel once the call waits on the server (it never answers, so nothing else ends the call).
      controller.abort();
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const session = createCallSession();
    try {
      const port = (silent.address() as AddressInfo).port;
      const r = await session.call(
        options(`http://127.0.0.1:${port}/demo.v1.GreetService/Greet`, { data: "{}" }),
        io,
        {},
        controller.signal,
      );
      assert.equal(r.code, "canceled");
      assert.equal(r.exitCode, 8);
    } finally {
      await session.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  test("client and bidi streams; a bidi stream over plain HTTP/1.1 gets an h2c connection of its own", async () => {
    const session = createCallSession();
    try {
      const sum = await session.call(
        options(`${demo.url}/demo.v1.DemoService/Sum`, { data: '{"number": 1} {"number": 41}' }),
        io,
      );
      assert.deepEqual(
        sum.messages.map((m) => JSON.parse(m)),
        [{ sum: "42", count: 2 }],
      );
      const schema = await demoDescriptorSet();
      const lines: string[] = [];
      const chat = await session.call(
        options(`${demo.url}/demo.v1.DemoService/Chat`, {
          schemas: [schema],
          data: '{"text": "a"} {"text": "b"}',
        }),
        io,
        { log: (l) => lines.push(l) },
      );
      assert.equal(chat.ok, true, chat.error?.message);
      assert.deepEqual(
        chat.messages.map((m) => JSON.parse(m)),
        [
          { text: "a", number: 1 },
          { text: "b", number: 2 },
        ],
      );
      assert.ok(lines.some((l) => l.includes("a bidi stream needs HTTP/2")));
      // A unary call with the same options still goes over HTTP/1.1 (to an HTTP/1.1-only server).
      const unary = await session.call(
        options(`${http1.url}/demo.v1.GreetService/Greet`, { schemas: [schema], data: "{}" }),
        io,
      );
      assert.equal(unary.ok, true, unary.error?.message);
    } finally {
      await session.close();
    }
  });

  test("TLS with the test CA; an unknown authority fails as unavailable and the bad connection is dropped", async () => {
    const session = createCallSession();
    try {
      const url = `${tls.url.replace("127.0.0.1", "localhost")}/demo.v1.GreetService/Greet`;
      const ok = await session.call(options(url, { cacert: pki.ca.certPath, data: '{"name": "tls"}' }), io);
      assert.equal(ok.ok, true, ok.error?.message);
      assert.deepEqual(JSON.parse(ok.messages[0]), { greeting: "Hello, tls!" });
      const bad = await session.call(options(url, { cacert: pki.otherCa.certPath, data: "{}" }), io);
      assert.equal(bad.ok, false);
      assert.equal(bad.exitCode, 1);
      assert.match(bad.error?.message ?? "", /x509: certificate signed by unknown authority/);
      const tlsCall = await session.call(
        options(url, { cacert: pki.otherCa.certPath, schemas: [await demoDescriptorSet()], data: "{}" }),
        io,
      );
      assert.equal(tlsCall.code, "unavailable");
      assert.equal(tlsCall.exitCode, 112);
      // The trusted connection stays; the failed ones are gone.
      assert.equal(session.stats().transports, 1);
    } finally {
      await session.close();
    }
  });

  test("fallback sources answer when the server has no reflection; without them the error names what was tried", async () => {
    const workspace: SchemaSource = await openSchema(examplesDir, {
      cwd: process.cwd(),
      stdin: process.stdin,
    });
    const url = `${noReflection.url}/demo.v1.GreetService/Greet`;
    const plain = createCallSession();
    const withFallback = createCallSession({ fallbackSources: () => [workspace] });
    try {
      const r = await plain.call(options(url, { data: "{}" }), io);
      assert.equal(r.ok, false);
      assert.equal(r.exitCode, 1);
      assert.match(r.error?.message ?? "", /reflection at http:\/\/127\.0\.0\.1:\d+/);
      const f = await withFallback.call(options(url, { data: '{"name": "fallback"}' }), io);
      assert.equal(f.ok, true, f.error?.message);
      assert.deepEqual(JSON.parse(f.messages[0]), { greeting: "Hello, fallback!" });
      // The session does not own the fallback source: closing it leaves the source usable.
      await withFallback.close();
      assert.equal((await workspace.findType("demo.v1.GreetService"))?.kind, "service");
    } finally {
      await plain.close();
      await withFallback.close();
      await workspace.close();
    }
  });

  test("a @grpc/grpc-js server through its reflection, over gRPC", async () => {
    const session = createCallSession();
    try {
      const r = await session.call(
        options(`${grpcJs.url}/shop.v1.OrderService/WatchOrders`, { protocol: "grpc", data: '{"id": "o"}' }),
        io,
      );
      assert.equal(r.ok, true, r.error?.message);
      assert.deepEqual(
        r.messages.map((m) => JSON.parse(m).id),
        ["o-1", "o-2"],
      );
    } finally {
      await session.close();
    }
  });

  test("a method missing from cached schemas is looked up once more in fresh ones (a rebuilt descriptor set)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "protocall-session-"));
    const set = join(dir, "api.binpb");
    // First only greet.proto; later the whole demo API, as a rebuild would write it.
    writeFileSync(
      set,
      toBinary(
        FileDescriptorSetSchema,
        create(FileDescriptorSetSchema, { file: [file_demo_v1_greet.proto] }),
      ),
    );
    const session = createCallSession();
    try {
      const greet = await session.call(
        options(`${noReflection.url}/demo.v1.GreetService/Greet`, { schemas: [set], data: "{}" }),
        io,
      );
      assert.equal(greet.ok, true, greet.error?.message);
      const before = await session.call(
        options(`${noReflection.url}/demo.v1.DemoService/Sum`, { schemas: [set] }),
        io,
      );
      assert.equal(before.ok, false);
      assert.match(before.error?.message ?? "", /service "demo\.v1\.DemoService" not found/);
      copyFileSync(await demoDescriptorSet(), set);
      const lines: string[] = [];
      const after = await session.call(
        options(`${noReflection.url}/demo.v1.DemoService/Sum`, { schemas: [set], data: '{"number": 2}' }),
        io,
        { log: (l) => lines.push(l) },
      );
      assert.equal(after.ok, true, after.error?.message);
      assert.deepEqual(JSON.parse(after.messages[0]), { sum: "2", count: 1 });
      assert.ok(lines.some((l) => l.includes("resolving the schema again")));
    } finally {
      await session.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("-o/--output: the messages also go to the file; a path that cannot be written fails before sending", async () => {
    const dir = mkdtempSync(join(tmpdir(), "protocall-session-out-"));
    const session = createCallSession();
    try {
      const r = await session.call(
        options(`${demo.url}/demo.v1.DemoService/Count`, { data: '{"count": 2}', output: "out.json" }),
        { ...io, cwd: dir },
      );
      assert.equal(r.ok, true, r.error?.message);
      assert.equal(readFileSync(join(dir, "out.json"), "utf8"), `${r.messages.join("\n")}\n`);
      const bad = await session.call(
        options(`${demo.url}/demo.v1.DemoService/Count`, {
          data: '{"count": 2}',
          output: "missing/out.json",
        }),
        { ...io, cwd: dir },
      );
      assert.equal(bad.exitCode, 1);
      assert.match(
        bad.error?.message ?? "",
        /^--output missing\/out\.json: cannot write .*ENOENT; check the path$/,
      );
      assert.deepEqual(bad.messages, []);
    } finally {
      await session.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("listings, and failures before the call: one message, exit 1, never a throw", async () => {
    const session = createCallSession();
    try {
      const list = await session.call(options(demo.url, { listServices: true }), io);
      assert.equal(list.ok, true, list.error?.message);
      assert.ok(list.listing?.includes("demo.v1.GreetService"));
      const methods = await session.call(options(demo.url, { listMethods: true }), io);
      assert.ok(methods.listing?.includes("demo.v1.DemoService/Count"));

      const badUrl = await session.call(options("ftp://x/a.B/C"), io);
      assert.equal(badUrl.ok, false);
      assert.equal(badUrl.exitCode, 1);
      assert.equal(badUrl.code, undefined);
      assert.match(badUrl.error?.text ?? "", /^protocall: invalid URL "ftp:\/\/x\/a.B\/C": scheme "ftp"/);

      const badJson = await session.call(
        options(`${demo.url}/demo.v1.GreetService/Greet`, { data: '{"nope": 1}' }),
        io,
      );
      assert.equal(badJson.exitCode, 1);
      assert.match(badJson.error?.message ?? "", /not a valid demo\.v1\.GreetRequest/);

      const unknownMethod = await session.call(options(`${demo.url}/demo.v1.GreetService/Gret`), io);
      assert.match(unknownMethod.error?.message ?? "", /Did you mean "Greet"/);

      const refused = await session.call(
        options("http://127.0.0.1:1/demo.v1.GreetService/Greet", { schemas: [await demoDescriptorSet()] }),
        io,
      );
      assert.equal(refused.code, "unavailable");
      assert.equal(refused.exitCode, 112);
      assert.match(refused.error?.message ?? "", /connection refused/);
    } finally {
      await session.close();
    }
  });
});
