// The token a registry client sends, found as buf finds it: the editor's for that remote, then
// PROTOCALL_TOKEN, then BUF_TOKEN (one token, or `tok@remote` entries of which only this remote's
// applies), then the netrc entry of the remote (port included, then the bare host).
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { registryToken, tokenFor } from "../../../src/core/registry/token";

test("BUF_TOKEN in both forms", () => {
  assert.equal(tokenFor("plain", "localhost:8443"), "plain");
  assert.equal(tokenFor("a@buf.example.com,b@localhost:8443", "localhost:8443"), "b");
  assert.equal(tokenFor("a@buf.example.com", "localhost:8443"), undefined);
});

test("the order: editor, PROTOCALL_TOKEN, BUF_TOKEN, netrc", () => {
  const home = mkdtempSync(join(tmpdir(), "protocall-token-"));
  writeFileSync(
    join(home, ".netrc"),
    "machine localhost:8443 login a password from-netrc-port\nmachine buf.example.com login a password from-netrc\n",
  );
  const env = { HOME: home, PROTOCALL_TOKEN: "p", BUF_TOKEN: "b" };
  const r = "localhost:8443";
  assert.deepEqual(registryToken(r, { env, tokens: { [r]: "e" } }), { token: "e", origin: "editor" });
  assert.deepEqual(registryToken(r, { env }), { token: "p", origin: "PROTOCALL_TOKEN" });
  assert.deepEqual(registryToken(r, { env: { HOME: home, BUF_TOKEN: "b" } }), {
    token: "b",
    origin: "BUF_TOKEN",
  });
  const netrc = join(home, ".netrc");
  assert.deepEqual(registryToken(r, { env: { HOME: home } }), {
    token: "from-netrc-port",
    origin: "netrc",
    file: netrc,
  });
  assert.deepEqual(
    registryToken("buf.example.com:443", { env: { HOME: home, BUF_TOKEN: "x@other.example.com" } }),
    {
      token: "from-netrc",
      origin: "netrc",
      file: netrc,
    },
  );
  assert.equal(registryToken("other.example.com", { env: { HOME: home } }), undefined);
});
