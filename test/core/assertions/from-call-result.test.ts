// The call session's result as the outcome assertions read: messages with their default values
// (from the session's withDefaults, against the real demo server), status, headers, trailers, the
// error with decoded details, and failures outside the RPC.
import assert from "node:assert/strict";
import { homedir } from "node:os";
import { after, before, describe, test } from "node:test";
import { evaluateChecks } from "../../../src/core/assertions/evaluate";
import { outcomeFromCallResult } from "../../../src/core/assertions/from-call-result";
import { createCallSession } from "../../../src/core/invoke/call-session";
import { defaultCurlOptions } from "../../../src/core/invoke/options";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { type DemoServer, startDemoServer } from "../../support/servers";

const io = { cwd: process.cwd(), env: {}, homedir: homedir() };

function checksOf(text: string) {
  const request = parseRpcFile(text).requests[0];
  return { assertions: request.assertions, captures: request.captures, range: request.range };
}

describe("outcomeFromCallResult", { timeout: 120_000 }, () => {
  let demo: DemoServer;
  before(async () => {
    demo = await startDemoServer();
  });
  after(async () => {
    await demo.close();
  });

  test("messages carry their default values; headers and trailers are kept", async () => {
    const session = createCallSession();
    try {
      const withDefaults: string[] = [];
      const result = await session.call(
        {
          ...defaultCurlOptions(),
          url: `${demo.url}/demo.v1.DemoService/Count`,
          protocol: "grpc",
          data: '{"count": 2}',
        },
        io,
        { message: (_json, _i, defaults) => withDefaults.push(defaults()) },
      );
      assert.equal(result.ok, true, result.error?.message);
      assert.deepEqual(JSON.parse(result.messages[0]), { number: 1 });
      const outcome = outcomeFromCallResult(result, withDefaults);
      assert.equal(outcome.status, "ok");
      assert.deepEqual(outcome.messages, [
        { number: 1, text: "" },
        { number: 2, text: "" },
      ]);
      assert.ok(outcome.trailers.some(([n]) => n === "grpc-status"));
      const evaluation = evaluateChecks(
        outcome,
        checksOf(
          '###\n# @assert messages.length == 2\n# @assert message.text == ""\n# @capture last = message.number\nhttp://x/a.B/C\n',
        ),
      );
      assert.equal(evaluation.passed, true, JSON.stringify(evaluation.checks));
      assert.deepEqual(evaluation.captured, { last: "2" });
    } finally {
      await session.close();
    }
  });

  test("an RPC error: its code, message and details by type name", async () => {
    const session = createCallSession();
    try {
      const result = await session.call(
        {
          ...defaultCurlOptions(),
          url: `${demo.url}/demo.v1.DemoService/Fail`,
          data: '{"code": "CODE_NOT_FOUND", "message": "no such order", "details": ["DETAIL_BAD_REQUEST"]}',
        },
        io,
      );
      const outcome = outcomeFromCallResult(result);
      assert.equal(outcome.status, "not_found");
      assert.equal(outcome.error?.message, "no such order");
      assert.deepEqual(
        outcome.error?.details.map((d) => d.type),
        ["google.rpc.BadRequest"],
      );
      const evaluation = evaluateChecks(
        outcome,
        checksOf(
          "###\n# @assert status == not_found\n# @assert error.details[google.rpc.BadRequest] exists\nhttp://x/a.B/C\n",
        ),
      );
      assert.equal(evaluation.passed, true, JSON.stringify(evaluation.checks));
    } finally {
      await session.close();
    }
  });

  test("a failure outside the RPC has no status and says why", async () => {
    const session = createCallSession();
    try {
      const result = await session.call(
        { ...defaultCurlOptions(), url: "http://127.0.0.1:1/demo.v1.GreetService/Greet", data: "{}" },
        io,
      );
      const outcome = outcomeFromCallResult(result);
      assert.equal(outcome.status, undefined);
      assert.match(outcome.failure ?? "", /connect|refused/i);
      const evaluation = evaluateChecks(outcome, checksOf("###\nhttp://x/a.B/C\n"));
      assert.equal(evaluation.passed, false);
      assert.match(evaluation.checks[0].message, /^the call failed: /);
    } finally {
      await session.close();
    }
  });
});
