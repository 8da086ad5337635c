// Registry emulator rules not covered elsewhere: the WebhookService in the Connect binary form, who may
// push, the recorded delivery attempts (status, latency, response body) and their TLS verification,
// and webhooks switched off in the configuration file.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import {
  defaultRegistryConfig,
  loadRegistryConfig,
  parseRegistryConfig,
} from "../../../src/core/registry-emulator/config";
import { type RegistryEmulator, startRegistryEmulator } from "../../../src/core/registry-emulator/server";
import { ensureSelfSignedCert } from "../../../src/core/serve/self-signed";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { WebhookEvent, WebhookService } from "../../../src/gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { RegistryService } from "../../../src/gen/protocall/registry/v1/registry_pb";
import { repoRoot } from "../../support/cli";
import { createTestPki, type TestPki } from "../../support/tls";
import { waitFor } from "./support";

const config = parseRegistryConfig({
  users: [
    { name: "alice", token: "alice-token" },
    { name: "bob", token: "bob-token" },
    { name: "carol", token: "carol-token" },
  ],
  repositories: [
    { owner: "acme", name: "petapis", admins: ["alice"], members: ["bob"] },
    { owner: "acme", name: "busy", admins: ["alice"], members: [] },
  ],
});

const eventPath = "/buf.alpha.webhook.v1alpha1.EventService/Event";
let pki: TestPki;
let callback: https.Server;
let callbackBase = "";
const received: string[] = [];

before(async () => {
  pki = await createTestPki();
  // A callback endpoint that answers 503 with a body on /busy/…, and 200 elsewhere.
  callback = https.createServer({ cert: pki.server.cert, key: pki.server.key }, (req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(req.url ?? "");
      if (req.url?.startsWith("/busy/")) {
        res.writeHead(503, { "content-type": "application/json" });
        res.end('{"code":"unavailable","message":"backend busy"}');
      } else {
        res.writeHead(200, { "content-type": "application/proto" });
        res.end();
      }
    });
  });
  await new Promise<void>((r) => callback.listen(0, "127.0.0.1", r));
  callbackBase = `https://127.0.0.1:${(callback.address() as { port: number }).port}`;
});

after(async () => {
  closePostConnections();
  await new Promise<void>((r) => callback.close(() => r()));
});

/** An emulator whose batch timers the test fires itself (no wall-clock waits). */
async function emulatorWithClock(options: { trustCa?: string; log?: (line: string) => void } = {}) {
  const due: (() => void)[] = [];
  const emulator = await startRegistryEmulator({
    config,
    tls: { cert: pki.server.cert, key: pki.server.key },
    batchIntervalMs: 5000,
    setTimer: (fn) => {
      due.push(fn);
      return { cancel() {} };
    },
    ...options,
  });
  return { emulator, due };
}

function clients(emulator: RegistryEmulator, token: string, binary = true) {
  const transport = createConnectTransport({
    baseUrl: emulator.url,
    httpVersion: "1.1",
    useBinaryFormat: binary,
    nodeOptions: { ca: pki.ca.cert },
  });
  const headers = { authorization: `Bearer ${token}` };
  return {
    webhooks: createClient(WebhookService, transport),
    registry: createClient(RegistryService, transport),
    headers,
  };
}

async function code(promise: Promise<unknown>): Promise<Code> {
  try {
    await promise;
  } catch (err) {
    return ConnectError.from(err).code;
  }
  assert.fail("the call succeeded");
}

test("WebhookService speaks the Connect binary form too (application/proto)", async () => {
  const { emulator } = await emulatorWithClock();
  try {
    const { webhooks, headers } = clients(emulator, "alice-token");
    const created = await webhooks.createWebhook(
      {
        webhookEvent: WebhookEvent.REPOSITORY_PUSH,
        ownerName: "acme",
        repositoryName: "petapis",
        callbackUrl: `${callbackBase}${eventPath}`,
      },
      { headers },
    );
    assert.ok(created.webhook?.webhookId);
    const listed = await webhooks.listWebhooks({ ownerName: "acme", repositoryName: "petapis" }, { headers });
    assert.deepEqual(
      listed.webhooks.map((w) => w.webhookId),
      [created.webhook?.webhookId],
    );
    assert.equal(listed.nextPageToken, "");
    assert.equal(
      await code(webhooks.listWebhooks({ ownerName: "acme", repositoryName: "petapis" })),
      Code.Unauthenticated,
    );
    await webhooks.deleteWebhook({ webhookId: created.webhook!.webhookId }, { headers });
  } finally {
    await emulator.close();
  }
});

