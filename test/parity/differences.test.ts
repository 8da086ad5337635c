// Where protocall differs from `buf curl` on purpose: each test shows protocall's behaviour and that
// buf's is different, so a change on either side is noticed.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type DemoServer, startDemoServer, startGrpcJsReflectionServer } from "../support/servers";
import { runBoth } from "./harness";

describe("deliberate differences from buf curl", { concurrency: 4, timeout: 300_000 }, () => {
  let server: DemoServer;
  let grpcJs: Awaited<ReturnType<typeof startGrpcJsReflectionServer>>;
  let dir: string;
  before(async () => {
    [server, grpcJs] = await Promise.all([startDemoServer(), startGrpcJsReflectionServer()]);
    dir = mkdtempSync(join(tmpdir(), "protocall-differences-"));
  });
  after(async () => {
    await Promise.all([server?.close(), grpcJs?.close()]);
  });

  const inspect = () => `${server.url}/demo.v1.DemoService/Inspect`;

  test("@grpc/grpc-js with @grpc/reflection: protocall lists and calls, buf cannot find the service", async () => {
    const services = await runBoth(["--protocol", "grpc", "--list-services", grpcJs.url]);
    assert.equal(services.ours.code, 0, services.ours.stderr);
    assert.match(services.ours.stdout, /^shop\.v1\.OrderService$/m);

    const methods = await runBoth(["--protocol", "grpc", "--list-methods", grpcJs.url]);
    assert.equal(methods.ours.code, 0, methods.ours.stderr);
    assert.equal(
      methods.ours.stdout,
      "shop.v1.OrderService/EchoOrder\nshop.v1.OrderService/GetOrder\nshop.v1.OrderService/WatchOrders\n",
    );

    const get = await runBoth([
      "--protocol",
      "grpc",
      "-d",
      '{"id": "o-1"}',
      `${grpcJs.url}/shop.v1.OrderService/GetOrder`,
    ]);
    assert.equal(get.ours.code, 0, get.ours.stderr);
    const order = JSON.parse(get.ours.stdout);
    assert.equal(order.id, "o-1");
    assert.deepEqual(order.quantities, { "book-1": 2 });
    assert.equal(order.items[0].kind, "KIND_BOOK");
    assert.equal(order.created, "2023-11-14T22:13:20Z");
    assert.notEqual(get.buf.code, 0, "buf fails on the server's relative type names");
    assert.match(get.buf.stderr, /failed to find service/);

    const watch = await runBoth([
      "--protocol",
      "grpc",
      "-d",
      '{"id": "w"}',
      `${grpcJs.url}/shop.v1.OrderService/WatchOrders`,
    ]);
    assert.equal(watch.ours.code, 0, watch.ours.stderr);
    assert.equal(watch.ours.stdout.match(/"id": "w-\d"/g)?.length, 2);
    assert.notEqual(watch.buf.code, 0);
  });

  test("header values are not split at commas", async () => {
    const pair = await runBoth([
      "-H",
      "Accept-Language: en, fr;q=0.8",
      "-d",
      '{"headerNames": ["accept-language"]}',
      inspect(),
    ]);
    assert.equal(pair.ours.code, 0, pair.ours.stderr);
    assert.deepEqual(JSON.parse(pair.ours.stdout).headers, [
      { name: "accept-language", value: "en, fr;q=0.8" },
    ]);
    assert.equal(pair.buf.code, 1, "buf splits the value and rejects ' fr;q=0.8' as a header");
  });

  test("a combined header and data file with CRLF line endings is accepted", async () => {
    const file = join(dir, "crlf.txt");
    writeFileSync(file, 'x-crlf: yes\r\nx-other: 2\r\n\r\n{"headerNames": ["x-crlf", "x-other"]}\r\n');
    const pair = await runBoth(["-H", `@${file}`, "-d", `@${file}`, inspect()]);
    assert.equal(pair.ours.code, 0, pair.ours.stderr);
    assert.deepEqual(JSON.parse(pair.ours.stdout).headers, [
      { name: "x-crlf", value: "yes" },
      { name: "x-other", value: "2" },
    ]);
    assert.notEqual(pair.buf.code, 0, "buf needs a line that is exactly empty");
  });

  test("gRPC over plain http implies HTTP/2 prior knowledge and says so in verbose output", async () => {
    const pair = await runBoth(["-v", "--protocol", "grpc", "-d", '{"headerNames": ["te"]}', inspect()]);
    assert.equal(pair.ours.code, 0, pair.ours.stderr);
    assert.equal(JSON.parse(pair.ours.stdout).httpVersion, "2.0");
    assert.match(pair.ours.stderr, /^protocall: \* .*prior knowledge.*$/im);
    assert.equal(pair.buf.code, 0);
  });
});
