// Assertions and captures against real responses: the request file of the README's example and a
// few more, prepared as the editor prepares them (prepareSend, with the values captured so far), sent
// to the demo server and evaluated by the checked-request runner. Passing and failing checks on
// messages, headers, trailers and typed error details; a capture feeding the next request.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { checkedRequestOf, runCheckedRequest } from "../../../src/core/assertions/checked-request";
import type { Evaluation } from "../../../src/core/assertions/evaluate";
import { type CallSession, createCallSession } from "../../../src/core/invoke/call-session";
import { parseRpcFile } from "../../../src/core/rpcfile/parse";
import { prepareSend } from "../../../src/core/rpcfile/prepare-send";
import { repoRoot } from "../../support/cli";
import { type DemoServer, startDemoServer } from "../../support/servers";

describe("assertions against the demo server", { timeout: 60_000 }, () => {
  let demo: DemoServer;
  let session: CallSession;
  let dir: string;

  before(async () => {
    demo = await startDemoServer();
    session = createCallSession({ product: "protocall/test" });
    dir = mkdtempSync(join(tmpdir(), "protocall-asserts-"));
  });

  after(async () => {
    await session?.close();
    await demo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs every request of a file in order, captures feeding the next, as a run would. */
  async function run(text: string): Promise<{ name: string; evaluation: Evaluation }[]> {
    const parsed = parseRpcFile(text);
    assert.deepEqual(
      parsed.diagnostics.map((d) => d.message),
      [],
    );
    const captures: Record<string, string> = {};
    const out: { name: string; evaluation: Evaluation }[] = [];
    for (const request of parsed.requests) {
      const p = prepareSend({
        text,
        parsed,
        filePath: join(dir, "demo.rpc"),
        requestIndex: request.index,
        processEnv: {},
        run: { captures },
      });
      assert.deepEqual(
        p.problems.map((x) => x.text),
        [],
      );
      assert.ok(p.options);
      const checked = checkedRequestOf(p, p.options);
      const { evaluation } = await runCheckedRequest(session, checked, {
        cwd: dir,
        env: {},
        homedir: homedir(),
      });
      Object.assign(captures, evaluation.captured);
      out.push({ name: p.label, evaluation });
    }
    return out;
  }

  test("the README's example passes, its capture feeding the next request", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Request files that test themselves"));
    const example = /```\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(example);
    const results = await run(example.replace(/^@host = .*$/m, `@host = ${demo.url}`));
    for (const r of results) {
      const failed = r.evaluation.checks.filter((c) => !c.passed).map((c) => c.message);
      assert.deepEqual(failed, [], r.name);
    }
    assert.deepEqual(
      results.map((r) => [r.name, r.evaluation.checks.length]),
      [
        ["Greet someone", 4],
        ["An error with details", 3],
      ],
    );
    // The captured greeting went into the second request as its error message.
    assert.equal(results[0].evaluation.captured.greeting, "Hello, world!");
  });

  test("passing and failing checks on messages, headers, trailers and error details", async () => {
    const results = await run(`### Stream
# @protocol grpc
# @assert messages.length == 3
# @assert messages[*].number == [1, 2, 3]
# @assert messages[-1].text matches /^tick/
# @assert headers["content-type"] == "application/grpc+proto"
# @assert trailers["grpc-status"] == 0
# @assert messages[0].number == 2
# @assert message.text contains "tock"
${demo.url}/demo.v1.DemoService/Count

{"count": 3, "text": "tick"}

### Details
# @protocol grpc
# @assert status == resource_exhausted
# @assert error.message == "slow down"
# @assert error.details.length == 2
# @assert error.details[google.rpc.RetryInfo].retryDelay == "1.500s"
# @assert error.details[demo.v1.QuotaExceeded].limit == 100
# @assert error.details[google.rpc.BadRequest] exists
# @capture reason = error.details[google.rpc.RetryInfo].retryDelay
${demo.url}/demo.v1.DemoService/Fail

{"code": "CODE_RESOURCE_EXHAUSTED", "message": "slow down", "details": ["DETAIL_RETRY_INFO", "DETAIL_QUOTA_EXCEEDED"]}
`);
    const [stream, details] = results.map((r) => r.evaluation.checks.map((c) => [c.passed, c.message]));
    assert.deepEqual(stream, [
      [true, "status == ok"],
      [true, "messages.length == 3"],
      [true, "messages[*].number == [1, 2, 3]"],
      [true, "messages[-1].text matches /^tick/"],
      [true, 'headers["content-type"] == "application/grpc+proto"'],
      [true, 'trailers["grpc-status"] == 0'],
      [false, "expected messages[0].number == 2, got 1"],
      [false, 'expected message.text contains "tock", got "tick"'],
    ]);
    assert.deepEqual(details, [
      [true, "status == resource_exhausted"],
      [true, 'error.message == "slow down"'],
      [true, "error.details.length == 2"],
      [true, 'error.details[google.rpc.RetryInfo].retryDelay == "1.500s"'],
      [true, "error.details[demo.v1.QuotaExceeded].limit == 100"],
      [
        false,
        "expected error.details[google.rpc.BadRequest] exists, got nothing (no detail of type google.rpc.BadRequest (the details: google.rpc.RetryInfo, demo.v1.QuotaExceeded))",
      ],
      [true, 'captured reason = "1.500s"'],
    ]);
  });
});
