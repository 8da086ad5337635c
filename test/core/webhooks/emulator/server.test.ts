import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createWebhookClient } from "../../../../src/core/webhooks/client";
import { loadRegistryConfig, parseRegistryConfig } from "../../../../src/core/webhooks/emulator/config";
import { type RegistryEmulator, startRegistryEmulator } from "../../../../src/core/webhooks/emulator/server";
import { WebhookError } from "../../../../src/core/webhooks/errors";
import { closePostConnections, post } from "../../../../src/core/webhooks/http-post";
import { type Listener, startListener } from "../../../../src/core/webhooks/listener";
import { EventStore } from "../../../../src/core/webhooks/store";
import { RegistryService } from "../../../../src/gen/protocall/registry/v1/registry_pb";
import { accessFor } from "../../../support/registry-access";
import { createTestPki, type TestPki } from "../../../support/tls";
import { waitFor } from "../support";

const config = parseRegistryConfig({
  users: [
    { name: "alice", token: "alice-token" },
    { name: "bob", token: "bob-token" },
    { name: "carol", token: "carol-token" },
  ],
  repositories: [
    { owner: "acme", name: "petapis", admins: ["alice"], members: ["bob"] },
    { owner: "acme", name: "orders", admins: ["alice"], members: [] },
    { owner: "acme", name: "third", admins: ["alice"], members: [] },
  ],
  webhooksEnabled: true,
});

const INTERVAL = 1000;
let pki: TestPki;
let emulator: RegistryEmulator;
let store: EventStore;
let listener: Listener;
let statePath: string;

before(async () => {
  pki = await createTestPki();
  const dir = mkdtempSync(join(tmpdir(), "protocall-emulator-"));
  statePath = join(dir, "state.json");
  store = await EventStore.open(join(dir, "events.store"));
  listener = await startListener({ store, tls: { cert: pki.server.cert, key: pki.server.key } });
  emulator = await startRegistryEmulator({
    config,
    statePath,
    tls: { cert: pki.server.cert, key: pki.server.key },
    trustCa: pki.ca.cert,
    batchIntervalMs: INTERVAL,
    batchSize: 20,
  });
});

after(async () => {
  await emulator.close();
  await listener.close();
  await store.close();
  closePostConnections();
});

const client = (token: string, base = emulator.url) =>
  createWebhookClient({ baseUrl: base, access: accessFor(base, token, pki.ca.cert) });

function pusher() {
  return createClient(
    RegistryService,
    createConnectTransport({ baseUrl: emulator.url, httpVersion: "1.1", nodeOptions: { ca: pki.ca.cert } }),
  ).push;
}

async function push(repository: string, tags: string[] = [], token = "bob-token") {
  const p = pusher();
  return p(
    { ownerName: "acme", repositoryName: repository, tags },
    { headers: { authorization: `Bearer ${token}` } },
  );
}

async function rejects(promise: Promise<unknown>, kind: string, message: RegExp) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof WebhookError, String(err));
    assert.equal(err.kind, kind);
    assert.match(err.message, message);
    return true;
  });
}

test("create: an Admin may, a non-Admin may not, a second webhook is refused, bad tokens are refused", async () => {
  const alice = client("alice-token");
  const created = await alice.createWebhook({
    owner: "acme",
    repository: "petapis",
    callbackUrl: listener.callbackUrl,
  });
  assert.equal(created.ownerName, "acme");
  assert.equal(created.repositoryName, "petapis");
  assert.equal(created.callbackUrl, listener.callbackUrl);
  assert.ok(created.webhookId);
  assert.ok(created.createTime && created.updateTime);
  await rejects(
    client("bob-token").createWebhook({
      owner: "acme",
      repository: "orders",
      callbackUrl: listener.callbackUrl,
    }),
    "permission_denied",
    /needs the Admin role on acme\/orders/,
  );
  await rejects(
    alice.createWebhook({ owner: "acme", repository: "petapis", callbackUrl: listener.callbackUrl }),
    "already_exists",
    /delete the existing one first.*protocall webhook list --owner acme --repository petapis/,
  );
  await rejects(
    client("wrong").listWebhooks("acme", "petapis"),
    "unauthenticated",
    /PROTOCALL_TOKEN, BUF_TOKEN/,
  );
  await rejects(alice.listWebhooks("acme", "nope"), "not_found", /not found/);
  await rejects(alice.deleteWebhook("no-such-id"), "not_found", /webhook "no-such-id" not found/);
});

