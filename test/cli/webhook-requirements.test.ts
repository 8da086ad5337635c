// Webhook CLI behaviour not covered by the other CLI tests: --remote as a bare host (https), the token
// order PROTOCALL_TOKEN > BUF_TOKEN > netrc, the beta spelling for create and delete, send-test's wire
// form, registry serve --host/--port/--batch-size/--state, listen --host/--port, registry push roles.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { EventRequestSchema } from "../../src/gen/buf/alpha/webhook/v1alpha1/event_pb";
import { RegistryService } from "../../src/gen/protocall/registry/v1/registry_pb";
import { type CliServer, startCliServer, waitFor } from "../core/webhooks/support";
import { runCli } from "../support/cli";
import { createTestPki, type TestPki } from "../support/tls";

let pki: TestPki;
let dir: string;
let config: string;
let registry: CliServer;
let remoteHost: string;

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function serveArgs(port: number, extra: string[] = []): string[] {
  return [
    "registry",
    "serve",
    "--config",
    config,
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--cert",
    pki.server.certPath,
    "--key",
    pki.server.keyPath,
    "--trust-ca",
    pki.ca.certPath,
    "--state",
    join(dir, "state.json"),
    ...extra,
  ];
}

/** Environment with no token source at all except what `extra` sets (HOME without a netrc). */
function tokenEnv(extra: Record<string, string | undefined>, home = join(dir, "empty-home")) {
  return {
    PROTOCALL_TOKEN: undefined,
    BUF_TOKEN: undefined,
    NETRC: undefined,
    HOME: home,
    NODE_EXTRA_CA_CERTS: pki.ca.certPath,
    ...extra,
  };
}

before(async () => {
  pki = await createTestPki();
  dir = mkdtempSync(join(tmpdir(), "protocall-cli-webhook-req-"));
  config = join(dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      users: [
        { name: "alice", token: "alice-token" },
        { name: "bob", token: "bob-token" },
        { name: "carol", token: "carol-token" },
      ],
      repositories: [{ owner: "acme", name: "petapis", admins: ["alice"], members: ["bob"] }],
    }),
  );
  const port = await freePort();
  registry = await startCliServer(serveArgs(port, ["--batch-size", "2", "--batch-interval", "1500ms"]));
  assert.equal(registry.url, `https://127.0.0.1:${port}`);
  remoteHost = `127.0.0.1:${port}`;
});

after(async () => {
  await registry?.stop();
});

const listArgs = () => [
  "webhook",
  "list",
  "--owner",
  "acme",
  "--repository",
  "petapis",
  "--remote",
  remoteHost,
];

test("--remote HOST means https://HOST", async () => {
  const r = await runCli(listArgs(), { env: tokenEnv({ PROTOCALL_TOKEN: "alice-token" }) });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { webhooks: [] });
});

test("token order: PROTOCALL_TOKEN, then BUF_TOKEN, then the netrc password", async () => {
  const home = mkdtempSync(join(tmpdir(), "protocall-home-"));
  const run = (env: Record<string, string | undefined>) => runCli(listArgs(), { env: tokenEnv(env, home) });
  const machine = `machine ${remoteHost}`;
  writeFileSync(join(home, ".netrc"), `${machine} login alice password alice-token\n`);
  assert.equal((await run({})).code, 0, "netrc alone");
  assert.equal((await run({ BUF_TOKEN: "wrong" })).code, 16 * 8, "BUF_TOKEN before netrc");
  assert.equal((await run({ PROTOCALL_TOKEN: "wrong", BUF_TOKEN: "alice-token" })).code, 16 * 8);
  assert.equal((await run({ PROTOCALL_TOKEN: "alice-token", BUF_TOKEN: "wrong" })).code, 0);
  writeFileSync(join(home, ".netrc"), `${machine} login alice password wrong\n`);
  assert.equal((await run({ BUF_TOKEN: "alice-token" })).code, 0, "BUF_TOKEN over netrc");
  assert.equal((await run({})).code, 16 * 8, "the netrc password is used");
  // No flag carries a token.
  for (const flag of ["--token", "--api-token", "--password"]) {
    const r = await runCli([...listArgs(), flag, "alice-token"], { env: tokenEnv({}) });
    assert.equal(r.code, 1, flag);
    assert.match(
      r.stderr,
      new RegExp(`^protocall: unknown flag ${flag}: run \`protocall webhook list --help\``),
    );
    assert.doesNotMatch(r.stderr, /alice-token/, "the value is not echoed");
  }
});

