// The floor of bench/mock.bench.mjs: a bare @connectrpc/connect-node server (h2c) whose Greet returns
// a fixed message. Prints its URL, serves until killed.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { GreetService } from "../../src/gen/demo/v1/greet_pb";

const server = http2.createServer(
  connectNodeAdapter({
    routes: (router) => router.service(GreetService, { greet: () => ({ greeting: "Hello, world!" }) }),
  }),
);
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
