import assert from "node:assert/strict";
import { test } from "node:test";
import { redactSecrets } from "../../../src/core/invoke/redact";

test("verbose header lines: credentials hidden, the Authorization scheme kept, other headers as they are", () => {
  assert.equal(
    redactSecrets("protocall: > (#1) Authorization: Bearer abc.def"),
    "protocall: > (#1) Authorization: Bearer [redacted]",
  );
  assert.equal(redactSecrets("protocall: > (#1) X-Api-Key: k123"), "protocall: > (#1) X-Api-Key: [redacted]");
  assert.equal(
    redactSecrets("protocall: < (#2) Set-Cookie: sid=1"),
    "protocall: < (#2) Set-Cookie: [redacted]",
  );
  assert.equal(
    redactSecrets("protocall: < (#2) [*] X-Session-Token: t"),
    "protocall: < (#2) [*] X-Session-Token: [redacted]",
  );
  assert.equal(
    redactSecrets("protocall: > (#1) Content-Type: application/proto"),
    "protocall: > (#1) Content-Type: application/proto",
  );
  assert.equal(
    redactSecrets("protocall: * Dialing (tcp) 127.0.0.1:80..."),
    "protocall: * Dialing (tcp) 127.0.0.1:80...",
  );
});

test("command lines: -H values, --user passwords, URL passwords, query tokens and JSON password fields", () => {
  const line =
    "protocall curl -H 'Authorization: Bearer s3cret' -H 'x-request-id: 42' -H x-auth-token:abc " +
    `-d '{"password": "hunter2", "name": "x"}' --user bob:pw https://u:p@h/x?token=abc&a=1`;
  const out = redactSecrets(line);
  for (const secret of ["s3cret", "hunter2", ":pw", "u:p@", "token=abc", "x-auth-token:abc"]) {
    assert.ok(!out.includes(secret), `${secret} still in ${out}`);
  }
  for (const kept of ["Bearer [redacted]", "x-request-id: 42", '"name": "x"', "bob:[redacted]", "&a=1"]) {
    assert.ok(out.includes(kept), `${kept} missing from ${out}`);
  }
  // Idempotent.
  assert.equal(redactSecrets(out), out);
});
