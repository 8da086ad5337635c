// `protocall proxy export ID --as stub`: calls that went through the proxy to the demo server (every
// protocol; unary, each stream shape, errors with typed details) are exported as stubs; with the
// server stopped, `protocall mock` serving those stubs gives `buf curl` the same stdout, stderr and
// exit code as the server did.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { readCalls } from "../../src/core/proxy/call-store";
import { startCliServer, waitFor } from "../core/webhooks/support";
import { runBufCurl } from "../support/buf";
import { runCli } from "../support/cli";
import { demoDescriptorSet, startDemoServer } from "../support/servers";

const work = mkdtempSync(join(tmpdir(), "protocall-proxy-stub-"));
after(() => rmSync(work, { recursive: true, force: true }));

const h2 = ["--http2-prior-knowledge"];
const calls: { flags: string[]; method: string; data: string }[] = [
  { flags: ["--protocol", "grpc", ...h2], method: "demo.v1.GreetService/Greet", data: '{"name":"stub"}' },
  {
    flags: ["--protocol", "connect", ...h2],
    method: "demo.v1.GreetService/Greet",
    data: '{"name":"connect"}',
  },
  {
    flags: ["--protocol", "grpcweb", ...h2],
    method: "demo.v1.DemoService/Count",
    data: '{"count":3,"text":"tick"}',
  },
  {
    flags: ["--protocol", "grpc", ...h2],
    method: "demo.v1.DemoService/Sum",
    data: '{"number":1}\n{"number":41}',
  },
  {
    flags: ["--protocol", "grpc", ...h2],
    method: "demo.v1.DemoService/Fail",
    data: '{"code":"CODE_NOT_FOUND","message":"gone","details":["DETAIL_ERROR_INFO","DETAIL_QUOTA_EXCEEDED"]}',
  },
  {
    flags: ["--protocol", "connect", ...h2],
    method: "demo.v1.DemoService/Fail",
    data: '{"code":"CODE_PERMISSION_DENIED","message":"no","details":["DETAIL_BAD_REQUEST"]}',
  },
  {
    flags: ["--protocol", "grpcweb", ...h2],
    method: "demo.v1.DemoService/Fail",
    data: '{"code":"CODE_UNAVAILABLE","message":"later"}',
  },
];

async function callAll(url: string) {
  const out: { stdout: string; stderr: string; code: number | null }[] = [];
  for (const c of calls) {
    const r = await runBufCurl([...c.flags, "-d", c.data, `${url}/${c.method}`]);
    out.push({ stdout: r.stdout, stderr: r.stderr, code: r.code });
  }
  return out;
}

test("an exported stub is answered by `protocall mock` as the upstream answered", {
  timeout: 180_000,
}, async () => {
  const store = join(work, "calls.store");
  const demo = await startDemoServer();
  let live: Awaited<ReturnType<typeof callAll>>;
  try {
    const proxy = await startCliServer(["proxy", "--upstream", demo.url, "--store", store]);
    try {
      live = await callAll(proxy.url);
      await waitFor(
        () =>
          readCalls(store).filter((c) => c.method.startsWith("demo.")).length >= calls.length || undefined,
        "the stored calls",
      );
    } finally {
      await proxy.stop();
    }
  } finally {
    await demo.close();
  }
  assert.deepEqual(
    live.map((r) => r.code),
    [0, 0, 0, 0, 5 * 8, 7 * 8, 14 * 8],
    JSON.stringify(live),
  );
  const stubs = join(work, "stubs");
  mkdirSync(stubs);
  // buf curl's own reflection calls went through the proxy too: the mock answers those itself.
  for (const call of readCalls(store).filter((c) => c.method.startsWith("demo."))) {
    const exported = await runCli(["proxy", "export", String(call.id), "--as", "stub", "--store", store]);
    assert.equal(exported.code, 0, exported.stderr);
    writeFileSync(join(stubs, `call-${call.id}.rpc`), exported.stdout);
  }
  const mock = await startCliServer(
    ["mock", stubs, "--schema", await demoDescriptorSet(), "--no-generate", "--no-watch"],
    {},
    60_000,
  );
  try {
    const replayed = await callAll(mock.url);
    for (let i = 0; i < calls.length; i++)
      assert.deepEqual(
        replayed[i],
        live[i],
        `${calls[i].method} ${calls[i].flags.join(" ")} ${calls[i].data}`,
      );
    assert.doesNotMatch(mock.stderr(), /(generated|no match|unimplemented)/);
  } finally {
    await mock.stop();
  }
});

test("a call whose messages the schema could not decode is not exported as a stub, and says why", async () => {
  const store = join(work, "raw.store");
  const demo = await startDemoServer();
  try {
    // A schema that does not know the method: its messages are stored as raw fields.
    const empty = join(work, "empty.proto");
    writeFileSync(empty, 'syntax = "proto3";\npackage empty;\nmessage E {}\n');
    const proxy = await startCliServer([
      "proxy",
      "--upstream",
      demo.url,
      "--store",
      store,
      "--schema",
      empty,
    ]);
    try {
      const r = await runBufCurl([
        "--protocol",
        "grpc",
        ...h2,
        "--schema",
        await demoDescriptorSet(),
        "-d",
        '{"name":"raw"}',
        `${proxy.url}/demo.v1.GreetService/Greet`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const call = await waitFor(() => readCalls(store)[0], "the stored call");
      const exported = await runCli(["proxy", "export", String(call.id), "--as", "stub", "--store", store]);
      assert.equal(exported.code, 1);
      assert.match(exported.stderr, /call \d+ has messages the schema could not decode: .*--schema/);
    } finally {
      await proxy.stop();
    }
  } finally {
    await demo.close();
  }
});
