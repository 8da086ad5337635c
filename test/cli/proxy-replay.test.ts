// `protocall proxy replay ID [--to URL]`: a stored call sent again through the call pipeline; the
// same answer exits 0, and an upstream that answers differently (here `protocall mock` with changed
// stubs) exits 1, naming each difference: a message field, the status and message, a trailer.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { readCalls } from "../../src/core/proxy/call-store";
import { type CliServer, startCliServer, waitFor } from "../core/webhooks/support";
import { runBufCurl } from "../support/buf";
import { runCli } from "../support/cli";
import { type DemoServer, demoDescriptorSet, startDemoServer } from "../support/servers";

const work = mkdtempSync(join(tmpdir(), "protocall-proxy-replay-"));
const store = join(work, "calls.store");
let demo: DemoServer;
let proxy: CliServer;
let changed: CliServer;
const ids: Record<string, number> = {};

const calls: [string, string, string, string][] = [
  ["greet", "grpc", "demo.v1.GreetService/Greet", '{"name":"replay"}'],
  ["count", "connect", "demo.v1.DemoService/Count", '{"count":2,"text":"tick"}'],
  ["fail", "grpcweb", "demo.v1.DemoService/Fail", '{"code":"CODE_NOT_FOUND","message":"gone"}'],
];

before(async () => {
  demo = await startDemoServer();
  proxy = await startCliServer(["proxy", "--upstream", demo.url, "--store", store]);
  for (const [key, protocol, method, data] of calls) {
    await runBufCurl([
      "--protocol",
      protocol,
      "--http2-prior-knowledge",
      "-d",
      data,
      `${proxy.url}/${method}`,
    ]);
    const call = await waitFor(
      () =>
        readCalls(store).find(
          (c) => c.method === method && JSON.stringify(c.decoded?.request) === `[${data}]`,
        ),
      `the stored ${key} call`,
    );
    ids[key] = call.id;
  }
  // The same services, answering differently.
  writeFileSync(
    join(work, "changed.rpc"),
    [
      "/demo.v1.GreetService/Greet",
      "",
      ">>> ok",
      "# @trailer x-cost: 3",
      "",
      '{"greeting": "Hi, {{request.name}}"}',
      "",
      "###",
      "/demo.v1.DemoService/Count",
      "",
      ">>> ok",
      "",
      '{"number": 1, "text": "tick"}',
      "",
      "###",
      "/demo.v1.DemoService/Fail",
      "",
      '>>> not_found "gone for good"',
      "",
    ].join("\n"),
  );
  changed = await startCliServer(
    ["mock", join(work, "changed.rpc"), "--schema", await demoDescriptorSet(), "--no-watch"],
    {},
    60_000,
  );
});
after(async () => {
  await changed?.stop();
  await proxy?.stop();
  await demo?.close();
  rmSync(work, { recursive: true, force: true });
});

test("a call replayed to the same upstream is the same: exit 0", async () => {
  for (const key of Object.keys(ids)) {
    const r = await runCli(["proxy", "replay", String(ids[key]), "--store", store]);
    assert.equal(r.code, 0, `${key}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^same as call ${ids[key]}: `), key);
  }
});

test("an upstream that changed its answer: each difference named, exit 1", async () => {
  const replay = (key: string) =>
    runCli(["proxy", "replay", String(ids[key]), "--to", changed.url, "--store", store]);
  const greet = await replay("greet");
  assert.equal(greet.code, 1, greet.stderr);
  assert.match(
    greet.stdout,
    new RegExp(`^different from call ${ids.greet} \\(2\\): ok, 1 message\\(s\\) from `),
  );
  assert.match(greet.stdout, /^ {2}message\[0\]\.greeting: "Hello, replay!" → "Hi, replay"$/m);
  assert.match(greet.stdout, /^ {2}trailer x-cost: nothing → "3"$/m);

  const count = await replay("count");
  assert.equal(count.code, 1, count.stderr);
  assert.match(count.stdout, /^ {2}messages: 2 → 1$/m);
  assert.match(count.stdout, /^ {2}message\[1\]: \{"number":2,"text":"tick"\} → nothing$/m);

  const fail = await replay("fail");
  assert.equal(fail.code, 1, fail.stderr);
  assert.match(fail.stdout, /^ {2}error message: "gone" → "gone for good"$/m);

  // With a schema given, a server that is down is an answer too: unavailable.
  const down = await runCli([
    "proxy",
    "replay",
    String(ids.greet),
    "--to",
    "http://127.0.0.1:1",
    "--schema",
    await demoDescriptorSet(),
    "--store",
    store,
  ]);
  assert.equal(down.code, 1, down.stderr);
  assert.match(down.stdout, /^ {2}status: ok → unavailable$/m);
});

test("a call that cannot be sent again exits 2 and says why", async () => {
  const r = await runCli([
    "proxy",
    "replay",
    String(ids.greet),
    "--to",
    "ftp://127.0.0.1:1",
    "--store",
    store,
  ]);
  assert.equal(r.code, 2, r.stdout);
  assert.match(
    r.stderr,
    /^protocall: cannot replay call \d+ to ftp:\/\/127\.0\.0\.1:1\/demo\.v1\.GreetService\/Greet: /,
  );
  const noSchema = await runCli([
    "proxy",
    "replay",
    String(ids.greet),
    "--to",
    "http://127.0.0.1:1",
    "--store",
    store,
  ]);
  assert.equal(noSchema.code, 2, noSchema.stdout);
  assert.match(noSchema.stderr, /server reflection failed/);
});
