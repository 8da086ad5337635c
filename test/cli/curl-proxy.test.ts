// Calls through a real HTTP proxy (tinyproxy): every protocol and HTTP version tunnels through CONNECT
// (the proxy's log shows it), reflection too, `protocall run` and `# @proxy` as well; NO_PROXY and
// loopback names go direct; proxy credentials work and wrong ones are a clear error.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import tls from "node:tls";
import { runCli } from "../support/cli";
import { hasTinyproxy, startTinyproxy, type TestProxy, viaProxyName } from "../support/proxy";
import { type DemoServer, demoDescriptorSet, startDemoServer, startTlsDemoServer } from "../support/servers";
import { createTestPki, type TestPki } from "../support/tls";

let proxy: TestProxy;
let authProxy: TestProxy;
let plain: DemoServer;
let secure: DemoServer;
let pki: TestPki;
let schema: string;

before(async () => {
  assert.ok(hasTinyproxy(), "tinyproxy is not installed: apt-get install -y tinyproxy (.ci/run does)");
  pki = await createTestPki();
  [proxy, authProxy, plain, secure, schema] = await Promise.all([
    startTinyproxy(),
    startTinyproxy({ user: "alice", password: "s3cret-pass" }),
    startDemoServer(),
    startTlsDemoServer(pki),
    demoDescriptorSet(),
  ]);
});

after(async () => {
  await Promise.all([proxy?.stop(), authProxy?.stop(), plain?.close(), secure?.close()]);
});

const greet = (base: string) => `${base}/demo.v1.GreetService/Greet`;
const hostPort = (url: string) => new URL(url).host;

/** Waits until the proxy has logged a CONNECT to `authority` more than `before` times. */
async function sawConnect(p: TestProxy, authority: string, before: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (p.connects().filter((c) => c === authority).length > before) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`the proxy logged no new CONNECT ${authority}: ${p.connects().join(", ")}`);
}

const count = (p: TestProxy, authority: string) => p.connects().filter((c) => c === authority).length;

for (const [label, flags, server] of [
  ["Connect over HTTP/1.1", [], () => plain],
  ["Connect over h2c (prior knowledge)", ["--http2-prior-knowledge"], () => plain],
  ["gRPC over h2c", ["--protocol", "grpc"], () => plain],
  ["gRPC-Web over HTTP/1.1", ["--protocol", "grpcweb"], () => plain],
  [
    "gRPC over TLS (ALPN h2)",
    ["--protocol", "grpc", "--cacert", "", "--servername", "localhost"],
    () => secure,
  ],
  ["Connect over TLS (ALPN)", ["--cacert", "", "--servername", "localhost"], () => secure],
] as const) {
  test(`curl through HTTPS_PROXY/HTTP_PROXY: ${label}`, async () => {
    const base = viaProxyName(server().url);
    const args = flags.map((f) => (f === "" ? pki.ca.certPath : f));
    const env = { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, NO_PROXY: undefined, no_proxy: undefined };
    const n = count(proxy, hostPort(base));
    const r = await runCli(
      ["curl", "-v", "--schema", schema, ...args, "-d", '{"name":"proxy"}', greet(base)],
      {
        env,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Hello, proxy!/);
    assert.match(
      r.stderr,
      new RegExp(`Using proxy http://127\\.0\\.0\\.1:\\d+ \\(from HTTPS?_PROXY\\) for ${hostPort(base)}`),
    );
    await sawConnect(proxy, hostPort(base), n);
  });
}

test("reflection goes through the proxy too", async () => {
  const base = viaProxyName(plain.url);
  const n = count(proxy, hostPort(base));
  const r = await runCli(["curl", "--list-services", base], {
    env: { http_proxy: proxy.url, HTTP_PROXY: undefined, NO_PROXY: undefined, no_proxy: undefined },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /demo\.v1\.GreetService/);
  await sawConnect(proxy, hostPort(base), n);
});

test("--proxy replaces the environment's proxy; NO_PROXY and localhost go direct", async () => {
  const base = viaProxyName(plain.url);
  const n = count(proxy, hostPort(base));
  const r = await runCli(["curl", "--proxy", proxy.url, "--schema", schema, "-d", "{}", greet(base)], {
    env: { HTTP_PROXY: "http://127.0.0.1:1", NO_PROXY: undefined, no_proxy: undefined },
  });
  assert.equal(r.code, 0, r.stderr);
  await sawConnect(proxy, hostPort(base), n);

  const before = proxy.connects().length;
  const direct = await runCli(["curl", "-v", "--schema", schema, "-d", "{}", greet(base)], {
    env: { HTTP_PROXY: proxy.url, NO_PROXY: "example.com, 0.0.0.0" },
  });
  assert.equal(direct.code, 0, direct.stderr);
  assert.doesNotMatch(direct.stderr, /Using proxy/);
  const local = await runCli(
    ["curl", "--schema", schema, "-d", "{}", greet(plain.url.replace("127.0.0.1", "localhost"))],
    {
      env: { HTTP_PROXY: proxy.url, NO_PROXY: undefined, no_proxy: undefined },
    },
  );
  assert.equal(local.code, 0, local.stderr);
  assert.equal(proxy.connects().length, before, "NO_PROXY and localhost must not use the proxy");
});

test("proxy credentials in the URL; wrong ones are a clear error with the password hidden", async () => {
  const base = viaProxyName(plain.url);
  const env = { HTTP_PROXY: authProxy.url, NO_PROXY: undefined, no_proxy: undefined };
  const ok = await runCli(["curl", "--schema", schema, "-d", "{}", greet(base)], { env });
  assert.equal(ok.code, 0, ok.stderr);

  const wrong = authProxy.url.replace("s3cret-pass", "nope");
  const bad = await runCli(["curl", "--schema", schema, "-d", "{}", greet(base)], {
    env: { ...env, HTTP_PROXY: wrong },
  });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stdout + bad.stderr, /rejected the credentials in the proxy URL from HTTP_PROXY/);
  assert.doesNotMatch(bad.stdout + bad.stderr, /nope/);

  const none = await runCli(["curl", "--schema", schema, "-d", "{}", greet(base)], {
    env: { ...env, HTTP_PROXY: authProxy.url.replace(/\/\/[^@]+@/, "//") },
  });
  assert.notEqual(none.code, 0);
  assert.match(none.stdout + none.stderr, /asks for credentials/);
});

test("a proxy that refuses the tunnel is a clear error with its answer", async () => {
  const strict = await startTinyproxy(undefined, [443]);
  try {
    const base = viaProxyName(plain.url);
    const r = await runCli(["curl", "--schema", schema, "-d", "{}", greet(base)], {
      env: { HTTP_PROXY: strict.url, NO_PROXY: undefined, no_proxy: undefined },
    });
    assert.equal(r.code, 112, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`proxy http://127\\.0\\.0\\.1:\\d+ refused CONNECT ${hostPort(base)}: 403`),
    );
  } finally {
    await strict.stop();
  }
});

