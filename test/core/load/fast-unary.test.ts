// The light path of a load run (src/core/load/fast-unary.ts) against the call pipeline, on a real
// Connect server over h2c: each request of a .rpc file is called once through the call session and
// once through the light path, and both are judged by the checked-request runner; verdicts, checks,
// status, error details, headers and messages must agree. Requests it cannot carry alike are refused.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import type { DescMethod } from "@bufbuild/protobuf";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  type CheckedCall,
  type CheckedRequest,
  checkedRequestOf,
  runCheckedRequest,
} from "../../../src/core/assertions/checked-request";
import { type CallSession, createCallSession } from "../../../src/core/invoke/call-session";
import { fastUnaryRefusal, openFastUnary } from "../../../src/core/load/fast-unary";
import { openRpcContext } from "../../../src/core/rpcfile/context";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { prepareSend } from "../../../src/core/rpcfile/prepare-send";
import { GreetService } from "../../../src/gen/demo/v1/greet_pb";
import { type LoadServer, startLoadServer } from "../../support/load-server";

const dir = mkdtempSync(join(tmpdir(), "protocall-fast-unary-"));
mkdirSync(join(dir, ".git"));
const io = { cwd: dir, env: {}, homedir: homedir() };
const inputIo = { ...io, stdin: Readable.from([]), stdinIsTTY: false };
let server: LoadServer;
let session: CallSession;

