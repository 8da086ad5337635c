// The token a registry client sends, in the order of the places asked: the editor's for that remote,
// then PROTOCALL_TOKEN, then BUF_TOKEN, then the netrc. Every form buf also reads is checked against
// the real buf in token-buf.test.ts; these are the orders and forms of Protocall's own.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { registryToken, tokenFor } from "../../../src/core/registry/token";

test("BUF_TOKEN's two forms, and a list entry for the remote in another case", () => {
  assert.equal(tokenFor("plain", "localhost:8443"), "plain");
  assert.equal(tokenFor("a@buf.example.com,b@localhost:8443", "localhost:8443"), "b");
  assert.equal(tokenFor("a@buf.example.com", "localhost:8443"), undefined);
  assert.equal(tokenFor("a@Buf.Example.com", "buf.example.com"), "a");
  assert.equal(tokenFor("a@buf.example.com,b@BUF.example.com", "BUF.example.com"), "b", "as written first");
});

test("a malformed list names the variable, the entry and the form to write", () => {
  assert.throws(
    () => tokenFor("a,b", "x", "PROTOCALL_TOKEN"),
    /PROTOCALL_TOKEN is not valid: the entry "a" needs a token and a remote, TOKEN@REMOTE; write one token, or TOKEN@REMOTE entries/,
  );
  assert.throws(
    () => tokenFor("t@", "x"),
    /BUF_TOKEN is not valid: the entry "t@" needs a token and a remote/,
  );
  assert.throws(() => tokenFor("a@h,b@h", "h"), /BUF_TOKEN is not valid: it names the remote h twice/);
});

test("the order: editor, PROTOCALL_TOKEN, BUF_TOKEN, netrc", () => {
  const home = mkdtempSync(join(tmpdir(), "protocall-token-"));
  writeFileSync(join(home, ".netrc"), "machine localhost:8443 login a password from-netrc\n");
  const env = { HOME: home, PROTOCALL_TOKEN: "p", BUF_TOKEN: "b" };
  const r = "localhost:8443";
  assert.deepEqual(registryToken(r, { env, tokens: { [r]: "e" } }), { token: "e", origin: "editor" });
  assert.deepEqual(registryToken(r, { env, tokens: { "LOCALHOST:8443": "e" } }), {
    token: "e",
    origin: "editor",
  });
  assert.deepEqual(registryToken(r, { env }), { token: "p", origin: "PROTOCALL_TOKEN" });
  assert.deepEqual(registryToken(r, { env: { HOME: home, BUF_TOKEN: "b" } }), {
    token: "b",
    origin: "BUF_TOKEN",
  });
  assert.deepEqual(registryToken(r, { env: { HOME: home } }), {
    token: "from-netrc",
    origin: "netrc",
    file: join(home, ".netrc"),
  });
  assert.equal(registryToken("other.example.com", { env: { HOME: home } }), undefined);
  assert.equal(registryToken(r, { env: { HOME: join(home, "missing") } }), undefined);
});
