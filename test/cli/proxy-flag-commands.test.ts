// `--proxy` on the commands that connect outside the call pipeline, through a real tinyproxy (its log
// shows each CONNECT): the registry's webhook API (`webhook list`), its client API (`registry
// deliveries`), a test post to a listener (`webhook send-test`, which also follows HTTP_PROXY), the
// listener's forwards (`listen --forward-to`, which says which proxy it forwards through) and
// `listen replay`. The flag replaces a proxy the environment names (here one that cannot be
// reached); wrong credentials and a bad URL are clear errors.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { encodeEvent, samplePushEvent } from "../../src/core/webhooks/event";
import { closePostConnections, post } from "../../src/core/webhooks/http-post";
import { type CliServer, startCliServer, waitFor } from "../core/webhooks/support";
import { runCli } from "../support/cli";
import { hasTinyproxy, startTinyproxy, type TestProxy, viaProxyName } from "../support/proxy";
import { startTestRegistry, type TestRegistry } from "../support/registry";
import { createTestPki } from "../support/tls";

const dir = mkdtempSync(join(tmpdir(), "protocall-proxy-flag-"));
let proxy: TestProxy;
let authProxy: TestProxy;
let registry: TestRegistry;
let listener: CliServer;

/** An environment whose own proxy cannot be reached: only --proxy makes the commands work. */
const deadProxy = {
  HTTPS_PROXY: "http://127.0.0.1:1",
  HTTP_PROXY: "http://127.0.0.1:1",
  NO_PROXY: "",
  no_proxy: "",
};

before(async () => {
  assert.ok(hasTinyproxy(), "tinyproxy is not installed: apt-get install -y tinyproxy (.ci/run does)");
  const pki = await createTestPki(["localhost", "0.0.0.0"]);
  [proxy, authProxy, registry, listener] = await Promise.all([
    startTinyproxy(),
    startTinyproxy({ user: "alice", password: "s3cret-pass" }),
    startTestRegistry({ pki }),
    startCliServer(["listen", "--store", join(dir, "listener.store")]),
  ]);
});

after(async () => {
  closePostConnections();
  await Promise.all([proxy?.stop(), authProxy?.stop(), registry?.close(), listener?.stop()]);
});

const through = (p: TestProxy, url: string) => p.connects().filter((c) => c === new URL(url).host).length;
const registryEnv = () => ({ ...registry.env("alice-token"), ...deadProxy });
/** `protocall webhook list` of the test repository on the registry, named so the proxy is used. */
const listWebhooks = (...more: string[]) =>
  runCli(
    [
      "webhook",
      "list",
      "--owner",
      "acme",
      "--repository",
      "petapis",
      "--remote",
      viaProxyName(registry.url),
      ...more,
    ],
    { env: registryEnv() },
  );

test("webhook list and registry deliveries go through --proxy, not the environment's proxy", async () => {
  const remote = viaProxyName(registry.url);
  const n = through(proxy, remote);
  const list = await listWebhooks("--proxy", proxy.url);
  assert.equal(list.code, 0, list.stderr);
  assert.ok(Array.isArray(JSON.parse(list.stdout).webhooks ?? []), list.stdout);
  assert.ok(through(proxy, remote) > n, `no CONNECT ${remote} in the proxy's log`);

  const m = through(proxy, remote);
  const deliveries = await runCli(["registry", "deliveries", "--remote", remote, "--proxy", proxy.url], {
    env: registryEnv(),
  });
  assert.equal(deliveries.code, 0, deliveries.stderr);
  assert.ok(through(proxy, remote) > m, `no CONNECT ${remote} for registry deliveries`);

  // Without the flag the environment's (unreachable) proxy is used, and named.
  const failed = await listWebhooks();
  assert.notEqual(failed.code, 0);
  assert.match(failed.stderr, /the proxy http:\/\/127\.0\.0\.1:1 from HTTPS_PROXY cannot be reached/);
});