before(async () => {
  server = await startLoadServer();
  session = createCallSession({ product: "protocall/test" });
});
after(async () => {
  await session?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The requests of a .rpc text (HOST = the server), prepared as a load run prepares them. */
function requests(text: string): CheckedRequest[] {
  const file = join(dir, "api.rpc");
  const body = text.replaceAll("HOST", server.url);
  writeFileSync(file, body);
  const parsed = parseRpcFile(body);
  const context = openRpcContext({ filePath: file, processEnv: {}, overrides: {} });
  return parsed.requests.map((r) => {
    const p = prepareSend({
      text: body,
      parsed,
      filePath: file,
      requestIndex: r.index,
      processEnv: {},
      context,
      run: { captures: {} },
    });
    assert.ok(p.options, p.problems.map((x) => x.text).join("; "));
    return checkedRequestOf(p, p.options);
  });
}

/** A call through the pipeline, and the method it resolved. */
async function viaPipeline(r: CheckedRequest): Promise<{ run: CheckedCall; method?: DescMethod }> {
  let method: DescMethod | undefined;
  const run = await runCheckedRequest(session, r, io, {
    observer: { method: (m) => (method = m.descriptor) },
  });
  return { run, method };
}

/** What both paths must agree on (the Date header aside: it may tick between the calls). */
function comparable(c: CheckedCall) {
  return {
    verdict: c.verdict,
    exitCode: c.exitCode,
    code: c.call.code,
    error: c.call.error && {
      message: c.call.error.message,
      details: c.call.error.details,
      text: c.call.error.text,
    },
    headers: c.call.headers.filter(([n]) => n !== "date"),
    trailers: c.call.trailers,
    messages: c.call.messages,
    checks: c.evaluation.checks.map((x) => ({ text: x.text, passed: x.passed, message: x.message })),
    failures: c.failures.map((f) => f.message),
  };
}

describe("the light path of a load run", { timeout: 120_000 }, () => {
  test("answers and judges each request as the call pipeline does", async () => {
    const rs = requests(`### Greet
# @http2-prior-knowledge
# @assert message.greeting == "Hello, x!"
# @assert headers["content-type"] == "application/proto"
HOST/demo.v1.GreetService/Greet

{"name": "x"}

### Greet with a check that fails
# @http2-prior-knowledge
# @assert message.greeting == "Hello, nobody!"
HOST/demo.v1.GreetService/Greet

{"name": "y"}

### Fail with details, expected
# @http2-prior-knowledge
# @assert status == not_found
# @assert error.message == "gone"
HOST/demo.v1.DemoService/Fail

{"code": "CODE_NOT_FOUND", "message": "gone", "details": ["DETAIL_ERROR_INFO", "DETAIL_BAD_REQUEST", "DETAIL_QUOTA_EXCEEDED"]}

### Fail, not expected
# @http2-prior-knowledge
HOST/demo.v1.DemoService/Fail

{"code": "CODE_PERMISSION_DENIED", "message": "no"}

### A body that is not the input type
# @http2-prior-knowledge
HOST/demo.v1.GreetService/Greet

{"nam": "z"}
`);
    const controller = new AbortController();
    const seen: string[] = [];
    for (const r of rs) {
      const slow = await viaPipeline(r);
      // The last request's body is refused before it is sent, so the pipeline resolves a method
      // only when the call gets that far; the light path is opened from the first request's.
      const method = slow.method ?? (await viaPipeline(rs[0])).method;
      assert.ok(method, "the call session hands over the resolved method");
      const light = await openFastUnary(r, method, inputIo, "protocall/test", 1);
      assert.notEqual(typeof light, "string", `refused: ${light}`);
      if (typeof light === "string") return;
      try {
        const quick = light.call(r, 0, controller.signal);
        assert.ok(quick, "the light path takes the request");
        const fast = await quick;
        assert.deepEqual(comparable(fast), comparable(slow.run));
        seen.push(fast.verdict);
      } finally {
        light.close();
      }
    }
    assert.deepEqual(seen, ["passed", "failed", "passed", "failed", "errored"]);
  });

  test("keeps one connection per slot across calls, and sends each changed body", async () => {
    const [r] = requests(`# @http2-prior-knowledge
HOST/demo.v1.GreetService/Greet

{"name": "one"}
`);
    const { method } = await viaPipeline(r);
    assert.ok(method);
    const light = await openFastUnary(r, method, inputIo, "protocall/test", 2);
    assert.ok(typeof light !== "string", String(light));
    const before = server.connections();
    server.names.length = 0;
    const signal = new AbortController().signal;
    try {
      const calls: Promise<CheckedCall>[] = [];
      for (let i = 0; i < 20; i++) {
        const changed = { ...r, options: { ...r.options, data: `{"name": "n${i}"}` } };
        const call = light.call(changed, i % 2, signal);
        assert.ok(call);
        calls.push(call);
      }
      const done = await Promise.all(calls);
      assert.ok(done.every((c) => c.verdict === "passed"));
      assert.deepEqual([...server.names].sort(), Array.from({ length: 20 }, (_, i) => `n${i}`).sort());
      assert.equal(server.connections() - before, 2);
      // Options that differ in more than the body are left to the pipeline.
      const other = { ...r, options: { ...r.options, headers: ["X-Other: 1"] } };
      assert.equal(light.call(other, 0, signal), undefined);
    } finally {
      light.close();
    }
  });

  test("a canceled run ends the calls in flight as canceled", async () => {
    const [r] = requests(`# @http2-prior-knowledge
HOST/demo.v1.GreetService/Greet

{"name": "slow"}
`);
    const { method } = await viaPipeline(r);
    assert.ok(method);
    const light = await openFastUnary(r, method, inputIo, "protocall/test", 1);
    assert.ok(typeof light !== "string", String(light));
    try {
      server.names.length = 0;
      server.stallOnce(30_000);
      const controller = new AbortController();
      const call = light.call(r, 0, controller.signal);
      assert.ok(call);
      while (!server.names.includes("slow")) await new Promise((res) => setTimeout(res, 10));
      controller.abort();
      const c = await call;
      assert.equal(c.call.code, "canceled");
      assert.equal(c.verdict, "failed");
    } finally {
      light.close();
    }
  });

  test("a canceled run also ends the calls left on a connection the server sent GOAWAY on", async () => {
    // A server of its own: Greet with the name "stall" never answers; GOAWAY is sent on demand.
    const sessions = new Set<http2.ServerHttp2Session>();
    const names: string[] = [];
    const own = http2.createServer(
      connectNodeAdapter({
        routes: (router) =>
          router.service(GreetService, {
            async greet(req) {
              names.push(req.name);
              if (req.name === "stall") await new Promise(() => {});
              return { greeting: `Hello, ${req.name}!` };
            },
          }),
      }) as never,
    );
    own.on("session", (x) => sessions.add(x));
    await new Promise<void>((res) => own.listen(0, "127.0.0.1", res));
    const url = `http://127.0.0.1:${(own.address() as AddressInfo).port}`;
    const [stall, next] = requests(`### stall
# @http2-prior-knowledge
${url}/demo.v1.GreetService/Greet

{"name": "stall"}

### next
# @http2-prior-knowledge
${url}/demo.v1.GreetService/Greet

{"name": "next"}
`);
    const light = await openFastUnary(stall, GreetService.method.greet, inputIo, "protocall/test", 1);
    assert.ok(typeof light !== "string", String(light));
    const controller = new AbortController();
    try {
      const stalled = light.call(stall, 0, controller.signal);
      assert.ok(stalled);
      while (!names.includes("stall")) await new Promise((res) => setTimeout(res, 10));
      // The server takes no stream after the stalled one (the connection's first) but still owes it.
      for (const x of sessions) x.goaway(http2.constants.NGHTTP2_NO_ERROR, 1);
      // Later calls go over a new connection once the client has read the GOAWAY (one sent before
      // it did is refused).
      let passed = false;
      for (let i = 0; i < 50 && !passed; i++) {
        const c: Promise<CheckedCall> | undefined = light.call(
          { ...stall, options: { ...stall.options, data: next.options.data } },
          0,
          controller.signal,
        );
        assert.ok(c);
        const r: CheckedCall = await c;
        passed = r.verdict === "passed";
        if (!passed) assert.equal(r.call.code, "unavailable", r.call.error?.message);
      }
      assert.ok(passed);
      assert.equal(sessions.size, 2);
      controller.abort();
      const ended = await Promise.race([
        stalled,
        new Promise<"hung">((res) => setTimeout(() => res("hung"), 10_000)),
      ]);
      assert.notEqual(ended, "hung", "the stalled call was left running");
      if (ended !== "hung") assert.equal(ended.call.code, "canceled");
    } finally {
      light.close();
      for (const x of sessions) x.destroy();
      await new Promise<void>((res) => own.close(() => res()));
    }
  });

  test("refuses what it cannot carry alike: other protocols, HTTP/1.1, streams, bodies from files, timeouts", async () => {
    const rs = requests(`### gRPC
# @protocol grpc
HOST/demo.v1.GreetService/Greet

{"name": "x"}

### HTTP/1.1
HOST/demo.v1.GreetService/Greet

{"name": "x"}

### a timeout
# @http2-prior-knowledge
# @timeout 5s
HOST/demo.v1.GreetService/Greet

{"name": "x"}

### a stream
# @http2-prior-knowledge
HOST/demo.v1.DemoService/Count

{"count": 2}
`);
    assert.equal(fastUnaryRefusal(rs[0]), "the grpc protocol");
    assert.equal(fastUnaryRefusal(rs[1]), "not HTTP/2 with prior knowledge");
    assert.equal(fastUnaryRefusal(rs[2]), "a timeout");
    assert.equal(
      fastUnaryRefusal({ ...rs[3], options: { ...rs[3].options, data: "@body.json" } }),
      "no inline body",
    );
    const { method } = await viaPipeline(rs[3]);
    assert.ok(method);
    assert.equal(
      await openFastUnary(rs[3], method, inputIo, "protocall/test", 1),
      "a server streaming method",
    );
  });
});
