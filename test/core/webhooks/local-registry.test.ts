import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { createWebhookClient } from "../../../src/core/webhooks/client";
import { parseRegistryConfig } from "../../../src/core/webhooks/emulator/config";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { type Listener, startListener } from "../../../src/core/webhooks/listener";
import {
  adminUserOf,
  type LocalRegistry,
  pushToRegistry,
  startLocalRegistry,
} from "../../../src/core/webhooks/local-registry";
import { ensureSelfSignedCert } from "../../../src/core/webhooks/self-signed";
import { EventStore } from "../../../src/core/webhooks/store";
import { accessFor } from "../../support/registry-access";
import { waitFor } from "./support";

let dir: string;
let registry: LocalRegistry;
let listener: Listener;
let store: EventStore;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "protocall-local-registry-"));
  const listenerCert = await ensureSelfSignedCert(dir, "listener");
  store = await EventStore.open(join(dir, "events.store"));
  listener = await startListener({ store, tls: { cert: listenerCert.cert, key: listenerCert.key } });
  registry = await startLocalRegistry({ certDir: dir, trustCa: listenerCert.cert, batchIntervalMs: 100 });
});

after(async () => {
  await registry.close();
  await listener.close();
  await store.close();
  closePostConnections();
});

test("serves https on 127.0.0.1, signed in as the built-in configuration's Admin", () => {
  assert.match(registry.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(registry.user.name, "alice");
  assert.equal(registry.token, "alice-token");
  assert.deepEqual(registry.repositories, ["acme/petapis"]);
  assert.match(registry.ca, /BEGIN CERTIFICATE/);
});

test("a push is delivered over verified https to a listener whose certificate it trusts", async () => {
  const client = createWebhookClient({
    baseUrl: registry.url,
    access: accessFor(registry.url, registry.token, registry.ca),
  });
  const hook = await client.createWebhook({
    owner: "acme",
    repository: "petapis",
    callbackUrl: listener.callbackUrl,
  });
  try {
    const res = await pushToRegistry(
      registry.url,
      registry.token,
      { owner: "acme", repository: "petapis", author: "<img src=x onerror=alert(1)>", tags: ["v1"] },
      { ca: registry.ca },
    );
    assert.equal(res.eventQueued, true);
    const delivered = await waitFor(
      async () => (await store.list()).find((d) => d.status === "accepted"),
      "the delivery",
    );
    const push = (
      delivered.event as { payload: { repositoryPush: { repositoryCommit: { id: string; author: string } } } }
    ).payload.repositoryPush.repositoryCommit;
    assert.equal(push.id, res.commit?.id);
    assert.equal(push.author, "<img src=x onerror=alert(1)>");
  } finally {
    await client.deleteWebhook(hook.webhookId);
  }
});

test("push failures say what to do", async () => {
  await assert.rejects(
    pushToRegistry(registry.url, registry.token, { owner: "acme", repository: "nope" }, { ca: registry.ca }),
    (e) =>
      e instanceof ProtocallError &&
      /cannot push to acme\/nope: repository acme\/nope does not exist; push to a repository of the registry's configuration/.test(
        e.message,
      ),
  );
  await assert.rejects(
    pushToRegistry(registry.url, "wrong", { owner: "acme", repository: "petapis" }, { ca: registry.ca }),
    (e) =>
      e instanceof ProtocallError &&
      /did not accept the token \(invalid token\): sign in again/.test(e.message),
  );
  await assert.rejects(
    pushToRegistry(
      "https://127.0.0.1:9",
      registry.token,
      { owner: "acme", repository: "petapis" },
      { timeoutMs: 5000 },
    ),
    (e) =>
      e instanceof ProtocallError &&
      /cannot reach the local registry at https:\/\/127\.0\.0\.1:9.*Start Local Registry/.test(e.message),
  );
});

test("a configuration without an Admin is refused with the fix", () => {
  const config = parseRegistryConfig({
    users: [{ name: "bob", token: "b" }],
    repositories: [{ owner: "acme", name: "petapis", members: ["bob"] }],
  });
  assert.throws(
    () => adminUserOf(config),
    /no user with the Admin role: add a user name to a repository's "admins"/,
  );
});
