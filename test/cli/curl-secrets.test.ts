// `protocall curl` keeps secrets out of what it prints, with the one redactor (core/invoke/redact.ts):
// verbose output hides every credential-like header (not only a fixed list), errors about a bad
// header never echo its value, and a header value with CR, LF or another control character is
// refused as buf refuses it (unavailable, exit 112) before anything is sent.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runBufCurl } from "../support/buf";
import { runCli } from "../support/cli";
import { type DemoServer, demoDescriptorSet, startDemoServer } from "../support/servers";

describe("protocall curl: secrets and header values", { concurrency: 4, timeout: 120_000 }, () => {
  let demo: DemoServer;
  let schema: string;
  before(async () => {
    [demo, schema] = await Promise.all([startDemoServer(), demoDescriptorSet()]);
  });
  after(() => demo.close());
  const greet = () => `${demo.url}/demo.v1.GreetService/Greet`;

  test("-v hides every credential-like header, not only a fixed list", async () => {
    const secrets = {
      "X-Access-Token": "tok-access-1",
      "X-Goog-Api-Key": "tok-goog-2",
      "Private-Token": "tok-private-3",
      "X-Amz-Security-Token": "tok-amz-4",
      Authorization: "Bearer tok-bearer-5",
      Cookie: "session=tok-cookie-6",
    };
    const args = ["curl", "-v", "--schema", schema, "-d", "{}"];
    for (const [name, value] of Object.entries(secrets)) args.push("-H", `${name}: ${value}`);
    const r = await runCli([...args, "-H", "X-Trace: visible-7", greet()]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /tok-/, r.stderr);
    assert.match(r.stderr, /> \(#1\) X-Access-Token: \[redacted\]/);
    assert.match(r.stderr, /> \(#1\) Authorization: Bearer \[redacted\]/);
    assert.match(r.stderr, /X-Trace: visible-7/);
  });

  test("-u user:password is sent and hidden in verbose output", async () => {
    const r = await runCli(["curl", "-v", "-u", "ada:pw-secret-8", "--schema", schema, "-d", "{}", greet()]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /pw-secret-8|YWRhOnB3LXNlY3JldC04/);
    assert.match(r.stderr, /Authorization: Basic \[redacted\]/);
  });

  test("a malformed -H does not echo its value (it may be a token)", async () => {
    const r = await runCli(["curl", "-H", "Bearer tok-forgot-the-name", "--schema", schema, greet()]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^protocall: --header value is a malformed header \(it has no ":"\); write it as "name: value"\n$/,
    );
    assert.doesNotMatch(r.stderr, /tok-forgot/);
  });

  test("a .rpc header line without a colon and an invalid URL with a password are not echoed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "protocall-secrets-"));
    const file = join(dir, "a.rpc");
    writeFileSync(file, `${greet()}\nAuthorization Bearer SECRET123\n\n{}\n`);
    const run = await runCli(["run", file]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /a\.rpc:2:1: expected a header `name: value` \(this line has no ":"\)/);
    assert.doesNotMatch(run.stdout + run.stderr, /SECRET123/);
    const url = await runCli(["curl", "http://u:PASS123@[127.0.0.1/x.Y/Z"]);
    assert.equal(url.code, 1, url.stderr);
    assert.equal(
      url.stderr,
      'protocall: "http://u:[redacted]@[127.0.0.1/x.Y/Z" is not a valid URL (its host has a "[" with no "]"): write it as http://localhost:8080/acme.v1.GreetService/Greet\n',
    );
  });

  for (const [label, args, name] of [
    ["-A with CR LF", ["-A", "ua\r\nx-injected: 1"], "User-Agent"],
    ["-H with CR LF", ["-H", "x-a: tok-9\r\nx-injected: 1"], "X-A"],
    ["-H with a control character", ["-H", "x-a: tok-10\u0001"], "X-A"],
  ] as const) {
    test(`${label}: refused as buf refuses it (unavailable, exit 112), the value not echoed`, async () => {
      const full = ["--schema", schema, ...args, "-d", "{}", greet()];
      const [ours, buf] = await Promise.all([runCli(["curl", ...full]), runBufCurl(full)]);
      const expected = `{\n   "code": "unavailable",\n   "message": "net/http: invalid header field value for \\"${name}\\""\n}\n`;
      assert.equal(ours.code, 112, ours.stderr);
      assert.equal(ours.stderr, expected);
      if (label !== "-H with CR LF") {
        // buf cuts an -H value at its line break instead; -A and control characters it refuses alike.
        assert.equal(buf.code, 112, buf.stderr);
        assert.equal(buf.stderr, expected);
      }
    });
  }
});
