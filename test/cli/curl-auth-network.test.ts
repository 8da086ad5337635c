// The token requests of --auth take the call's network settings: a provider behind an HTTP proxy is
// reached through it (tinyproxy's log shows the CONNECT), and an https provider is trusted by the one
// trust rule (SSL_CERT_FILE here), its certificate refused otherwise with the reason.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type BearerServer, startBearerServer } from "../support/bearer-server";
import { runCli } from "../support/cli";
import { clientId, clientSecret, startOidcProvider, type TestProvider } from "../support/oidc-provider";
import { hasTinyproxy, startTinyproxy, type TestProxy } from "../support/proxy";
import { createTestPki, type TestPki } from "../support/tls";

let api: BearerServer;
let pki: TestPki;
const started: { close(): Promise<void> }[] = [];

before(async () => {
  api = await startBearerServer();
  pki = await createTestPki();
});
after(async () => {
  for (const s of started) await s.close();
  await api?.close();
});

const call = (issuer: string, args: string[] = [], env: Record<string, string> = {}) =>
  runCli(
    [
      "curl",
      "--http2-prior-knowledge",
      ...args,
      "--auth",
      `oauth2 client_credentials issuer=${issuer} client-id=${clientId} client-secret=${clientSecret}`,
      "-d",
      "{}",
      `${api.url}/demo.v1.DemoService/Echo`,
    ],
    { env },
  );

describe("--auth network settings", { timeout: 120_000 }, () => {
  test("the provider is reached through --proxy", {
    skip: !hasTinyproxy() && "tinyproxy is not installed",
  }, async () => {
    // Named 0.0.0.0: not a loopback literal, so it is proxied (see test/support/proxy.ts).
    const op: TestProvider = await startOidcProvider({ host: "0.0.0.0" });
    started.push(op);
    const proxy: TestProxy = await startTinyproxy();
    started.push({ close: () => proxy.stop() });
    const port = new URL(op.issuer).port;
    const r = await call(op.issuer, ["--proxy", proxy.url]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(proxy.connects().includes(`0.0.0.0:${port}`), `CONNECTs: ${proxy.connects().join(", ")}`);
    assert.equal(op.tokenRequests.length, 1);
  });

  test("an https provider is trusted by SSL_CERT_FILE, and refused with the reason without it", async () => {
    const op = await startOidcProvider({ tls: { cert: pki.server.cert, key: pki.server.key } });
    started.push(op);
    const refused = await call(op.issuer, [], { SSL_CERT_FILE: pki.otherCa.certPath });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^protocall: OAuth2 discovery at https:\/\/127\.0\.0\.1:\d+: .*certificate/);
    const trusted = await call(op.issuer, [], { SSL_CERT_FILE: pki.ca.certPath });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(op.tokenRequests.length, 1);
  });
});
