import assert from "node:assert/strict";
import http from "node:http";
import { after, before, test } from "node:test";
import { createWebhookClient } from "../../../src/core/webhooks/client";
import { closePostConnections } from "../../../src/core/webhooks/http-post";
import { accessFor } from "../../support/registry-access";

// A registry stand-in on loopback that pages its answers and spells keys both ways.
const requests: { path: string; auth: string; body: Record<string, unknown> }[] = [];
let server: http.Server;
let base = "";

before(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString() || "{}") as Record<string, unknown>;
      requests.push({ path: req.url ?? "", auth: req.headers.authorization ?? "", body });
      res.writeHead(200, { "content-type": "application/json" });
      const page = String(body.page_token ?? "");
      const hook = (n: number) => ({
        event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
        webhookId: `w${n}`,
        createTime: "2024-01-01T00:00:00.123Z",
        updateTime: "2024-01-01T00:00:00.123Z",
        repository_name: "petapis",
        owner_name: "acme",
        callbackUrl: "https://x.example.com/buf.alpha.webhook.v1alpha1.EventService/Event",
        futureField: true,
      });
      if (page === "") res.end(JSON.stringify({ webhooks: [hook(1), hook(2)], next_page_token: "p2" }));
      else if (page === "p2") res.end(JSON.stringify({ webhooks: [hook(3)], nextPageToken: "p3" }));
      else res.end(JSON.stringify({ webhooks: [hook(4)] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

after(async () => {
  closePostConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

test("list follows next_page_token to the end and accepts both key spellings", async () => {
  const hooks = await createWebhookClient({
    baseUrl: base,
    access: accessFor(base, "tok"),
    prefix: "acme",
  }).listWebhooks("acme", "petapis");
  assert.deepEqual(
    hooks.map((h) => [h.webhookId, h.ownerName, h.repositoryName]),
    [
      ["w1", "acme", "petapis"],
      ["w2", "acme", "petapis"],
      ["w3", "acme", "petapis"],
      ["w4", "acme", "petapis"],
    ],
  );
  assert.equal(requests.length, 3);
  for (const r of requests) {
    assert.equal(r.path, "/acme.alpha.registry.v1alpha1.WebhookService/ListWebhooks");
    assert.equal(r.auth, "Bearer tok");
    assert.equal(r.body.owner_name, "acme");
    assert.equal(r.body.repository_name, "petapis");
  }
  assert.deepEqual(
    requests.map((r) => r.body.page_token),
    [undefined, "p2", "p3"],
  );
});