test("the registry itself refuses each callback URL rule with invalid_argument", async () => {
  const path = "/buf.alpha.webhook.v1alpha1.EventService/Event";
  const bad = [
    [`http://127.0.0.1:1${path}`, /https scheme/],
    [`https://127.0.0.1:1${path}?q=1`, /query/],
    [`https://127.0.0.1:1${path}#f`, /fragment/],
    ["https://127.0.0.1:1/hook", /must end with/],
  ] as const;
  for (const [url, message] of bad) {
    const res = await post(
      `${emulator.url}/buf.alpha.registry.v1alpha1.WebhookService/CreateWebhook`,
      Buffer.from(
        JSON.stringify({
          webhook_event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
          owner_name: "acme",
          repository_name: "third",
          callback_url: url,
        }),
      ),
      { "content-type": "application/json", authorization: "Bearer alice-token" },
      { ca: pki.ca.cert },
    );
    assert.equal(res.status, 400, url);
    const body = JSON.parse(res.body.toString()) as { code: string; message: string };
    assert.equal(body.code, "invalid_argument");
    assert.match(body.message, message);
  }
  // The client checks the same rules before sending anything.
  await rejects(
    client("alice-token").createWebhook({ owner: "acme", repository: "third", callbackUrl: "http://x/y?z" }),
    "invalid_argument",
    /https scheme.*query.*must end with/,
  );
});

test("push: delivered within one batch interval, with the commit's author and tags", async () => {
  const started = Date.now();
  const before = store.count();
  const res = await push("petapis", ["v1.2.3"]);
  assert.equal(res.eventQueued, true);
  await waitFor(() => store.count() > before, "the delivery", 60_000);
  const elapsed = Date.now() - started;
  // Not before one interval; no upper bound (a busy machine may be slow): that the first batch
  // carries the event is checked below, without a clock.
  assert.ok(elapsed >= INTERVAL - 20, `delivered after ${elapsed} ms`);
  const last = (await store.list()).at(-1)!;
  const push0 = (last.event as { payload: { repositoryPush: Record<string, Record<string, unknown>> } })
    .payload.repositoryPush;
  assert.equal(push0.repositoryCommit.author, "bob");
  assert.equal(push0.repositoryCommit.id, res.commit?.id);
  assert.equal((push0.repositoryCommit.tags as { name: string }[])[0].name, "v1.2.3");
  assert.equal(push0.repository.name, "petapis");
  assert.equal(push0.repository.ownerName, "acme");
  assert.ok(push0.eventTime);
  const attempt = await waitFor(
    () => emulator.deliveries().find((a) => a.commitId === res.commit?.id),
    "the attempt",
  );
  assert.equal(attempt.success, true);
  assert.equal(attempt.httpStatus, 200);
  assert.equal(attempt.batch, 1, "the first batch after the push carried it");
});

test("45 pushes are delivered in batches of 20, 20 and 5, in push order", async () => {
  // Its own emulator whose batch clock the test advances, so that slow pushes on a busy machine
  // cannot split the batches differently (the real timer is tested with the deliverer).
  const due: { fn: () => void; ms: number }[] = [];
  const own = await startRegistryEmulator({
    config,
    tls: { cert: pki.server.cert, key: pki.server.key },
    trustCa: pki.ca.cert,
    batchIntervalMs: 5000,
    batchSize: 20,
    setTimer: (fn, ms) => {
      due.push({ fn, ms });
      return { cancel() {} };
    },
  });
  try {
    await createWebhookClient({
      baseUrl: own.url,
      access: accessFor(own.url, "alice-token", pki.ca.cert),
    }).createWebhook({
      owner: "acme",
      repository: "third",
      callbackUrl: listener.callbackUrl,
    });
    const p = createClient(
      RegistryService,
      createConnectTransport({ baseUrl: own.url, httpVersion: "1.1", nodeOptions: { ca: pki.ca.cert } }),
    );
    const before = store.count();
    // Pushed concurrently; push order is the order the registry recorded them (commit sequence ids).
    const pushed = await Promise.all(
      Array.from({ length: 45 }, () =>
        p.push(
          { ownerName: "acme", repositoryName: "third" },
          { headers: { authorization: "Bearer alice-token" } },
        ),
      ),
    );
    const commits = pushed
      .map((r) => r.commit!)
      .sort((a, b) => Number(a.commitSequenceId - b.commitSequenceId))
      .map((c) => c.id);
    for (const expected of [20, 40, 45]) {
      const timer = await waitFor(() => due.shift(), "the next batch timer");
      assert.equal(timer.ms, 5000);
      assert.equal(
        own.deliveries().length,
        expected === 20 ? 0 : expected === 40 ? 20 : 40,
        "nothing sent early",
      );
      timer.fn(); // one batch interval elapses
      await waitFor(() => own.deliveries().length === expected, `${expected} attempts`);
    }
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(due.length, 0, "no timer once the queue is empty");
    const sizes = new Map<number, number>();
    for (const a of own.deliveries()) sizes.set(a.batch, (sizes.get(a.batch) ?? 0) + 1);
    assert.deepEqual([...sizes.values()], [20, 20, 5]);
    const delivered = (await store.list())
      .slice(before)
      .map(
        (d) =>
          (d.event as { payload: { repositoryPush: { repositoryCommit: { id: string } } } }).payload
            .repositoryPush.repositoryCommit.id,
      );
    assert.deepEqual(delivered, commits);
  } finally {
    await own.close();
  }
});

