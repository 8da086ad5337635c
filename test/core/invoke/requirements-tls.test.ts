// TLS inputs that are wrong in ways a user makes: an https URL for a plain-http server (worded as
// buf words it), files that are not PEM, and a client certificate with a key that is not its own.
// The file problems fail before anything is sent: one line, exit 1.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type DemoServer, startDemoServer } from "../../../src/demo/server";
import { runBufCurl } from "../../support/buf";
import { createTestPki, type TestPki } from "../../support/tls";
import { curl, writeDemoDescriptorSet } from "./support";

let plain: DemoServer;
let pki: TestPki;
let schema: string;
let dir: string;
let notPem: string;

before(async () => {
  plain = await startDemoServer();
  pki = await createTestPki();
  schema = writeDemoDescriptorSet();
  dir = mkdtempSync(join(tmpdir(), "protocall-curl-tls-"));
  notPem = join(dir, "not.pem");
  writeFileSync(notPem, "this is not a certificate\n");
});
after(async () => {
  await plain.close();
  rmSync(dir, { recursive: true, force: true });
});

const httpsUrl = () => `${plain.url.replace("http:", "https:")}/demo.v1.GreetService/Greet`;

function oneLine(r: { code: number; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^protocall: [^\n]+\n$/);
  assert.match(r.stderr, pattern);
}

describe("TLS input errors", () => {
  test("an https URL for a plain-http server is unavailable, worded as buf's", async () => {
    const ours = await curl({ url: httpsUrl(), insecure: true, schemas: [schema] });
    const theirs = await runBufCurl(["-k", "--schema", schema, httpsUrl()], { timeoutMs: 20_000 });
    assert.equal(ours.code, 112, ours.stderr);
    assert.equal(
      ours.stderr,
      '{\n   "code": "unavailable",\n   "message": "tls: first record does not look like a TLS handshake"\n}\n',
    );
    assert.equal(theirs.code, 112);
    assert.equal(theirs.stderr, ours.stderr);
  });

  test("through reflection, the same failure is one line, exit 1", async () => {
    const r = await curl({ url: httpsUrl(), insecure: true });
    oneLine(r, /tls: first record does not look like a TLS handshake/);
    assert.doesNotMatch(r.stderr, /SSL routines|openssl/);
  });

  test("--cacert, --cert or --key that is not PEM", async () => {
    oneLine(
      await curl({ url: httpsUrl(), cacert: notPem, schemas: [schema] }),
      /^protocall: --cacert .*not\.pem: no PEM data/,
    );
    oneLine(
      await curl({ url: httpsUrl(), cert: notPem, key: pki.client.keyPath, schemas: [schema] }),
      /^protocall: --cert .*not\.pem: no PEM data/,
    );
    oneLine(
      await curl({ url: httpsUrl(), cert: pki.client.certPath, key: notPem, schemas: [schema] }),
      /^protocall: --key .*not\.pem: no PEM data/,
    );
  });

  test("a client certificate with a private key that is not its own", async () => {
    const r = await curl({
      url: httpsUrl(),
      cert: pki.client.certPath,
      key: pki.server.keyPath,
      schemas: [schema],
    });
    oneLine(
      r,
      /are not a usable certificate and private key \(.+\); give the client certificate and its own/,
    );
  });
});
