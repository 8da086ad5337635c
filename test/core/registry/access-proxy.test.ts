// Registry calls go through the proxy the registry access names (HTTPS_PROXY, NO_PROXY): the webhook
// API's JSON posts and the module API's Connect calls both tunnel through a real tinyproxy (its log
// shows each CONNECT), with TLS verified end to end against the registry's CA; NO_PROXY goes direct.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { remoteAccess } from "../../../src/core/registry/access";
import { ModuleClient } from "../../../src/core/registry/module-client";
import { createWebhookClient } from "../../../src/core/webhooks/client";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { startTinyproxy, type TestProxy, viaProxyName } from "../../support/proxy";
import { startTestRegistry, type TestRegistry } from "../../support/registry";
import { createTestPki } from "../../support/tls";

let proxy: TestProxy;
let registry: TestRegistry;

before(async () => {
  const pki = await createTestPki(["localhost", "0.0.0.0"]);
  [proxy, registry] = await Promise.all([startTinyproxy(), startTestRegistry({ pki })]);
});

after(async () => {
  closePostConnections();
  await Promise.all([proxy?.stop(), registry?.close()]);
});

const base = () => viaProxyName(registry.url);
const remote = () => new URL(base()).host;
const access = (env: Record<string, string>) =>
  remoteAccess(remote(), {
    env: { BUF_TOKEN: "alice-token", ...env },
    home: registry.home,
    caFile: registry.pki.ca.certPath,
  });
const connects = () => proxy.connects().filter((c) => c === remote()).length;

test("webhook API calls and module API calls tunnel through HTTPS_PROXY", async () => {
  const before = connects();
  const a = access({ HTTPS_PROXY: proxy.url });
  const hooks = await createWebhookClient({ baseUrl: base(), access: a }).listWebhooks("acme", "petapis");
  assert.ok(Array.isArray(hooks));
  assert.ok(connects() > before, "the webhook call did not go through the proxy");

  const afterWebhooks = connects();
  const modules = new ModuleClient({ access: a, baseUrl: base() });
  // The repository holds no module commits yet: an empty list, answered through the tunnel.
  assert.deepEqual(await modules.listCommits("acme", "petapis"), []);
  assert.ok(connects() > afterWebhooks, "the module call did not go through the proxy");
});

test("NO_PROXY sends registry calls direct", async () => {
  const before = proxy.connects().length;
  const a = access({ HTTPS_PROXY: proxy.url, NO_PROXY: "0.0.0.0" });
  await createWebhookClient({ baseUrl: base(), access: a }).listWebhooks("acme", "petapis");
  assert.equal(proxy.connects().length, before);
});

test("a registry call through a proxy that cannot be reached says which proxy", async () => {
  const a = access({ HTTPS_PROXY: "http://127.0.0.1:1" });
  const err = await createWebhookClient({ baseUrl: base(), access: a })
    .listWebhooks("acme", "petapis")
    .catch((e: unknown) => e);
  assert.ok(err instanceof Error);
  assert.match(
    err.message,
    /cannot reach the registry at .*proxyconnect tcp: dial tcp 127\.0\.0\.1:1: connect: connection refused \(the proxy http:\/\/127\.0\.0\.1:1 from HTTPS_PROXY cannot be reached/,
  );
});
