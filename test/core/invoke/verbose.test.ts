import assert from "node:assert/strict";
import { test } from "node:test";
import {
  canonicalHeaderName,
  createVerboseLog,
  logHeaders,
  redactHeaderValue,
} from "../../../src/core/invoke/verbose";

test("header names print in Go's canonical form", () => {
  assert.equal(canonicalHeaderName("content-type"), "Content-Type");
  assert.equal(canonicalHeaderName("grpc-status"), "Grpc-Status");
  assert.equal(canonicalHeaderName("te"), "Te");
});

test("secrets are redacted, keeping the authorization scheme", () => {
  assert.equal(redactHeaderValue("Authorization", "Bearer abc"), "Bearer [redacted]");
  assert.equal(redactHeaderValue("cookie", "a=1"), "[redacted]");
  assert.equal(redactHeaderValue("x-trace", "abc"), "abc");
});

test("headers are logged sorted, with the request number, and [*] for trailers in the body", () => {
  const out: string[] = [];
  const log = createVerboseLog(true, (t) => out.push(t));
  const n = log.nextRequest();
  logHeaders(
    log,
    "<",
    n,
    new Headers([
      ["b", "2"],
      ["a", "1"],
      ["authorization", "Basic xyz"],
    ]),
  );
  logHeaders(log, "<", n, new Headers([["grpc-status", "0"]]), true);
  log.info("Call complete");
  assert.deepEqual(out, [
    "protocall: < (#1) A: 1\n",
    "protocall: < (#1) Authorization: Basic [redacted]\n",
    "protocall: < (#1) B: 2\n",
    "protocall: < (#1) [*] Grpc-Status: 0\n",
    "protocall: * Call complete\n",
  ]);
});

test("an empty header value leaves no space after the colon, as buf prints it", () => {
  const out: string[] = [];
  const log = createVerboseLog(true, (t) => out.push(t));
  logHeaders(
    log,
    "<",
    log.nextRequest(),
    new Headers([
      ["grpc-message", ""],
      ["grpc-status", "0"],
    ]),
  );
  assert.deepEqual(out, ["protocall: < (#1) Grpc-Message:\n", "protocall: < (#1) Grpc-Status: 0\n"]);
});

test("a disabled log writes nothing", () => {
  const out: string[] = [];
  const log = createVerboseLog(false, (t) => out.push(t));
  log.info("x");
  logHeaders(log, ">", log.nextRequest(), new Headers([["a", "1"]]));
  assert.deepEqual(out, []);
});