test("an https proxy: its certificate is verified; PROTOCALL_PROXY_STRICT_SSL=false skips that", async () => {
  // TLS in front of tinyproxy, with a certificate Node's roots do not trust.
  const front = tls.createServer({ cert: pki.server.cert, key: pki.server.key }, (client) => {
    const upstream = net.connect(Number(new URL(proxy.url).port), "127.0.0.1");
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
  try {
    const httpsProxy = `https://127.0.0.1:${(front.address() as net.AddressInfo).port}`;
    const base = viaProxyName(plain.url);
    const env = {
      HTTP_PROXY: httpsProxy,
      NO_PROXY: undefined,
      no_proxy: undefined,
      NODE_EXTRA_CA_CERTS: undefined,
    };
    const refused = await runCli(["curl", "--schema", schema, "-d", "{}", greet(base)], { env });
    assert.equal(refused.code, 112, refused.stderr);
    assert.match(
      refused.stderr,
      /the certificate of the proxy https:\/\/127\.0\.0\.1:\d+ from HTTP_PROXY is not trusted/,
    );
    const n = count(proxy, hostPort(base));
    const ok = await runCli(["curl", "--schema", schema, "-d", '{"name":"tls"}', greet(base)], {
      env: { ...env, PROTOCALL_PROXY_STRICT_SSL: "false" },
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /Hello, tls!/);
    await sawConnect(proxy, hostPort(base), n);
  } finally {
    await new Promise((r) => front.close(r));
  }
});

test("a proxy that cannot be reached, or an unsupported scheme, is a clear error", async () => {
  const base = viaProxyName(plain.url);
  const down = await runCli(["curl", "--schema", schema, "-d", "{}", greet(base)], {
    env: { HTTP_PROXY: "http://127.0.0.1:1", NO_PROXY: undefined, no_proxy: undefined },
  });
  assert.equal(down.code, 112, down.stderr);
  assert.match(
    down.stdout + down.stderr,
    /proxyconnect tcp: dial tcp 127\.0\.0\.1:1: connect: connection refused/,
  );
  const socks = await runCli([
    "curl",
    "--proxy",
    "socks5://127.0.0.1:1080",
    "--schema",
    schema,
    "-d",
    "{}",
    greet(base),
  ]);
  assert.notEqual(socks.code, 0);
  assert.match(socks.stderr, /--proxy socks5:\/\/127\.0\.0\.1:1080: socks5 proxies are not supported/);
});

test("protocall run and # @proxy go through the proxy", async () => {
  const base = viaProxyName(plain.url);
  const dir = mkdtempSync(join(tmpdir(), "protocall-proxy-run-"));
  writeFileSync(
    join(dir, "a.rpc"),
    [
      `### from the environment`,
      `# @schema ${schema}`,
      `${greet(base)}`,
      "",
      '{"name": "env"}',
      "",
      "### from @proxy",
      `# @schema ${schema}`,
      `# @proxy ${proxy.url}`,
      `# @protocol grpc`,
      `${greet(base)}`,
      "",
      '{"name": "option"}',
      "",
    ].join("\n"),
  );
  const n = count(proxy, hostPort(base));
  const r = await runCli(["run", "a.rpc"], {
    cwd: dir,
    env: { HTTP_PROXY: undefined, http_proxy: proxy.url, NO_PROXY: undefined, no_proxy: undefined },
  });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  await sawConnect(proxy, hostPort(base), n + 1);
});