test("proxy credentials: the right ones pass, a wrong password is a clear error", async () => {
  const ok = await listWebhooks("--proxy", authProxy.url);
  assert.equal(ok.code, 0, ok.stderr);
  const wrong = authProxy.url.replace("s3cret-pass", "wrong");
  const refused = await listWebhooks("--proxy", wrong);
  assert.notEqual(refused.code, 0);
  assert.match(
    refused.stderr,
    /rejected the credentials in the proxy URL from --proxy .*check the user name and password/,
  );
  assert.doesNotMatch(refused.stderr, /wrong/);
});

test("webhook send-test posts through --proxy, and through HTTP_PROXY without it", async () => {
  const to = viaProxyName(listener.url);
  const n = through(proxy, to);
  const flagged = await runCli(["webhook", "send-test", "--to", to, "--proxy", proxy.url], {
    env: deadProxy,
  });
  assert.equal(flagged.code, 0, flagged.stderr);
  assert.equal(through(proxy, to), n + 1);
  const fromEnv = await runCli(["webhook", "send-test", "--to", to], {
    env: { HTTP_PROXY: proxy.url, NO_PROXY: "", no_proxy: "" },
  });
  assert.equal(fromEnv.code, 0, fromEnv.stderr);
  assert.equal(through(proxy, to), n + 2);
});

test("listen --forward-to and listen replay go through --proxy", { timeout: 90_000 }, async () => {
  const backend = await startCliServer(["listen", "--store", join(dir, "backend.store")]);
  const forwardTo = viaProxyName(backend.url);
  const front = await startCliServer(
    ["listen", "--store", join(dir, "front.store"), "--forward-to", forwardTo, "--proxy", proxy.url],
    deadProxy,
  );
  try {
    await waitFor(() => /forwarding through the proxy/.test(front.stderr()), "the proxy line");
    assert.match(front.stderr(), /forwarding through the proxy http:\/\/127\.0\.0\.1:\d+ \(from --proxy\)\n/);
    const n = through(proxy, forwardTo);
    const res = await post(front.url, encodeEvent(samplePushEvent()), {
      "content-type": "application/proto",
    });
    assert.equal(res.status, 200);
    await waitFor(() => front.lines.some((l) => l.includes('"forward"')), "the forward result");
    const forwarded = JSON.parse(front.lines.find((l) => l.includes('"forward"')) ?? "{}");
    assert.equal(forwarded.forward.status, 200, JSON.stringify(forwarded));
    assert.ok(through(proxy, forwardTo) > n, `no CONNECT ${forwardTo} in the proxy's log`);

    const m = through(proxy, forwardTo);
    const replayed = await runCli(
      [
        "listen",
        "replay",
        String(forwarded.id),
        "--store",
        join(dir, "front.store"),
        "--to-forward",
        "--proxy",
        proxy.url,
      ],
      { env: deadProxy },
    );
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(through(proxy, forwardTo), m + 1);
  } finally {
    await front.stop();
    await backend.stop();
  }
});

test("a bad --proxy, and --proxy on a listener that forwards nowhere, are clear errors", async () => {
  const bad = await runCli(
    ["webhook", "list", "--owner", "acme", "--remote", registry.url, "--proxy", "socks5://127.0.0.1:1080"],
    { env: registryEnv() },
  );
  assert.equal(bad.code, 1, bad.stderr);
  assert.match(
    bad.stderr,
    /--proxy socks5:\/\/127\.0\.0\.1:1080: socks5 proxies are not supported; give an http:\/\/ or https:\/\/ proxy/,
  );
  const nowhere = await runCli(["listen", "--store", join(dir, "x.store"), "--proxy", proxy.url]);
  assert.equal(nowhere.code, 1, nowhere.stderr);
  assert.match(nowhere.stderr, /--proxy applies to forwards: give --forward-to URL too/);
});
