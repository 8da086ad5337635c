import assert from "node:assert/strict";
import { test } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { registryBaseUrl, registryUrlProblem } from "../../../src/core/webhooks/registry-url";

test("a domain means https://domain; a full http(s) URL is kept, without a trailing slash", () => {
  assert.equal(registryBaseUrl("buf.example.com"), "https://buf.example.com");
  assert.equal(registryBaseUrl("  buf.example.com:8443 "), "https://buf.example.com:8443");
  assert.equal(registryBaseUrl("http://127.0.0.1:8080/"), "http://127.0.0.1:8080");
  assert.equal(registryBaseUrl("https://registry.example.com/api/"), "https://registry.example.com/api");
});

test("each bad address gets its own message", () => {
  assert.match(registryUrlProblem("")!, /give the registry's domain/);
  assert.match(registryUrlProblem("buf example.com")!, /white space/);
  assert.match(registryUrlProblem("ftp://buf.example.com")!, /uses ftp/);
  assert.match(registryUrlProblem("https://buf.example.com/?a=1")!, /query or fragment/);
  assert.match(registryUrlProblem("https://u:p@buf.example.com")!, /user name or password/);
  assert.match(registryUrlProblem("http://[::1")!, /not a domain or a URL/);
  assert.equal(registryUrlProblem("https://buf.build"), undefined);
  assert.throws(
    () => registryBaseUrl("ftp://x"),
    (e) => e instanceof ProtocallError && /^registry address/.test(e.message),
  );
});
