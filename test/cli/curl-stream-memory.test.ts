// A fast server stream of small messages (test/support/fast-stream-server.ts) written to -o: the
// client reads with back-pressure, so its memory stays flat however fast the server writes (before,
// each chunk read from the connection, megabytes of messages, was decoded and formatted whole before
// any of it was written out, and the peak grew to about 1 GB for 100 MB of messages).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { cliPath } from "../support/cli";
import { type FastStreamServer, startFastStreamServer } from "../support/fast-stream-server";
import { peakRun } from "../support/peak-rss";
import { demoDescriptorSet } from "../support/servers";

let server: FastStreamServer;
let schema: string;
before(async () => {
  [server, schema] = await Promise.all([startFastStreamServer(30_000_000), demoDescriptorSet()]);
});
after(() => server.close());

test("30 MB of small streamed messages to -o: peak RSS stays bounded", { timeout: 300_000 }, async (t) => {
  const run = await peakRun(
    process.execPath,
    [
      cliPath,
      "curl",
      "--protocol",
      "grpc",
      "--schema",
      schema,
      "-d",
      '{"count": 1}',
      "-o",
      "/dev/null",
      `${server.url}/demo.v1.DemoService/Count`,
    ],
    280_000,
  );
  t.diagnostic(`peak RSS ${run.peakMb} MB in ${run.ms} ms`);
  assert.equal(run.code, 0, run.stderr);
  // At rest the CLI takes about 60 MB; without back-pressure this stream took several hundred.
  assert.ok(run.peakMb < 200, `peak RSS ${run.peakMb} MB`);
});
