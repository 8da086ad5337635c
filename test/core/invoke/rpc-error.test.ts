import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { JsonValue } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import { formatRpcError, rpcExitCode } from "../../../src/core/invoke/rpc-error";

function incoming(message: string, code: Code, details: [string, string, JsonValue?][]): ConnectError {
  const err = new ConnectError(message, code);
  err.details = details.map(([type, value, debug]) => ({ type, value: base64Decode(value), debug }));
  return err;
}

test("the error JSON matches buf's: 3-space indent, HTML escapes, details with the server's debug", () => {
  // fail.buf.txt is buf 1.75's stderr for the same error over the Connect protocol, whose error JSON
  // carried these debug values.
  const err = incoming("no <such> & thing\u2028", Code.NotFound, [
    [
      "google.rpc.ErrorInfo",
      "CgFSEglkLmV4YW1wbGUaBgoBYRIBYg",
      { reason: "R", domain: "d.example", metadata: { a: "b" } },
    ],
    ["demo.v1.QuotaExceeded", "CgF4EAU", { resource: "x", limit: "5" }],
  ]);
  assert.equal(formatRpcError(err), readFileSync(join(__dirname, "fixtures", "fail.buf.txt"), "utf8"));
  assert.equal(rpcExitCode(err), 40);
});

test("an empty message is left out; details without debug from the server have none (as over gRPC)", () => {
  const err = incoming("", Code.Internal, [["google.rpc.ErrorInfo", "CgF4"]]);
  assert.equal(
    formatRpcError(err),
    '{\n   "code": "internal",\n   "details": [\n      {\n         "type": "google.rpc.ErrorInfo",\n         "value": "CgF4"\n      }\n   ]\n}\n',
  );
  assert.equal(rpcExitCode(err), 104);
});

test("exit codes are the gRPC code times eight", () => {
  assert.equal(rpcExitCode(new ConnectError("x", Code.Unavailable)), 112);
  assert.equal(rpcExitCode(new ConnectError("x", Code.DeadlineExceeded)), 32);
  assert.equal(rpcExitCode(new ConnectError("x", Code.Unauthenticated)), 128);
});
