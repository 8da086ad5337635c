// `protocall run` with `# @snapshot`, against the real demo server: the first run writes
// requests.snapshots.json, the second passes, a changed field fails with the path in the message and
// in the JSON and JUnit reports, `# @snapshot ignore` scrubs a value that changes on every call,
// `# @snapshot headers` stores chosen headers and trailers, an error is stored with its details, and
// --update-snapshots rewrites the file.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runCli } from "../support/cli";
import { type DemoServer, startDemoServer } from "../support/servers";

const dir = mkdtempSync(join(tmpdir(), "protocall-run-snapshots-"));
let server: DemoServer;

before(async () => {
  server = await startDemoServer();
});

after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function workspace(rpc: string): string {
  const root = join(dir, `ws${++n}`);
  mkdirSync(join(root, ".git"), { recursive: true });
  writeRpc(root, rpc);
  return root;
}
const writeRpc = (root: string, rpc: string) =>
  writeFileSync(join(root, "requests.rpc"), rpc.replaceAll("HOST", server.url));
const run = (root: string, args: string[] = []) =>
  runCli(["run", "requests.rpc", ...args], { cwd: root, timeoutMs: 60_000 });
const stored = (root: string) =>
  JSON.parse(readFileSync(join(root, "requests.snapshots.json"), "utf8")) as {
    version: number;
    requests: Record<string, { status: string; messages: unknown[]; [k: string]: unknown }>;
  };

const counting = (text: string) => `### Count
# @protocol grpc
# @snapshot
# @snapshot headers content-type grpc-status
HOST/demo.v1.DemoService/Count

{"count": 2, "text": "${text}"}
`;

describe("protocall run with snapshots", { timeout: 180_000 }, () => {
  test("first run writes, second passes, a changed field fails naming its path, --update-snapshots rewrites", async () => {
    const root = workspace(counting("tick"));
    const first = await run(root);
    assert.equal(first.code, 0, first.stderr);
    const file = stored(root);
    assert.equal(file.version, 1);
    const snap = file.requests.Count;
    assert.equal(snap.status, "ok");
    assert.deepEqual(snap.messages, [
      { number: 1, text: "tick" },
      { number: 2, text: "tick" },
    ]);
    assert.deepEqual(snap.headers, { "content-type": ["application/grpc+proto"] });
    assert.deepEqual(snap.trailers, { "grpc-status": ["0"] });

    const second = await run(root);
    assert.equal(second.code, 0, second.stderr);

    writeRpc(root, counting("tock"));
    const json = join(root, "out.json");
    const xml = join(root, "out.xml");
    const changed = await run(root, ["--reporter", `json=${json}`, "--reporter", `junit=${xml}`]);
    assert.equal(changed.code, 1);
    assert.match(
      changed.stderr,
      /requests\.rpc:3:1: snapshot differs at 2 paths: messages\[0\]\.text: expected "tick", got "tock"/,
    );
    const report = JSON.parse(readFileSync(json, "utf8"));
    const check = report.requests[0].checks.find((c: { kind: string }) => c.kind === "snapshot");
    assert.equal(check.passed, false);
    assert.deepEqual(check.diff, [
      { path: "messages[0].text", expected: "tick", actual: "tock" },
      { path: "messages[1].text", expected: "tick", actual: "tock" },
    ]);
    assert.match(
      readFileSync(xml, "utf8"),
      /messages\[1\]\.text: expected &quot;tick&quot;, got &quot;tock&quot;/,
    );
    // The failing run left the stored snapshot alone.
    assert.equal(stored(root).requests.Count.messages.length, 2);
    assert.deepEqual(stored(root).requests.Count.messages[0], { number: 1, text: "tick" });

    const update = await run(root, ["--update-snapshots"]);
    assert.equal(update.code, 0, update.stderr);
    assert.deepEqual(stored(root).requests.Count.messages[0], { number: 1, text: "tock" });
    assert.equal((await run(root)).code, 0);
  });

  test("ignore scrubs a value that changes on every call; an error is stored with its details; others are kept", async () => {
    const rpc = `### Inspect
# @snapshot ignore messages[*].headers
HOST/demo.v1.DemoService/Inspect
x-request-id: {{$uuid}}

{}

### Fail
# @snapshot ignore error.details[*].json.retryDelay
HOST/demo.v1.DemoService/Fail

{"code": "CODE_RESOURCE_EXHAUSTED", "message": "slow down", "details": ["DETAIL_RETRY_INFO"]}
`;
    const root = workspace(rpc);
    const first = await run(root);
    // Fail's status is not ok: the implicit check fails, but its snapshot is written all the same.
    assert.equal(first.code, 64, first.stderr);
    const file = stored(root);
    assert.deepEqual(Object.keys(file.requests), ["Fail", "Inspect"]);
    assert.equal((file.requests.Inspect.messages[0] as { headers: unknown }).headers, "<ignored>");
    assert.deepEqual(file.requests.Fail.error, {
      code: "resource_exhausted",
      message: "slow down",
      details: [{ type: "google.rpc.RetryInfo", json: { retryDelay: "<ignored>" } }],
    });
    const second = await run(root, ["--name", "Inspect"]);
    assert.equal(second.code, 0, second.stderr);
    // Without the ignore, the new request id is a difference.
    writeRpc(root, rpc.replace("# @snapshot ignore messages[*].headers", "# @snapshot"));
    const third = await run(root, ["--name", "Inspect"]);
    assert.equal(third.code, 1);
    assert.match(
      third.stderr,
      /snapshot differs at \d+ paths?: messages\[0\]\.headers: expected "<ignored>"/,
    );
  });

  test("a broken snapshot file is a clear failure, not a crash, and is left as it was", async () => {
    const root = workspace(counting("tick"));
    writeFileSync(join(root, "requests.snapshots.json"), "{ not json");
    const r = await run(root);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /requests\.snapshots\.json is not valid JSON .*; fix it, or delete it/);
    assert.equal(readFileSync(join(root, "requests.snapshots.json"), "utf8"), "{ not json");
  });

  test("a wrong @snapshot value is a file problem and nothing is sent", async () => {
    const root = workspace(counting("tick").replace("# @snapshot\n", "# @snapshot scrub id\n"));
    const r = await run(root);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /requests\.rpc:3:\d+: @snapshot takes no value, `ignore <paths>` or `headers <names>`/,
    );
  });
});