test("events pending when the webhook is deleted are still delivered; delete returns {} and list is then empty", async () => {
  const alice = client("alice-token");
  const [hook] = await alice.listWebhooks("acme", "petapis");
  const before = store.count();
  await push("petapis");
  await push("petapis");
  const res = await post(
    `${emulator.url}/buf.alpha.registry.v1alpha1.WebhookService/DeleteWebhook`,
    Buffer.from(JSON.stringify({ webhook_id: hook.webhookId })),
    { "content-type": "application/json", authorization: "Bearer alice-token" },
    { ca: pki.ca.cert },
  );
  assert.equal(res.status, 200);
  assert.equal(res.body.toString(), "{}");
  assert.deepEqual(await alice.listWebhooks("acme", "petapis"), []);
  await waitFor(() => store.count() === before + 2, "the pending deliveries", 60_000);
  const after = await push("petapis");
  assert.equal(after.eventQueued, false);
});

test("webhooks and commits persist in the state file across a restart", async () => {
  const alice = client("alice-token");
  const hook = await alice.createWebhook({
    owner: "acme",
    repository: "orders",
    callbackUrl: listener.callbackUrl,
  });
  const pushed = await push("orders", ["v9"], "alice-token");
  await emulator.close();
  // One emulator per state file: the restarted one takes over the file the first one released.
  emulator = await startRegistryEmulator({
    config,
    statePath,
    tls: { cert: pki.server.cert, key: pki.server.key },
    trustCa: pki.ca.cert,
    batchIntervalMs: INTERVAL,
  });
  const list = await client("alice-token").listWebhooks("acme", "orders");
  assert.deepEqual(
    list.map((w) => w.webhookId),
    [hook.webhookId],
  );
  // The next commit continues the repository's history.
  const next = await push("orders", [], "alice-token");
  assert.equal(next.commit?.commitSequenceId, (pushed.commit?.commitSequenceId ?? 0n) + 1n);
});

test("disabled webhooks: every WebhookService call says so", async () => {
  const disabled = await startRegistryEmulator({ config, webhooksEnabled: false });
  try {
    await rejects(
      createWebhookClient({
        baseUrl: disabled.url,
        access: accessFor(disabled.url, "alice-token"),
      }).listWebhooks("acme", "petapis"),
      "webhooks_disabled",
      /webhooks are disabled.*ask your registry admin to enable them/,
    );
  } finally {
    await disabled.close();
  }
});

test("an unreachable registry names the URL and the network error", async () => {
  await rejects(
    createWebhookClient({
      baseUrl: "http://127.0.0.1:1",
      access: accessFor("http://127.0.0.1:1", "t"),
    }).listWebhooks("acme", "petapis"),
    "unreachable",
    /cannot reach the registry at http:\/\/127\.0\.0\.1:1\/buf\.alpha\.registry\.v1alpha1\.WebhookService\/ListWebhooks: .*ECONNREFUSED/,
  );
});

test("config problems name the entry", () => {
  assert.throws(
    () => parseRegistryConfig({ users: [{ name: "a" }] }),
    /users\[0\] \("a"\) needs a non-empty "token"/,
  );
  assert.throws(
    () => parseRegistryConfig({ users: [], repositories: [{ owner: "o", name: "r", admins: ["ghost"] }] }),
    /repositories\[0\] \(o\/r\): "admins" names unknown user "ghost"/,
  );
  // A file that is not JSON is placed by line and column; the tokens around the problem are not quoted.
  const file = join(mkdtempSync(join(tmpdir(), "protocall-config-")), "config.json");
  writeFileSync(file, '{"users": [{"name": "a", "token": "tok-9f8e7d"}]\n  "repositories": []}');
  assert.throws(
    () => loadRegistryConfig(file),
    (err: Error) => {
      assert.match(
        err.message,
        /config\.json is not valid JSON \(line 2, column 3: unexpected "\\"": expected ',' or '}' in the object\); fix the file/,
      );
      assert.doesNotMatch(err.message, /tok-9f8e7d/);
      return true;
    },
  );
});
