// Record, then replay: buf curl calls the grpc-go interop server through `protocall mock --upstream
// --record DIR` (the schema from the server's reflection), then, with that server stopped, the same
// calls to `protocall mock DIR` give byte-identical outputs: stdout, exit codes and error JSON. The
// same for grpc-go's interop client (every case) and a grpc Python client (the same cases, each answer
// printed), recorded and replayed.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { startCliServer } from "../core/webhooks/support";
import { runBufCurl } from "../support/buf";
import { repoRoot, runProcess } from "../support/cli";
import { buildInteropServers, runGoClient, startInteropServer } from "../support/interop-servers";
import { createTestPki } from "../support/tls";

const calls: { method: string; args: string[] }[] = [
  { method: "EmptyCall", args: ["-d", "{}"] },
  { method: "UnaryCall", args: ["-d", JSON.stringify({ responseSize: 12, payload: { body: "AAAA" } })] },
  {
    method: "UnaryCall",
    args: ["-d", JSON.stringify({ responseStatus: { code: 2, message: "recorded failure" } })],
  },
  {
    method: "StreamingOutputCall",
    args: ["-d", JSON.stringify({ responseParameters: [{ size: 3 }, { size: 5 }] })],
  },
  {
    method: "StreamingInputCall",
    args: ["-d", '{"payload": {"body": "AAAA"}} {"payload": {"body": "AAAAAAAA"}}'],
  },
  {
    method: "FullDuplexCall",
    args: ["-d", JSON.stringify({ responseParameters: [{ size: 4 }, { size: 2 }] })],
  },
];

async function runAll(url: string) {
  const out: { stdout: string; stderr: string; code: number | null }[] = [];
  for (const c of calls) {
    const r = await runBufCurl([
      "--protocol",
      "grpc",
      "--http2-prior-knowledge",
      ...c.args,
      `${url}/grpc.testing.TestService/${c.method}`,
    ]);
    out.push({ stdout: r.stdout, stderr: r.stderr, code: r.code });
  }
  return out;
}

test("calls recorded through --upstream replay byte-identical without the upstream", {
  timeout: 240_000,
}, async () => {
  const build = await buildInteropServers();
  const pki = await createTestPki(["localhost"]);
  const server = await startInteropServer("grpc-go", pki);
  const dir = mkdtempSync(join(tmpdir(), "protocall-mock-record-"));
  let live: Awaited<ReturnType<typeof runAll>>;
  try {
    const recording = await startCliServer(
      ["mock", "--upstream", server.plainUrl, "--record", dir, "--no-watch"],
      {},
      60_000,
    );
    try {
      live = await runAll(recording.url);
    } finally {
      await recording.stop();
    }
  } finally {
    await server.close();
  }
  assert.deepEqual(
    live.map((r) => r.code),
    [0, 0, 2 * 8, 0, 0, 0],
    JSON.stringify(live),
  );
  assert.ok(readdirSync(dir).includes("grpc.testing.TestService.UnaryCall.rpc"), String(readdirSync(dir)));
  const replay = await startCliServer(
    ["mock", dir, "--schema", build.descriptorSet, "--no-generate", "--no-watch"],
    {},
    60_000,
  );
  try {
    const replayed = await runAll(replay.url);
    for (let i = 0; i < calls.length; i++) {
      assert.deepEqual(replayed[i], live[i], `${calls[i].method} ${calls[i].args.join(" ")}`);
    }
    assert.doesNotMatch(replay.stderr(), /← (generated|no match|unimplemented)/);
  } finally {
    await replay.stop();
  }
});

test("grpc-go's interop client and a grpc Python client, recorded through --upstream, get the same from the replay", {
  timeout: 300_000,
}, async () => {
  const build = await buildInteropServers();
  const pki = await createTestPki(["localhost"]);
  const server = await startInteropServer("grpc-go", pki);
  const dir = mkdtempSync(join(tmpdir(), "protocall-mock-record-clients-"));
  const clients = async (url: string) => {
    const address = new URL(url);
    const go = await runGoClient(build, address.port);
    const python = await runProcess(
      "/usr/bin/python3",
      [
        join(repoRoot, "test/support/interop/grpc-python/interop-client.py"),
        build.pythonGenerated,
        address.host,
      ],
      { timeoutMs: 60_000 },
    );
    return { go, python };
  };
  let live: Awaited<ReturnType<typeof clients>>;
  try {
    const recording = await startCliServer(
      ["mock", "--upstream", server.plainUrl, "--record", dir, "--no-watch"],
      {},
      60_000,
    );
    try {
      live = await clients(recording.url);
      assert.equal(live.go.code, 0, `${live.go.stderr}\n${recording.stderr()}`);
      assert.equal(live.python.code, 0, `${live.python.stderr}\n${recording.stderr()}`);
    } finally {
      await recording.stop();
    }
  } finally {
    await server.close();
  }
  const replay = await startCliServer(
    ["mock", dir, "--schema", build.descriptorSet, "--no-generate", "--no-watch"],
    {},
    60_000,
  );
  try {
    const replayed = await clients(replay.url);
    assert.equal(replayed.go.code, 0, `${replayed.go.stderr}\n${replay.stderr()}`);
    assert.equal(replayed.go.stdout, live.go.stdout);
    assert.equal(replayed.python.code, 0, `${replayed.python.stderr}\n${replay.stderr()}`);
    assert.equal(replayed.python.stdout, live.python.stdout);
    assert.doesNotMatch(replay.stderr(), /← (generated|no match|unimplemented)/);
  } finally {
    await replay.stop();
  }
});