test("beta registry webhook create and delete work as the webhook commands", async () => {
  const env = tokenEnv({ PROTOCALL_TOKEN: "alice-token" });
  const callback = "https://127.0.0.1:9/buf.alpha.webhook.v1alpha1.EventService/Event";
  const created = await runCli(
    [
      "beta",
      "registry",
      "webhook",
      "create",
      "--owner",
      "acme",
      "--repository",
      "petapis",
      "--callback-url",
      callback,
      "--event",
      "WEBHOOK_EVENT_REPOSITORY_PUSH",
      "--remote",
      remoteHost,
    ],
    { env },
  );
  assert.equal(created.code, 0, created.stderr);
  const id = JSON.parse(created.stdout).webhook.webhookId as string;
  const del = await runCli(["beta", "registry", "webhook", "delete", "--id", id, "--remote", remoteHost], {
    env,
  });
  assert.equal(del.code, 0, del.stderr);
  assert.equal(del.stdout, "{}\n");
  const again = await runCli(["beta", "registry", "webhook", "delete", "--id", id, "--remote", remoteHost], {
    env,
  });
  assert.equal(again.code, 5 * 8);
  assert.match(again.stderr, /^protocall: webhook ".*" not found .*list the repository's webhooks/);
  const bare = await runCli(["beta", "registry", "webhook"]);
  assert.equal(bare.code, 1);
  assert.match(bare.stderr, /Usage: protocall beta registry webhook <create\|list\|delete>/);
});

test("registry push: --author and tags; a user who is neither member nor Admin is denied", async () => {
  const push = (token: string, extra: string[] = []) =>
    runCli(
      ["registry", "push", "--remote", registry.url, "--owner", "acme", "--repository", "petapis", ...extra],
      { env: tokenEnv({ PROTOCALL_TOKEN: token }) },
    );
  const ok = await push("bob-token", ["--author", "release-bot", "--tag", "v2"]);
  assert.equal(ok.code, 0, ok.stderr);
  const commit = JSON.parse(ok.stdout).commit;
  assert.equal(commit.author, "release-bot");
  assert.deepEqual(
    commit.tags.map((t: { name: string }) => t.name),
    ["v2"],
  );
  const denied = await push("carol-token");
  assert.equal(denied.code, 7 * 8);
  assert.match(
    denied.stderr,
    /^protocall: .*carol is neither a member nor an Admin of repository acme\/petapis/,
  );
  assert.match(denied.stderr, /add "carol" to its "members" in the registry config/);
  const unknown = await push("who-token");
  assert.equal(unknown.code, 16 * 8);
  assert.match(unknown.stderr, /check PROTOCALL_TOKEN, BUF_TOKEN or ~\/\.netrc/);
  const port = await freePort();
  const unreachable = await runCli(
    [
      "registry",
      "push",
      "--remote",
      `http://127.0.0.1:${port}`,
      "--owner",
      "acme",
      "--repository",
      "petapis",
    ],
    { env: tokenEnv({ PROTOCALL_TOKEN: "bob-token" }) },
  );
  assert.equal(unreachable.code, 14 * 8);
  assert.match(
    unreachable.stderr,
    new RegExp(
      `^protocall: cannot reach the registry emulator at http://127\\.0\\.0\\.1:${port}: .*check --remote`,
    ),
  );
});

test("send-test posts a binary EventRequest with Content-Type application/proto, synthetic or from --data", async () => {
  const got: { type: string; version: string; body: Buffer }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({
        type: req.headers["content-type"] ?? "",
        version: String(req.headers["connect-protocol-version"]),
        body: Buffer.concat(chunks),
      });
      res.writeHead(200, { "content-type": "application/proto" });
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const to = `http://127.0.0.1:${(server.address() as { port: number }).port}/buf.alpha.webhook.v1alpha1.EventService/Event`;
  try {
    const synthetic = await runCli(["webhook", "send-test", "--to", to]);
    assert.equal(synthetic.code, 0, synthetic.stderr);
    const data = join(dir, "event.json");
    writeFileSync(
      data,
      JSON.stringify({
        event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
        payload: {
          repositoryPush: { repositoryCommit: { id: "c-42", author: "dora", tags: [{ name: "v9" }] } },
        },
      }),
    );
    const fromFile = await runCli(["webhook", "send-test", "--to", to, "--data", data]);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.equal(got.length, 2);
    for (const g of got) {
      assert.equal(g.type, "application/proto");
      assert.equal(g.version, "1");
    }
    const first = fromBinary(EventRequestSchema, got[0].body);
    assert.equal(first.payload?.payload.case, "repositoryPush");
    const firstPush = first.payload?.payload.value;
    assert.equal(firstPush?.repository?.name, "petapis");
    assert.equal(firstPush?.repositoryCommit?.author, "alice");
    const second = fromBinary(EventRequestSchema, got[1].body).payload?.payload.value;
    assert.equal(second?.repositoryCommit?.id, "c-42");
    assert.equal(second?.repositoryCommit?.author, "dora");
    assert.equal(second?.repositoryCommit?.tags[0].name, "v9");
    const notEvent = join(dir, "not-event.json");
    writeFileSync(notEvent, JSON.stringify({ payload: { nope: 1 } }));
    const bad = await runCli(["webhook", "send-test", "--to", to, "--data", notEvent]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /is not a buf\.alpha\.webhook\.v1alpha1\.EventRequest/);
    assert.equal(got.length, 2, "nothing sent for a bad --data file");
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test("listen --host/--port, registry --batch-size: 5 pushes arrive in batches of 2, 2 and 1", {
  timeout: 60_000,
}, async () => {
  const port = await freePort();
  const listener = await startCliServer([
    "listen",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--cert",
    pki.server.certPath,
    "--key",
    pki.server.keyPath,
    "--store",
    join(dir, "batches.store"),
  ]);
  try {
    assert.equal(listener.url, `https://127.0.0.1:${port}/buf.alpha.webhook.v1alpha1.EventService/Event`);
    const env = tokenEnv({ PROTOCALL_TOKEN: "alice-token" });
    const created = await runCli(
      [
        "webhook",
        "create",
        "--owner",
        "acme",
        "--repository",
        "petapis",
        "--callback-url",
        listener.url,
        "--remote",
        remoteHost,
      ],
      { env },
    );
    assert.equal(created.code, 0, created.stderr);
    // Five pushes at once (well inside one batch interval), from this process.
    const pusher = createClient(
      RegistryService,
      createConnectTransport({ baseUrl: registry.url, httpVersion: "1.1", nodeOptions: { ca: pki.ca.cert } }),
    );
    const pushed = await Promise.all(
      Array.from({ length: 5 }, () =>
        pusher.push(
          { ownerName: "acme", repositoryName: "petapis" },
          { headers: { authorization: "Bearer bob-token" }, timeoutMs: 10_000 },
        ),
      ),
    );
    const ids = new Set(pushed.map((p) => p.commit?.id));
    await waitFor(
      () => listener.lines.filter((l) => [...ids].some((id) => id && l.includes(id))).length === 5,
      "five deliveries",
      30_000,
    );
    const deliveries = await runCli(
      ["registry", "deliveries", "--remote", remoteHost, "--owner", "acme", "--repository", "petapis"],
      { env },
    );
    assert.equal(deliveries.code, 0, deliveries.stderr);
    const rows = (JSON.parse(deliveries.stdout).deliveries as { commitId: string; batch: string }[]).filter(
      (d) => ids.has(d.commitId),
    );
    const sizes = new Map<string, number>();
    for (const d of rows) sizes.set(d.batch, (sizes.get(d.batch) ?? 0) + 1);
    assert.deepEqual([...sizes.values()], [2, 2, 1]);
  } finally {
    await listener.stop();
  }
});

test("registry serve --state: webhooks and commits survive a restart", { timeout: 60_000 }, async () => {
  const env = tokenEnv({ PROTOCALL_TOKEN: "alice-token" });
  const before = await runCli(listArgs(), { env });
  assert.equal(before.code, 0, before.stderr);
  const hooks = JSON.parse(before.stdout).webhooks as { webhookId: string }[];
  assert.equal(hooks.length, 1, "the webhook created by the batch test");
  const pushed = await runCli(
    ["registry", "push", "--remote", remoteHost, "--owner", "acme", "--repository", "petapis"],
    { env },
  );
  const sequence = Number(JSON.parse(pushed.stdout).commit.commitSequenceId);
  assert.equal(await registry.stop(), 0);
  registry = await startCliServer(serveArgs(Number(remoteHost.split(":")[1])));
  const afterRestart = await runCli(listArgs(), { env });
  assert.equal(afterRestart.code, 0, afterRestart.stderr);
  assert.deepEqual(
    JSON.parse(afterRestart.stdout).webhooks.map((w: { webhookId: string }) => w.webhookId),
    hooks.map((w) => w.webhookId),
  );
  const next = await runCli(
    ["registry", "push", "--remote", remoteHost, "--owner", "acme", "--repository", "petapis"],
    { env },
  );
  assert.equal(next.code, 0, next.stderr);
  assert.equal(Number(JSON.parse(next.stdout).commit.commitSequenceId), sequence + 1);
});

test("listen --tls certificate trusted with registry serve --trust-ca: the delivery arrives; replay --to any URL", {
  timeout: 60_000,
}, async () => {
  const xdg = mkdtempSync(join(tmpdir(), "protocall-xdg-"));
  const store = join(xdg, "events.store");
  const listener = await startCliServer(["listen", "--tls", "--store", store], { XDG_CONFIG_HOME: xdg });
  const certPath = join(xdg, "protocall", "listener-cert.pem");
  const local = await startCliServer([
    "registry",
    "serve",
    "--batch-interval",
    "200ms",
    "--trust-ca",
    certPath,
  ]);
  const got: { type: string; body: Buffer }[] = [];
  const capture = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ type: req.headers["content-type"] ?? "", body: Buffer.concat(chunks) });
      res.writeHead(200);
      res.end();
    });
  });
  await new Promise<void>((r) => capture.listen(0, "127.0.0.1", r));
  try {
    const env = tokenEnv({ PROTOCALL_TOKEN: "alice-token" });
    const created = await runCli(
      [
        "webhook",
        "create",
        "--owner",
        "acme",
        "--repository",
        "petapis",
        "--callback-url",
        listener.url,
        "--remote",
        local.url,
      ],
      { env },
    );
    assert.equal(created.code, 0, created.stderr);
    const pushed = await runCli(
      ["registry", "push", "--remote", local.url, "--owner", "acme", "--repository", "petapis"],
      { env },
    );
    assert.equal(pushed.code, 0, pushed.stderr);
    const commitId = JSON.parse(pushed.stdout).commit.id as string;
    const line = await waitFor(
      () => listener.lines.find((l) => l.includes(commitId)),
      "the delivery",
      20_000,
    );
    const delivered = JSON.parse(line) as { id: number; status: string };
    assert.equal(delivered.status, "accepted");
    const to = `http://127.0.0.1:${(capture.address() as { port: number }).port}/anywhere`;
    const replayed = await runCli(["listen", "replay", String(delivered.id), "--store", store, "--to", to]);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(JSON.parse(replayed.stdout).to, to);
    assert.equal(got.length, 1);
    assert.equal(got[0].type, "application/proto");
    assert.equal(
      fromBinary(EventRequestSchema, got[0].body).payload?.payload.value?.repositoryCommit?.id,
      commitId,
    );
  } finally {
    await Promise.all([listener.stop(), local.stop()]);
    await new Promise<void>((r) => capture.close(() => r()));
  }
});
