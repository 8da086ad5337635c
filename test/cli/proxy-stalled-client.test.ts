// A client that stops reading cannot make `protocall proxy` hold the upstream's answer without bound:
// the proxy reads from the upstream only as fast as the client takes, so the upstream (a server that
// writes a 1 GB gRPC stream as fast as its connection lets it) stops within a few flow-control windows,
// and the proxy's memory stays flat. When the client then gives up (RST_STREAM), the upstream stream is
// reset and the call is stored as canceled, its kept messages bounded.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { readCalls } from "../../src/core/proxy/call-store";
import { CountResponseSchema } from "../../src/gen/demo/v1/demo_pb";
import { type CliServer, startCliServer, waitFor } from "../core/webhooks/support";
import { repoRoot } from "../support/cli";

const work = mkdtempSync(join(tmpdir(), "protocall-proxy-stall-"));
const store = join(work, "calls.store");
const total = 1 << 30;
/** Bytes the upstream's stream took so far (written while the transport accepted more). */
let written = 0;
let upstreamReset = false;
let upstream: http2.Http2Server;
let proxy: CliServer;

const message = (() => {
  const payload = toBinary(
    CountResponseSchema,
    create(CountResponseSchema, { number: 1, text: "x".repeat(16_000) }),
  );
  const frame = Buffer.alloc(5 + payload.length);
  frame.writeUInt32BE(payload.length, 1);
  Buffer.from(payload).copy(frame, 5);
  return frame;
})();

before(async () => {
  upstream = http2.createServer();
  upstream.on("stream", (stream) => {
    stream.on("error", () => {});
    stream.on("close", () => {
      if (stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR) upstreamReset = true;
    });
    stream.respond({ ":status": 200, "content-type": "application/grpc" });
    const pump = () => {
      while (written < total && !stream.destroyed) {
        written += message.length;
        if (!stream.write(message)) {
          stream.once("drain", pump);
          return;
        }
      }
    };
    stream.resume();
    pump();
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  proxy = await startCliServer([
    "proxy",
    "--upstream",
    url,
    "--schema",
    join(repoRoot, "examples/proto"),
    "--store",
    store,
  ]);
});
after(async () => {
  await proxy?.stop();
  upstream?.close();
  rmSync(work, { recursive: true, force: true });
});

/** Resident memory of a process, in MB (Linux). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

test("a client that stops reading stops the upstream within a few windows; its reset reaches the upstream", {
  timeout: 120_000,
}, async () => {
  const client = http2.connect(proxy.url);
  client.on("error", () => {});
  const stream = client.request({
    ":method": "POST",
    ":path": "/demo.v1.DemoService/Count",
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.on("error", () => {});
  stream.end(Buffer.from([0, 0, 0, 0, 0]));
  // Nothing reads the answer: once the client's window is full, the proxy must stop reading upstream.
  await waitFor(
    async () => {
      const before = written;
      await new Promise((r) => setTimeout(r, 1_000));
      return written > 0 && written === before ? true : undefined;
    },
    "the upstream stalls",
    60_000,
  );
  assert.ok(written < 64 << 20, `the upstream wrote ${(written / 2 ** 20).toFixed(1)} MB before it stalled`);
  const pid = proxy.child.pid;
  assert.ok(pid !== undefined);
  assert.ok(rssMb(pid) < 300, `the proxy holds ${rssMb(pid).toFixed(0)} MB`);

  // The client gives up: the upstream stream is reset, and the call stored as canceled.
  stream.close(http2.constants.NGHTTP2_CANCEL);
  await waitFor(() => (upstreamReset ? true : undefined), "the upstream stream reset");
  const call = await waitFor(
    () => readCalls(store).find((c) => c.method === "demo.v1.DemoService/Count"),
    "the call stored",
  );
  assert.equal(call.status, "canceled");
  assert.ok(call.responseMessages.length <= 1000, `${call.responseMessages.length} messages kept`);
  client.close();
});
