// Parity with `buf curl` for RPC errors: every gRPC code with error details over each protocol, errors
// at the end of a stream, transport failures, deadlines, and the exit code (gRPC code × 8).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type DemoServer, demoDescriptorSet, startDemoServer } from "../support/servers";
import { assertParity, errorJson } from "./harness";

const codes = [
  "CANCELED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];
const allDetails = ["DETAIL_ERROR_INFO", "DETAIL_BAD_REQUEST", "DETAIL_RETRY_INFO", "DETAIL_QUOTA_EXCEEDED"];

describe("parity: RPC errors and exit codes", { concurrency: 4, timeout: 300_000 }, () => {
  let server: DemoServer;
  let prefixed: DemoServer;
  before(async () => {
    [server, prefixed] = await Promise.all([
      startDemoServer(),
      startDemoServer({ pathPrefix: "/only-here" }),
    ]);
  });
  after(async () => {
    await Promise.all([server?.close(), prefixed?.close()]);
  });

  const fail = () => `${server.url}/demo.v1.DemoService/Fail`;

  codes.forEach((code, i) => {
    const exit = (i + 1) * 8;
    for (const protocol of ["connect", "grpc", "grpcweb"]) {
      test(`${protocol}: CODE_${code} with details exits ${exit}`, async () => {
        const data = { code: `CODE_${code}`, message: `failed: ${code.toLowerCase()}`, details: allDetails };
        await assertParity(["--protocol", protocol, "-d", JSON.stringify(data), fail()], { code: exit });
      });
    }
  });

  test("errors without message or details", async () => {
    for (const protocol of ["connect", "grpc", "grpcweb"]) {
      await assertParity(["--protocol", protocol, "-d", '{"code": "CODE_NOT_FOUND"}', fail()], { code: 40 });
      await assertParity(["--protocol", protocol, "-d", "{}", fail()], { code: 104 });
    }
  });

  test("a message with characters that need escaping", async () => {
    const data = { code: "CODE_ABORTED", message: 'line 1\nline 2 "quoted" \\ <tag> & ünïcode \u2028' };
    for (const protocol of ["connect", "grpc", "grpcweb"]) {
      await assertParity(["--protocol", protocol, "-d", JSON.stringify(data), fail()], { code: 80 });
    }
  });

  test("a stream that ends with an error prints its messages first", async () => {
    for (const protocol of ["connect", "grpc", "grpcweb"]) {
      await assertParity(
        [
          "--protocol",
          protocol,
          "-d",
          '{"count": 2, "errorCode": "CODE_DATA_LOSS"}',
          `${server.url}/demo.v1.DemoService/Count`,
        ],
        { code: 120 },
      );
    }
  });

  test("a path the server does not serve is unimplemented", async () => {
    for (const protocol of ["connect", "grpc", "grpcweb"]) {
      await assertParity(
        [
          "--schema",
          "examples",
          "--protocol",
          protocol,
          "-d",
          "{}",
          `${prefixed.url.replace("/only-here", "")}/demo.v1.GreetService/Greet`,
        ],
        // The whole error JSON: the HTTP status in connect-go's words ("404 Not Found" for Connect
        // unary calls, "HTTP status 404 Not Found" otherwise).
        { code: 96 },
      );
    }
  });

  test("connection refused is unavailable", async () => {
    const closed = await startDemoServer({ reflection: false });
    await closed.close();
    for (const protocol of ["connect", "grpc"]) {
      await assertParity(
        [
          "--schema",
          "examples",
          "--protocol",
          protocol,
          "-d",
          "{}",
          `${closed.url}/demo.v1.GreetService/Greet`,
        ],
        { code: 112, errors: "code" },
      );
    }
  });

  test("--timeout becomes the deadline, worded as buf words it", async () => {
    const schema = await demoDescriptorSet();
    const runs = ["connect", "grpc", "grpcweb"].map((protocol) =>
      assertParity(
        [
          // The deadline covers loading the schema too: a descriptor set is the quickest, and 6 s
          // leave time for the first response on a busy machine (seconds to start, beside a CPU hog).
          "--schema",
          schema,
          "--timeout",
          "6s",
          "--protocol",
          protocol,
          "-d",
          '{"count": 3, "delayMs": 20000}',
          `${server.url}/demo.v1.DemoService/Count`,
        ],
        // Both say "context deadline exceeded", except when the server's own deadline (from
        // grpc-timeout) answers first: then the client prints the server's "the operation timed
        // out" (buf and protocall alike; which clock wins is timing alone).
        { code: 32, errors: "code" },
      ).then(({ ours, buf }) => {
        assert.match(
          errorJson(ours.stderr).message ?? "",
          /^(context deadline exceeded|the operation timed out)$/,
          ours.stderr,
        );
        assert.match(
          errorJson(buf.stderr).message ?? "",
          /^(context deadline exceeded|the operation timed out)$/,
          buf.stderr,
        );
      }),
    );
    await Promise.all(runs);
  });
});
