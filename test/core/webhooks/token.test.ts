import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { netrcPassword, resolveToken } from "../../../src/core/webhooks/token";

const home = mkdtempSync(join(tmpdir(), "protocall-token-"));
writeFileSync(
  join(home, ".netrc"),
  "# registry\nmachine other.example.com login x password other\nmachine buf.example.com\n  login alice\n  password from-netrc\ndefault login d password fallback\n",
);

test("PROTOCALL_TOKEN wins over BUF_TOKEN and netrc", () => {
  const t = resolveToken({ PROTOCALL_TOKEN: "p", BUF_TOKEN: "b" }, "buf.example.com", home);
  assert.deepEqual(t, { token: "p", from: "PROTOCALL_TOKEN" });
});

test("BUF_TOKEN wins over netrc, including its token@host list form", () => {
  assert.equal(resolveToken({ BUF_TOKEN: "b" }, "buf.example.com", home)?.token, "b");
  assert.equal(
    resolveToken({ BUF_TOKEN: "t1@a.example.com,t2@buf.example.com" }, "buf.example.com", home)?.token,
    "t2",
  );
});

test("netrc: the machine entry for the host, then default; port ignored; $NETRC names the file", () => {
  assert.deepEqual(resolveToken({}, "buf.example.com", home), {
    token: "from-netrc",
    from: join(home, ".netrc"),
  });
  assert.equal(resolveToken({}, "buf.example.com:8443", home)?.token, "from-netrc");
  assert.equal(resolveToken({}, "unknown.example.com", home)?.token, "fallback");
  const alt = join(home, "alt-netrc");
  writeFileSync(alt, "machine buf.example.com password alt\n");
  assert.equal(resolveToken({ NETRC: alt }, "buf.example.com", home)?.token, "alt");
  assert.equal(resolveToken({}, "x", join(home, "missing")), undefined);
  assert.equal(netrcPassword("machine a password p", "b"), undefined);
});
