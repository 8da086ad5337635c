// The last delivery attempt per webhook, read from the registry emulator's ListDeliveries (what the
// Webhooks view shows on a webhook): a failed attempt with its reason, then a later successful one
// replacing it; another repository's webhook apart; a registry without the service gives no status.
import assert from "node:assert/strict";
import http from "node:http";
import https from "node:https";
import { after, before, test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { lastDeliveries } from "../../../src/core/webhooks/delivery-status";
import { parseRegistryConfig } from "../../../src/core/webhooks/emulator/config";
import { type RegistryEmulator, startRegistryEmulator } from "../../../src/core/webhooks/emulator/server";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { WebhookEvent, WebhookService } from "../../../src/gen/buf/alpha/registry/v1alpha1/webhook_pb";
import { RegistryService } from "../../../src/gen/protocall/registry/v1/registry_pb";
import { createTestPki, type TestPki } from "../../support/tls";
import { waitFor } from "./support";

const config = parseRegistryConfig({
  users: [{ name: "alice", token: "alice-token" }],
  repositories: [
    { owner: "acme", name: "petapis", admins: ["alice"], members: [] },
    { owner: "acme", name: "other", admins: ["alice"], members: [] },
  ],
});
const eventPath = "/buf.alpha.webhook.v1alpha1.EventService/Event";
const headers = { authorization: "Bearer alice-token" };
let pki: TestPki;
let emulator: RegistryEmulator;
let callback: https.Server;
let up = false;
const due: (() => void)[] = [];

before(async () => {
  pki = await createTestPki();
  // The callback answers 503 until `up`, then 200.
  callback = https.createServer({ cert: pki.server.cert, key: pki.server.key }, (req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(up ? 200 : 503);
      res.end(up ? "" : "listener not ready");
    });
  });
  await new Promise<void>((r) => callback.listen(0, "127.0.0.1", r));
  emulator = await startRegistryEmulator({
    config,
    tls: { cert: pki.server.cert, key: pki.server.key },
    trustCa: pki.ca.cert,
    setTimer: (fn) => {
      due.push(fn);
      return { cancel() {} };
    },
  });
});
after(async () => {
  await emulator.close();
  closePostConnections();
  await new Promise<void>((r) => callback.close(() => r()));
});

const options = () => ({ baseUrl: emulator.url, token: "alice-token", ca: pki.ca.cert });

async function pushAndDeliver(repository: string, attempts: number): Promise<void> {
  const transport = createConnectTransport({
    baseUrl: emulator.url,
    httpVersion: "1.1",
    nodeOptions: { ca: pki.ca.cert },
  });
  await createClient(RegistryService, transport).push(
    { ownerName: "acme", repositoryName: repository },
    { headers },
  );
  (await waitFor(() => due.shift(), "the batch timer"))();
  await waitFor(() => (emulator.deliveries().length >= attempts ? true : undefined), "the attempt");
}

test("a failed delivery, then a successful one, as the last delivery of each webhook", async () => {
  const transport = createConnectTransport({
    baseUrl: emulator.url,
    httpVersion: "1.1",
    nodeOptions: { ca: pki.ca.cert },
  });
  const port = (callback.address() as { port: number }).port;
  const webhooks = createClient(WebhookService, transport);
  const ids: Record<string, string> = {};
  for (const repository of ["petapis", "other"]) {
    const created = await webhooks.createWebhook(
      {
        webhookEvent: WebhookEvent.REPOSITORY_PUSH,
        ownerName: "acme",
        repositoryName: repository,
        callbackUrl: `https://127.0.0.1:${port}${eventPath}`,
      },
      { headers },
    );
    ids[repository] = created.webhook?.webhookId ?? "";
  }
  assert.equal(await lastDeliveries(options(), "acme", "petapis").then((m) => m?.size), 0);

  await pushAndDeliver("petapis", 1);
  const failed = (await lastDeliveries(options(), "acme", "petapis"))?.get(ids.petapis);
  assert.ok(failed, "no last delivery for the webhook");
  assert.equal(failed.success, false);
  assert.equal(failed.httpStatus, 503);
  assert.equal(failed.error, "HTTP 503");
  assert.match(failed.attemptTime ?? "", /^\d{4}-\d\d-\d\dT/);
  assert.equal(await lastDeliveries(options(), "acme", "other").then((m) => m?.size), 0);

  up = true;
  await pushAndDeliver("petapis", 2);
  const last = await lastDeliveries(options(), "acme", "petapis");
  assert.equal(last?.size, 1);
  const ok = last?.get(ids.petapis);
  assert.equal(ok?.success, true);
  assert.equal(ok?.httpStatus, 200);
  assert.ok((ok?.id ?? 0) > failed.id);
});

test("a wrong token is an error that names the repository", async () => {
  await assert.rejects(
    lastDeliveries({ ...options(), token: "nope" }, "acme", "petapis"),
    /cannot read the deliveries of acme\/petapis: /,
  );
});

test("a registry without ListDeliveries (404) has no delivery status", async () => {
  const plain = http.createServer((req, res) => {
    req.resume();
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => plain.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${(plain.address() as { port: number }).port}`;
    assert.equal(await lastDeliveries({ baseUrl: url, token: "t" }, "acme", "petapis"), undefined);
  } finally {
    await new Promise<void>((r) => plain.close(() => r()));
  }
});
