// A gRPC server (h2c) whose demo.v1.DemoService/Count answers with `bytes` of small CountResponse
// messages ({"number": 1}, 7 bytes each with the envelope), written as fast as the connection takes
// them: the load under which a client must read with back-pressure. Pre-encoded, so the server
// costs next to nothing and the client is what is measured. Run as a script, it prints its URL.
import http2 from "node:http2";
import type net from "node:net";

export interface FastStreamServer {
  readonly url: string;
  close(): Promise<void>;
}

/** One message: envelope (flag 0, length 2) + field 1 varint 1. */
const MESSAGE = Buffer.from([0, 0, 0, 0, 2, 0x08, 0x01]);

export async function startFastStreamServer(bytes: number, port = 0): Promise<FastStreamServer> {
  const chunk = Buffer.alloc(MESSAGE.length * Math.floor((256 * 1024) / MESSAGE.length));
  for (let i = 0; i < chunk.length; i += MESSAGE.length) MESSAGE.copy(chunk, i);
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("error", () => {});
    stream.resume();
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    let left = Math.max(MESSAGE.length, bytes - (bytes % MESSAGE.length));
    const pump = () => {
      while (left > 0 && !stream.destroyed) {
        const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= part.length;
        if (left === 0) {
          stream.end(part);
          return;
        }
        if (!stream.write(part)) {
          stream.once("drain", pump);
          return;
        }
      }
    };
    pump();
  });
  const sockets = new Set<net.Socket>();
  server.on("connection", (s: net.Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

if (require.main === module) {
  startFastStreamServer(Number(process.argv[2] ?? 100_000_000)).then((s) => console.log(s.url));
}
