// The checked-request runner against the real demo server: messages as assertions read them
// (implicit fields at their defaults), status, headers, trailers, the error with decoded details,
// a failure outside the RPC (every check "not run", one failure line), verdicts and exit codes.
import assert from "node:assert/strict";
import { homedir } from "node:os";
import { after, before, describe, test } from "node:test";
import {
  type CheckedCall,
  checkedRequestOf,
  readsMessages,
  runCheckedRequest,
} from "../../../src/core/assertions/checked-request";
import { summarize } from "../../../src/core/assertions/results";
import { type CallSession, createCallSession } from "../../../src/core/invoke/call-session";
import { openRpcContext } from "../../../src/core/rpcfile/context";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { prepareSend } from "../../../src/core/rpcfile/prepare-send";
import { type DemoServer, startDemoServer } from "../../support/servers";

const io = { cwd: process.cwd(), env: {}, homedir: homedir() };

describe("runCheckedRequest", { timeout: 120_000 }, () => {
  let demo: DemoServer;
  let session: CallSession;
  before(async () => {
    demo = await startDemoServer();
    session = createCallSession();
  });
  after(async () => {
    await session.close();
    await demo.close();
  });

  /** Prepares the first request of `text` (with `HOST` the demo server) and runs it checked. */
  async function check(text: string, observer?: { message?(json: string): void }): Promise<CheckedCall> {
    const source = text.replaceAll("HOST", demo.url);
    const parsed = parseRpcFile(source);
    const filePath = `${process.cwd()}/checked.rpc`;
    const context = openRpcContext({ filePath, processEnv: {} });
    const p = prepareSend({ text: source, parsed, filePath, requestIndex: 0, processEnv: {}, context });
    assert.deepEqual(p.problems, []);
    assert.ok(p.options);
    const request = checkedRequestOf(p, p.options);
    return runCheckedRequest(session, request, io, { observer });
  }

  test("messages carry their implicit defaults; headers and trailers are kept; captures taken", async () => {
    const printed: string[] = [];
    const c = await check(
      '# @protocol grpc\n# @assert messages.length == 2\n# @assert message.text == ""\n# @assert trailers["grpc-status"] == "0"\n# @capture last = message.number\nHOST/demo.v1.DemoService/Count\n\n{"count": 2}\n',
      { message: (json) => printed.push(json) },
    );
    assert.equal(c.verdict, "passed", JSON.stringify(c.evaluation.checks));
    assert.equal(c.exitCode, 0);
    assert.deepEqual(c.failures, []);
    // Printed as protocall curl prints it (no implicit defaults); checked with them.
    assert.deepEqual(JSON.parse(printed[0]), { number: 1 });
    assert.deepEqual(c.outcome.messages, [
      { number: 1, text: "" },
      { number: 2, text: "" },
    ]);
    assert.deepEqual(c.evaluation.captured, { last: "2" });
  });

  test("a request whose checks read no message keeps none", async () => {
    const c = await check('# @assert status == ok\nHOST/demo.v1.GreetService/Greet\n\n{"name": "x"}\n');
    assert.equal(c.verdict, "passed");
    assert.deepEqual(c.outcome.messages, []);
    assert.equal(c.call.messages.length, 1);
    assert.equal(readsMessages({ assertions: [], captures: [] }), false);
  });

  test("an RPC error: its code, message and details by type name; unexpected, it exits as curl", async () => {
    const expected = await check(
      "# @assert status == not_found\n# @assert error.details[google.rpc.BadRequest] exists\nHOST/demo.v1.DemoService/Fail\n\n" +
        '{"code": "CODE_NOT_FOUND", "message": "no such order", "details": ["DETAIL_BAD_REQUEST"]}\n',
    );
    assert.equal(expected.verdict, "passed", JSON.stringify(expected.evaluation.checks));
    assert.equal(expected.outcome.error?.message, "no such order");
    assert.deepEqual(
      expected.outcome.error?.details.map((d) => d.type),
      ["google.rpc.BadRequest"],
    );
    const unexpected = await check(
      'HOST/demo.v1.DemoService/Fail\n\n{"code": "CODE_NOT_FOUND", "message": "no such order"}\n',
    );
    assert.equal(unexpected.verdict, "failed");
    assert.equal(unexpected.exitCode, 40);
    assert.deepEqual(
      unexpected.failures.map((f) => f.message),
      ["expected status == ok, got not_found: no such order (assert on status or error to expect a failure)"],
    );
  });

  test("a failure outside the RPC: errored, every check not run, one failure line", async () => {
    const c = await check(
      "# @assert error.details[google.rpc.ErrorInfo] !exists\n# @capture x = message.greeting\nhttp://127.0.0.1:1/demo.v1.GreetService/Greet\n\n{}\n",
    );
    assert.equal(c.verdict, "errored");
    assert.equal(c.exitCode, 1);
    assert.equal(c.outcome.status, undefined);
    assert.match(c.outcome.failure ?? "", /connect|refused/i);
    // `!exists` does not pass on a call that never answered (an assertion on error: no implicit check).
    assert.deepEqual(
      c.evaluation.checks.map((x) => [x.kind, x.passed, x.notRun]),
      [
        ["assert", false, true],
        ["capture", false, true],
      ],
    );
    assert.deepEqual(c.evaluation.captured, {});
    assert.equal(c.failures.length, 1);
    assert.match(c.failures[0].message, /^the call failed: .*(connect|refused)/i);
    const s = summarize([
      { file: "f", name: "n", line: 1, verdict: c.verdict, durationMs: 0, checks: c.evaluation.checks },
    ]);
    assert.deepEqual(s.checks, { passed: 0, failed: 0, notRun: 2 });
  });
});
