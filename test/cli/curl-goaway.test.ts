// A server that answers a call with HTTP/2 GOAWAY instead of a response: the failure says so, in Go's
// words (`unavailable`, exit 112), and is not mistaken for a server that does not speak HTTP/2.
import assert from "node:assert/strict";
import net from "node:net";
import { before, test } from "node:test";
import { runCli } from "../support/cli";
import { demoDescriptorSet } from "../support/servers";

/** Reads the client's preface, then sends SETTINGS and GOAWAY(`code`, last stream `last`). */
function goAwayServer(code: number, last: number, close: boolean): Promise<{ url: string; stop(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.once("data", () => {
      const goaway = Buffer.alloc(17);
      goaway.writeUIntBE(8, 0, 3);
      goaway[3] = 0x7;
      goaway.writeUInt32BE(last, 9);
      goaway.writeUInt32BE(code, 13);
      socket.write(Buffer.concat([Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]), goaway]));
      if (close) socket.end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
        stop: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      }),
    ),
  );
}

let schema: string;
before(async () => {
  schema = await demoDescriptorSet();
});

for (const [label, code, last, close, message] of [
  [
    "GOAWAY ENHANCE_YOUR_CALM before the response",
    0xb,
    0,
    false,
    "http2: Transport received GOAWAY from server ErrCode:ENHANCE_YOUR_CALM",
  ],
  [
    // buf waits for this stream without limit (Go's client leaves a stream the GOAWAY covers alone).
    "GOAWAY ENHANCE_YOUR_CALM covering the call, the connection left open",
    0xb,
    1,
    false,
    'http2: server sent GOAWAY and closed the connection; LastStreamID=1, ErrCode=ENHANCE_YOUR_CALM, debug=""',
  ],
  [
    "GOAWAY NO_ERROR, then the connection closed",
    0,
    0,
    true,
    'http2: server sent GOAWAY and closed the connection; LastStreamID=0, ErrCode=NO_ERROR, debug=""',
  ],
] as const) {
  test(`${label}: unavailable, saying so`, { timeout: 60_000 }, async () => {
    const server = await goAwayServer(code, last, close);
    try {
      const r = await runCli([
        "curl",
        "--protocol",
        "grpc",
        "--schema",
        schema,
        "--timeout",
        "20s",
        "-d",
        '{"count": 1}',
        `${server.url}/demo.v1.DemoService/Count`,
      ]);
      assert.equal(r.code, 112, r.stderr);
      assert.equal(JSON.parse(r.stderr).code, "unavailable");
      assert.equal(JSON.parse(r.stderr).message, message);
    } finally {
      server.stop();
    }
  });
}
