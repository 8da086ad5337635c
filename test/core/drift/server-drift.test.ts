// The Services view's question: which of the workspace's schemas is this server's source, and how
// does the server differ from it. Against the real demo server (connect-node, reflection).
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, test } from "node:test";
import { runDrift } from "../../../src/core/drift/drift";
import { serverDrift } from "../../../src/core/drift/server-drift";
import { defaultCurlOptions } from "../../../src/core/invoke/options";
import { type DemoServer, examplesDir, startDemoServer } from "../../support/servers";

let demo: DemoServer;
const work = mkdtempSync(join(tmpdir(), "protocall-server-drift-"));
before(async () => {
  demo = await startDemoServer();
});
after(async () => {
  await demo.close();
  rmSync(work, { recursive: true, force: true });
});

const options = () => ({
  cwd: work,
  stdin: Readable.from([]),
  connection: defaultCurlOptions(),
  timeoutMs: 10_000,
});

test("the first schema that declares a served service is the one compared", async () => {
  const other = join(work, "other");
  mkdirSync(other);
  writeFileSync(
    join(other, "other.proto"),
    'syntax = "proto3";\npackage other.v1;\nmessage M {}\nservice S {\n  rpc Get(M) returns (M);\n}\n',
  );
  const changed = join(work, "changed");
  cpSync(examplesDir, changed, { recursive: true });
  const greet = join(changed, "proto/demo/v1/greet.proto");
  writeFileSync(
    greet,
    readFileSync(greet, "utf8").replace("  string name = 1;\n", "  string name = 1;\n  string title = 2;\n"),
  );
  const missing = join(work, "missing");
  const found = await serverDrift(demo.url, [missing, other, changed, examplesDir], options());
  assert.ok(found);
  assert.equal(found.against, changed);
  assert.equal(found.report.verdict, "breaking");
  assert.deepEqual(
    found.report.differences.map((d) => d.name),
    ["demo.v1.GreetRequest.title"],
  );
  // The editor's badge and `protocall drift` answer the same question the same way.
  assert.deepEqual(found.report, await runDrift(demo.url, changed, options()));
  const same = await serverDrift(demo.url, [examplesDir, changed], options());
  assert.equal(same?.against, examplesDir);
  assert.equal(same?.report.verdict, "same");
  assert.equal(await serverDrift(demo.url, [other], options()), undefined);
});

test("an unreachable server is an error", async () => {
  await assert.rejects(serverDrift("http://127.0.0.1:1", [examplesDir], options()), /connection refused/);
});
