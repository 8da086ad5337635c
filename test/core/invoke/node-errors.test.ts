// Certificate failures are worded once (node-errors.ts, as Go's x509 package words them) and the
// calls (`dialErrorMessage`) and the registry client (`registryFailure`) both say them that way.
import assert from "node:assert/strict";
import { test } from "node:test";
import { dialErrorMessage, x509Problem } from "../../../src/core/invoke/node-errors";
import { registryFailure } from "../../../src/core/registry/registry-errors";

const codes: [string, string][] = [
  ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "x509: certificate signed by unknown authority"],
  ["SELF_SIGNED_CERT_IN_CHAIN", "x509: certificate signed by unknown authority"],
  ["DEPTH_ZERO_SELF_SIGNED_CERT", "x509: certificate signed by unknown authority"],
  ["CERT_HAS_EXPIRED", "x509: certificate has expired or is not yet valid"],
  ["CERT_NOT_YET_VALID", "x509: certificate has expired or is not yet valid"],
];

test("a refused certificate reads the same for a call and for the registry client", () => {
  for (const [code, words] of codes) {
    const err = Object.assign(new Error("node's own words"), { code });
    assert.equal(x509Problem(code), words);
    assert.equal(dialErrorMessage(err, "tcp h:443", "h", "h"), words, code);
    const registry = registryFailure(err, { rpc: "GetModules" as never, url: "https://h/x", remote: "h" });
    assert.ok(registry.message.includes(`tls: failed to verify certificate: ${words};`), registry.message);
  }
  assert.equal(x509Problem("ECONNREFUSED"), undefined);
});

test("a reset while dialing is worded as Go's dialer words it", () => {
  const err = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
  assert.equal(
    dialErrorMessage(err, "tcp 127.0.0.1:9", "127.0.0.1", "127.0.0.1"),
    "dial tcp 127.0.0.1:9: connect: connection reset by peer",
  );
});
