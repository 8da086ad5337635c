// Parity with `buf curl` through a real proxy (tinyproxy), where buf reads the same variables
// (HTTPS_PROXY / HTTP_PROXY / NO_PROXY, Go's rules): the same output, exit codes and error codes.
// Deliberate differences, not compared here: buf sends h2c's HTTP/2 preface to the proxy itself
// ("http2: frame too large"), where protocall tunnels it through CONNECT; buf 1.75 ignores --cacert
// (and -k) through a proxy (see the reference notes), so the TLS case also names the CA in
// SSL_CERT_FILE, which buf reads; protocall's unreachable-proxy message adds which variable named it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startTinyproxy, type TestProxy, viaProxyName } from "../support/proxy";
import { type DemoServer, demoDescriptorSet, startDemoServer, startTlsDemoServer } from "../support/servers";
import { createTestPki } from "../support/tls";
import { assertParity, errorJson } from "./harness";

let proxy: TestProxy;
let authProxy: TestProxy;
let plain: DemoServer;
let secure: DemoServer;
let schema: string;
let caPath: string;

before(async () => {
  const pki = await createTestPki(["localhost", "0.0.0.0"]);
  caPath = pki.ca.certPath;
  [proxy, authProxy, plain, secure, schema] = await Promise.all([
    startTinyproxy(),
    startTinyproxy({ user: "alice", password: "s3cret" }),
    startDemoServer(),
    startTlsDemoServer(pki),
    demoDescriptorSet(),
  ]);
});

after(async () => {
  await Promise.all([proxy?.stop(), authProxy?.stop(), plain?.close(), secure?.close()]);
});

const greet = (base: string) => `${viaProxyName(base)}/demo.v1.GreetService/Greet`;
const noNoProxy = { NO_PROXY: undefined, no_proxy: undefined };

test("Connect over HTTP/1.1 through HTTP_PROXY: same output", async () => {
  const before = proxy.connects().length;
  const { ours } = await assertParity(["--schema", schema, "-d", '{"name":"p"}', greet(plain.url)], {
    env: { HTTP_PROXY: proxy.url, ...noNoProxy },
    code: 0,
  });
  assert.match(ours.stdout, /Hello, p!/);
  // protocall tunnels (CONNECT); buf sends the request itself to the proxy: one CONNECT is ours.
  assert.equal(proxy.connects().length, before + 1);
});

test("gRPC over TLS through HTTPS_PROXY: same output, both tunnel through CONNECT", async () => {
  const authority = new URL(viaProxyName(secure.url)).host;
  const before = proxy.connects().filter((c) => c === authority).length;
  const args = [
    "--cacert",
    caPath,
    "--protocol",
    "grpc",
    "--schema",
    schema,
    "-d",
    '{"name":"t"}',
    greet(secure.url),
  ];
  await assertParity(args, {
    env: { HTTPS_PROXY: proxy.url, SSL_CERT_FILE: caPath, ...noNoProxy },
    code: 0,
  });
  assert.equal(proxy.connects().filter((c) => c === authority).length, before + 2);
});

test("NO_PROXY: both go direct", async () => {
  const before = proxy.connects().length;
  await assertParity(["--schema", schema, "-d", "{}", greet(plain.url)], {
    env: { HTTP_PROXY: proxy.url, NO_PROXY: "0.0.0.0" },
    code: 0,
  });
  assert.equal(proxy.connects().length, before);
});

test("proxy credentials work; wrong ones are unauthenticated for both", async () => {
  await assertParity(["--schema", schema, "-d", "{}", greet(plain.url)], {
    env: { HTTP_PROXY: authProxy.url, ...noNoProxy },
    code: 0,
  });
  await assertParity(["--schema", schema, "-d", "{}", greet(plain.url)], {
    env: { HTTP_PROXY: authProxy.url.replace("s3cret", "wrong"), ...noNoProxy },
    code: 128,
    errors: "code",
  });
});

test("an unreachable proxy: unavailable for both, with Go's words", async () => {
  const { ours, buf } = await assertParity(["--schema", schema, "-d", "{}", greet(plain.url)], {
    env: { HTTP_PROXY: "http://127.0.0.1:1", ...noNoProxy },
    code: 112,
    errors: "code",
  });
  const theirs = errorJson(buf.stderr).message ?? "";
  assert.equal(theirs, "proxyconnect tcp: dial tcp 127.0.0.1:1: connect: connection refused");
  assert.ok(errorJson(ours.stderr).message?.startsWith(theirs), ours.stderr);
});