test("push: members and Admins may, other users and unknown tokens may not; --author and tags are kept", async () => {
  const { emulator } = await emulatorWithClock();
  try {
    const push = (token: string, author = "") =>
      clients(emulator, token).registry.push(
        { ownerName: "acme", repositoryName: "petapis", author, tags: ["v1", "stable"] },
        { headers: { authorization: `Bearer ${token}` } },
      );
    const byMember = await push("bob-token");
    assert.equal(byMember.commit?.author, "bob");
    assert.equal(byMember.commit?.commitSequenceId, 1n);
    const byAdmin = await push("alice-token", "release-bot");
    assert.equal(byAdmin.commit?.author, "release-bot");
    assert.equal(byAdmin.commit?.commitSequenceId, 2n);
    assert.deepEqual(
      byAdmin.commit?.tags.map((t) => t.name),
      ["v1", "stable"],
    );
    assert.equal(await code(push("carol-token")), Code.PermissionDenied);
    assert.equal(await code(push("no-such-token")), Code.Unauthenticated);
    // No webhook yet: nothing is queued.
    assert.equal(byMember.eventQueued, false);
  } finally {
    await emulator.close();
  }
});

test("each attempt is recorded with status, latency and response body, visible through ListDeliveries and the log", async () => {
  const log: string[] = [];
  const { emulator, due } = await emulatorWithClock({ trustCa: pki.ca.cert, log: (l) => log.push(l) });
  try {
    const alice = clients(emulator, "alice-token");
    await alice.webhooks.createWebhook(
      {
        webhookEvent: WebhookEvent.REPOSITORY_PUSH,
        ownerName: "acme",
        repositoryName: "busy",
        callbackUrl: `${callbackBase}/busy${eventPath}`,
      },
      { headers: alice.headers },
    );
    const pushed = await alice.registry.push(
      { ownerName: "acme", repositoryName: "busy" },
      { headers: alice.headers },
    );
    assert.equal(pushed.eventQueued, true);
    (await waitFor(() => due.shift(), "the batch timer"))();
    await waitFor(() => emulator.deliveries().length === 1, "the attempt");
    // Members see the attempts of their repositories; carol belongs to none.
    const { deliveries } = await alice.registry.listDeliveries({}, { headers: alice.headers });
    assert.equal(deliveries.length, 1);
    const [d] = deliveries;
    assert.equal(d.httpStatus, 503);
    assert.equal(d.success, false);
    assert.equal(d.error, "HTTP 503");
    assert.equal(d.responseBody, '{"code":"unavailable","message":"backend busy"}');
    assert.ok(d.latencyMs > 0);
    assert.equal(d.commitId, pushed.commit?.id);
    assert.equal(d.batch, 1n);
    assert.ok(d.attemptTime);
    const carol = clients(emulator, "carol-token");
    assert.deepEqual((await carol.registry.listDeliveries({}, { headers: carol.headers })).deliveries, []);
    assert.ok(
      log.some((l) => l.includes(`commit ${pushed.commit?.id}`) && l.includes("failed (HTTP 503)")),
      log.join("\n"),
    );
  } finally {
    await emulator.close();
  }
});

