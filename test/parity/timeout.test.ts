// Parity with `buf curl` for --timeout, which bounds the whole command in buf: when it expires before
// the call is sent (loading the schema, reflection, a TLS handshake that never ends), both fail with
// one line and exit 1 (buf: "timed out after …: context deadline exceeded", or "context deadline
// exceeded" during reflection; protocall: "timed out after <timeout> (--timeout) before the call was
// sent: context deadline exceeded"); when it expires during the call (a server that accepts and never
// answers, over http or https, a stream that stops), both print the same deadline_exceeded error JSON
// and exit 32.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type DemoServer,
  demoDescriptorSet,
  type SilentServer,
  startDemoServer,
  startSilentServer,
} from "../support/servers";
import { assertParity } from "./harness";

/** Ours: one line naming the timeout as given. */
const timedOut = (given: string) =>
  new RegExp(
    `^protocall: timed out after ${given} \\(--timeout\\) before the call was sent: context deadline exceeded\\n$`,
  );

describe("parity: --timeout bounds the whole command", { concurrency: 4, timeout: 300_000 }, () => {
  let demo: DemoServer;
  let schema: string;
  let silent: SilentServer;
  before(async () => {
    [demo, schema, silent] = await Promise.all([startDemoServer(), demoDescriptorSet(), startSilentServer()]);
  });
  after(async () => {
    await Promise.all([silent.close(), demo.close()]);
  });

  const greet = () => `${demo.url}/demo.v1.GreetService/Greet`;
  const slow = { timeoutMs: 60_000 };

  for (const given of ["1ns", "1ms"]) {
    test(`--timeout ${given} with reflection: it expires before the call, exit 1`, async () => {
      const { ours, buf } = await assertParity(["--timeout", given, "-d", "{}", greet()], {
        ...slow,
        code: 1,
      });
      assert.match(ours.stderr, timedOut(given));
      assert.match(buf.stderr, /timed out after .*: context deadline exceeded/);
    });
  }

  test("--timeout 1ms with --schema, and with --list-services: exit 1 before anything is sent", async () => {
    for (const args of [
      ["--schema", schema, "-d", "{}", greet()],
      ["--list-services", demo.url],
    ]) {
      const { ours, buf } = await assertParity(["--timeout", "1ms", ...args], { ...slow, code: 1 });
      assert.match(ours.stderr, timedOut("1ms"));
      assert.match(buf.stderr, /timed out after .*: context deadline exceeded/);
    }
  });

  test("reflection that never answers (h2c) or a TLS handshake that never ends: exit 1 at --timeout", async () => {
    for (const scheme of ["http", "https"]) {
      const url = `${scheme}://${silent.host}/demo.v1.GreetService/Greet`;
      const { ours } = await assertParity(["--timeout", "2s", "-d", "{}", url], { ...slow, code: 1 });
      assert.match(ours.stderr, timedOut("2s"));
    }
  });

  test("a call that is never answered, over http (Connect, gRPC) and https: deadline_exceeded, exit 32", async () => {
    // 5 s leave time to read the schema on a busy machine; the deadline falls during the call.
    for (const [scheme, protocol] of [
      ["http", "connect"],
      ["http", "grpc"],
      ["https", "connect"],
    ]) {
      const url = `${scheme}://${silent.host}/demo.v1.GreetService/Greet`;
      const { ours } = await assertParity(
        ["--timeout", "5s", "--protocol", protocol, "--schema", schema, "-d", "{}", url],
        { ...slow, code: 32 },
      );
      assert.equal(
        ours.stderr,
        '{\n   "code": "deadline_exceeded",\n   "message": "context deadline exceeded"\n}\n',
      );
    }
  });

  test("a stream the server stops sending: the messages so far, then deadline_exceeded, exit 32", async () => {
    // 10 s: the first message must arrive in time on a busy machine, after the schema is read.
    const { ours } = await assertParity(
      [
        "--timeout",
        "10s",
        "--schema",
        schema,
        "-d",
        '{"count": 2, "delayMs": 60000}',
        `${demo.url}/demo.v1.DemoService/Count`,
      ],
      { ...slow, code: 32 },
    );
    assert.equal(ours.stdout, '{\n  "number": 1\n}\n');
  });
});
