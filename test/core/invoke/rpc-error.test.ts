import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createRegistry } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import { formatRpcError, rpcExitCode } from "../../../src/core/invoke/rpc-error";
import { file_demo_v1_demo } from "../../../src/gen/demo/v1/demo_pb";
import { file_google_rpc_error_details } from "../../../src/gen/google/rpc/error_details_pb";

const registry = createRegistry(file_demo_v1_demo, file_google_rpc_error_details);
const resolve = (name: string) => registry.getMessage(name);

function incoming(message: string, code: Code, details: [string, string][]): ConnectError {
  const err = new ConnectError(message, code);
  err.details = details.map(([type, value]) => ({ type, value: base64Decode(value), debug: undefined }));
  return err;
}

test("the error JSON matches buf's: 3-space indent, HTML escapes, details with debug", () => {
  // fail.buf.txt is buf 1.75's stderr for the same error.
  const err = incoming("no <such> & thing\u2028", Code.NotFound, [
    ["google.rpc.ErrorInfo", "CgFSEglkLmV4YW1wbGUaBgoBYRIBYg"],
    ["demo.v1.QuotaExceeded", "CgF4EAU"],
  ]);
  assert.equal(
    formatRpcError(err, resolve),
    readFileSync(join(__dirname, "fixtures", "fail.buf.txt"), "utf8"),
  );
  assert.equal(rpcExitCode(err), 40);
});

test("an empty message is left out; unknown detail types have no debug", () => {
  const err = incoming("", Code.Internal, [["acme.v1.Unknown", "CgF4"]]);
  assert.equal(
    formatRpcError(err, resolve),
    '{\n   "code": "internal",\n   "details": [\n      {\n         "type": "acme.v1.Unknown",\n         "value": "CgF4"\n      }\n   ]\n}\n',
  );
  assert.equal(rpcExitCode(err), 104);
});

test("exit codes are the gRPC code times eight", () => {
  assert.equal(rpcExitCode(new ConnectError("x", Code.Unavailable)), 112);
  assert.equal(rpcExitCode(new ConnectError("x", Code.DeadlineExceeded)), 32);
  assert.equal(rpcExitCode(new ConnectError("x", Code.Unauthenticated)), 128);
});