test("deliveries verify the callback's certificate: without --trust-ca a private CA is refused", async () => {
  const { emulator, due } = await emulatorWithClock(); // no trustCa: system roots only
  try {
    const alice = clients(emulator, "alice-token");
    await alice.webhooks.createWebhook(
      {
        webhookEvent: WebhookEvent.REPOSITORY_PUSH,
        ownerName: "acme",
        repositoryName: "petapis",
        callbackUrl: `${callbackBase}${eventPath}`,
      },
      { headers: alice.headers },
    );
    const before = received.length;
    await alice.registry.push({ ownerName: "acme", repositoryName: "petapis" }, { headers: alice.headers });
    (await waitFor(() => due.shift(), "the batch timer"))();
    const attempt = await waitFor(() => emulator.deliveries()[0], "the attempt");
    assert.equal(attempt.success, false);
    assert.equal(attempt.httpStatus, 0);
    assert.match(attempt.error, /certificate/i);
    assert.match(attempt.error, /not trusted; start the registry with --trust-ca FILE/);
    assert.equal(received.length, before, "nothing reached the callback");
  } finally {
    await emulator.close();
  }
});

test("a delivery to a self-signed callback (protocall listen --tls) says which flag trusts it", async () => {
  const own = await ensureSelfSignedCert(mkdtempSync(join(tmpdir(), "protocall-selfsigned-")));
  const selfSigned = https.createServer({ cert: own.cert, key: own.key }, (req, res) => {
    req.resume();
    res.end();
  });
  await new Promise<void>((r) => selfSigned.listen(0, "127.0.0.1", r));
  const port = (selfSigned.address() as { port: number }).port;
  const { emulator, due } = await emulatorWithClock();
  try {
    const alice = clients(emulator, "alice-token");
    await alice.webhooks.createWebhook(
      {
        webhookEvent: WebhookEvent.REPOSITORY_PUSH,
        ownerName: "acme",
        repositoryName: "petapis",
        callbackUrl: `https://127.0.0.1:${port}${eventPath}`,
      },
      { headers: alice.headers },
    );
    await alice.registry.push({ ownerName: "acme", repositoryName: "petapis" }, { headers: alice.headers });
    (await waitFor(() => due.shift(), "the batch timer"))();
    const attempt = await waitFor(() => emulator.deliveries()[0], "the attempt");
    assert.equal(attempt.success, false);
    assert.match(attempt.error, /^self-signed certificate: .*start the registry with --trust-ca FILE/);
    assert.match(attempt.error, /listener-cert\.pem/);
  } finally {
    await emulator.close();
    await new Promise<void>((r) => selfSigned.close(() => r()));
  }
});

test("webhooks switched off in the configuration: every WebhookService call is refused, pushes queue nothing", async () => {
  const off = await startRegistryEmulator({ config: { ...config, webhooksEnabled: false } });
  try {
    const transport = createConnectTransport({ baseUrl: off.url, httpVersion: "1.1" });
    const headers = { authorization: "Bearer alice-token" };
    const webhooks = createClient(WebhookService, transport);
    for (const call of [
      webhooks.listWebhooks({ ownerName: "acme", repositoryName: "petapis" }, { headers }),
      webhooks.createWebhook(
        {
          webhookEvent: WebhookEvent.REPOSITORY_PUSH,
          ownerName: "acme",
          repositoryName: "petapis",
          callbackUrl: `${callbackBase}${eventPath}`,
        },
        { headers },
      ),
      webhooks.deleteWebhook({ webhookId: "x" }, { headers }),
    ]) {
      await assert.rejects(call, (err: unknown) => {
        const e = ConnectError.from(err);
        assert.equal(e.code, Code.FailedPrecondition);
        assert.match(e.rawMessage, /webhooks are disabled on this instance/);
        return true;
      });
    }
    const pushed = await createClient(RegistryService, transport).push(
      { ownerName: "acme", repositoryName: "petapis" },
      { headers },
    );
    assert.equal(pushed.eventQueued, false);
  } finally {
    await off.close();
  }
});

test("the shipped example configuration is the built-in default, in the documented shape", () => {
  const file = loadRegistryConfig(join(repoRoot, "examples/registry/config.json"));
  assert.deepEqual(file, defaultRegistryConfig);
  assert.deepEqual(file.repositories[0], {
    owner: "acme",
    name: "petapis",
    admins: ["alice"],
    members: ["bob"],
    visibility: "private",
  });
});
