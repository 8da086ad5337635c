// A client nobody here wrote gets the answers the stubs say: grpc Python (C-core, Debian's
// python3-grpcio) calls `protocall mock` serving the gRPC interop schema with stubs for it.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { startCliServer } from "../core/webhooks/support";
import { repoRoot, runProcess } from "../support/cli";
import { buildInteropServers } from "../support/interop-servers";

const stubs = `### a user
/grpc.testing.TestService/UnaryCall

{"fillUsername": true}

>>> ok
x-mock: yes

{"username": "bob", "payload": {"body": "AQID"}}

### refused
/grpc.testing.TestService/UnaryCall

{"responseSize": 7}

>>> permission_denied "no access for size {{request.responseSize}}"

### a stream
/grpc.testing.TestService/StreamingOutputCall

>>> ok

{"payload": {"body": "AA=="}}
{"payload": {"body": "AAA="}}
`;

test("a grpc Python client gets the stubs' answers: message and header, error, stream", {
  timeout: 240_000,
}, async () => {
  const build = await buildInteropServers();
  const dir = mkdtempSync(join(tmpdir(), "protocall-mock-python-"));
  writeFileSync(join(dir, "interop.rpc"), stubs);
  const mock = await startCliServer(["mock", dir, "--schema", build.descriptorSet, "--no-watch"], {}, 60_000);
  try {
    const r = await runProcess(
      "/usr/bin/python3",
      [
        join(repoRoot, "test/support/interop/grpc-python/mock-client.py"),
        build.pythonGenerated,
        mock.url.replace(/^http:\/\//, ""),
      ],
      { timeoutMs: 60_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      unary: { username: "bob", body: [1, 2, 3], headers: { "x-mock": "yes" } },
      error: { code: "PERMISSION_DENIED", details: "no access for size 7" },
      stream: [[0], [0, 0]],
    });
  } finally {
    await mock.stop();
  }
});
