// The whole webhook flow through the CLI over HTTPS: `protocall registry serve`, `protocall listen`,
// `protocall webhook …`, `protocall beta registry webhook …`, `protocall registry push`.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type CliServer, startCliServer, waitFor } from "../core/webhooks/support";
import { repoRoot, runCli } from "../support/cli";
import { createTestPki, type TestPki } from "../support/tls";

let pki: TestPki;
let dir: string;
let registry: CliServer;
let listener: CliServer;
let remote: string;
const env = (token: string) => ({
  PROTOCALL_TOKEN: token,
  BUF_TOKEN: "",
  NODE_EXTRA_CA_CERTS: pki.ca.certPath,
});

before(async () => {
  pki = await createTestPki();
  dir = mkdtempSync(join(tmpdir(), "protocall-cli-webhook-"));
  const config = join(dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      users: [
        { name: "alice", token: "alice-token" },
        { name: "bob", token: "bob-token" },
      ],
      repositories: [{ owner: "acme", name: "petapis", admins: ["alice"], members: ["bob"] }],
      webhooksEnabled: true,
    }),
  );
  [registry, listener] = await Promise.all([
    startCliServer([
      "registry",
      "serve",
      "--config",
      config,
      "--state",
      join(dir, "state.json"),
      "--cert",
      pki.server.certPath,
      "--key",
      pki.server.keyPath,
      "--trust-ca",
      pki.ca.certPath,
      "--batch-interval",
      "300ms",
      "--verbose",
    ]),
    startCliServer([
      "listen",
      "--cert",
      pki.server.certPath,
      "--key",
      pki.server.keyPath,
      "--store",
      join(dir, "events.store"),
    ]),
  ]);
  remote = registry.url;
});

after(async () => {
  await Promise.all([registry?.stop(), listener?.stop()]);
});

test("create, list, push → delivered, delete, over HTTPS", async () => {
  assert.match(remote, /^https:\/\/127\.0\.0\.1:\d+$/);
  assert.match(
    listener.url,
    /^https:\/\/127\.0\.0\.1:\d+\/buf\.alpha\.webhook\.v1alpha1\.EventService\/Event$/,
  );
  const create = await runCli(
    [
      "webhook",
      "create",
      "--owner",
      "acme",
      "--repository",
      "petapis",
      "--callback-url",
      listener.url,
      "--event",
      "WEBHOOK_EVENT_REPOSITORY_PUSH",
      "--remote",
      remote,
    ],
    { env: env("alice-token") },
  );
  assert.equal(create.code, 0, create.stderr);
  const webhook = JSON.parse(create.stdout).webhook;
  assert.equal(webhook.callbackUrl, listener.url);
  assert.equal(webhook.event, "WEBHOOK_EVENT_REPOSITORY_PUSH");
  assert.match(create.stdout, /^\{\n {2}"webhook": \{\n {4}"/);

  const list = await runCli(
    ["beta", "registry", "webhook", "list", "--owner", "acme", "--repository", "petapis", "--remote", remote],
    { env: env("alice-token") },
  );
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(
    JSON.parse(list.stdout).webhooks.map((w: { webhookId: string }) => w.webhookId),
    [webhook.webhookId],
  );

  const pushed = await runCli(
    [
      "registry",
      "push",
      "--remote",
      remote,
      "--owner",
      "acme",
      "--repository",
      "petapis",
      "--tag",
      "v1",
      "--tag",
      "latest",
    ],
    { env: env("bob-token") },
  );
  assert.equal(pushed.code, 0, pushed.stderr);
  const commit = JSON.parse(pushed.stdout).commit;
  assert.equal(commit.author, "bob");
  assert.deepEqual(
    commit.tags.map((t: { name: string }) => t.name),
    ["v1", "latest"],
  );
  const line = await waitFor(
    () => listener.lines.find((l) => l.includes(commit.id)),
    "the event line",
    15_000,
  );
  const delivered = JSON.parse(line);
  assert.equal(delivered.status, "accepted");
  assert.equal(delivered.event.payload.repositoryPush.repositoryCommit.id, commit.id);
  await waitFor(
    () => registry.lines.some((l) => l.includes(`commit ${commit.id}`) && l.includes("HTTP 200")),
    "the verbose delivery log",
  );
  // --cacert instead of NODE_EXTRA_CA_CERTS.
  const deliveries = await runCli(
    ["registry", "deliveries", "--remote", remote, "--cacert", pki.ca.certPath],
    {
      env: { ...env("bob-token"), NODE_EXTRA_CA_CERTS: undefined },
    },
  );
  assert.equal(deliveries.code, 0, deliveries.stderr);
  assert.equal(JSON.parse(deliveries.stdout).deliveries.at(-1).httpStatus, 200);
  // Latencies in tenths of a millisecond, not 18.443280999999843.
  for (const d of JSON.parse(deliveries.stdout).deliveries as { latencyMs: number }[]) {
    assert.equal(d.latencyMs, Math.round(d.latencyMs * 10) / 10, `latencyMs ${d.latencyMs}`);
  }

  const del = await runCli(["webhook", "delete", "--id", webhook.webhookId, "--remote", remote], {
    env: env("alice-token"),
  });
  assert.equal(del.code, 0, del.stderr);
  assert.equal(del.stdout.trim(), "{}");
  const empty = await runCli(
    ["webhook", "list", "--owner", "acme", "--repository", "petapis", "--remote", remote],
    { env: env("alice-token") },
  );
  assert.deepEqual(JSON.parse(empty.stdout), { webhooks: [] });
});

test("refusals: non-Admin, second webhook, callback URL rules, unknown token, missing token", async () => {
  const args = (url: string) => [
    "webhook",
    "create",
    "--owner",
    "acme",
    "--repository",
    "petapis",
    "--callback-url",
    url,
    "--remote",
    remote,
  ];
  const denied = await runCli(args(listener.url), { env: env("bob-token") });
  assert.equal(denied.code, 7 * 8);
  assert.match(denied.stderr, /^protocall: permission denied .*needs the Admin role on acme\/petapis/);

  const first = await runCli(args(listener.url), { env: env("alice-token") });
  assert.equal(first.code, 0, first.stderr);
  const second = await runCli(args(listener.url), { env: env("alice-token") });
  assert.equal(second.code, 6 * 8);
  assert.match(second.stderr, /already has a webhook.*delete the existing one first.*protocall webhook list/);

  for (const [url, message] of [
    [listener.url.replace("https:", "http:"), /must use the https scheme/],
    [`${listener.url}?x=1`, /must not have a query/],
    [`${listener.url}#frag`, /must not have a fragment/],
    [listener.url.replace("/Event", "/Events"), /must end with the Event method's full path/],
  ] as const) {
    const r = await runCli(args(url), { env: env("alice-token") });
    assert.equal(r.code, 1, url);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.split("\n").filter(Boolean).length, 1);
  }

  const untrusted = await runCli(
    ["webhook", "list", "--owner", "acme", "--repository", "petapis", "--remote", remote],
    {
      env: { ...env("alice-token"), NODE_EXTRA_CA_CERTS: undefined },
    },
  );
  assert.equal(untrusted.code, 14 * 8);
  assert.match(
    untrusted.stderr,
    /^protocall: cannot reach the registry at https:.*certificate.*check --remote/,
  );
  const trusted = await runCli(
    [
      "webhook",
      "list",
      "--owner",
      "acme",
      "--repository",
      "petapis",
      "--remote",
      remote,
      "--cacert",
      pki.ca.certPath,
    ],
    { env: { ...env("alice-token"), NODE_EXTRA_CA_CERTS: undefined } },
  );
  assert.equal(trusted.code, 0, trusted.stderr);

  const unknown = await runCli(
    ["webhook", "list", "--owner", "acme", "--repository", "petapis", "--remote", remote],
    { env: env("nope") },
  );
  assert.equal(unknown.code, 16 * 8);
  assert.match(unknown.stderr, /did not accept the token.*PROTOCALL_TOKEN, BUF_TOKEN/);

  const home = mkdtempSync(join(tmpdir(), "protocall-home-"));
  const none = await runCli(
    ["webhook", "list", "--owner", "acme", "--repository", "petapis", "--remote", remote],
    {
      env: {
        PROTOCALL_TOKEN: undefined,
        BUF_TOKEN: undefined,
        HOME: home,
        NETRC: undefined,
        NODE_EXTRA_CA_CERTS: pki.ca.certPath,
      },
    },
  );
  assert.equal(none.code, 1);
  assert.match(none.stderr, /^protocall: no API token for 127\.0\.0\.1:\d+: set PROTOCALL_TOKEN/);
  // The netrc entry the hint names is the one looked up first: the host with its port.
  const port = new URL(remote.includes("://") ? remote : `https://${remote}`).port;
  assert.match(
    none.stderr,
    new RegExp(`add "machine 127\\.0\\.0\\.1:${port} password <token>" to ~/\\.netrc`),
  );

  // The netrc password for the host with its port is used when no variable is set (as buf reads it:
  // an entry for the host alone is another machine).
  writeFileSync(
    join(home, ".netrc"),
    `machine 127.0.0.1 login alice password wrong\nmachine 127.0.0.1:${port} login alice password alice-token\n`,
  );
  const viaNetrc = await runCli(
    ["webhook", "list", "--owner", "acme", "--repository", "petapis", "--remote", remote],
    {
      env: {
        PROTOCALL_TOKEN: undefined,
        BUF_TOKEN: undefined,
        HOME: home,
        NETRC: undefined,
        NODE_EXTRA_CA_CERTS: pki.ca.certPath,
      },
    },
  );
  assert.equal(viaNetrc.code, 0, viaNetrc.stderr);
  assert.equal(JSON.parse(viaNetrc.stdout).webhooks.length, 1);
});

test("webhooks disabled on the instance: a clear error", async () => {
  const disabled = await startCliServer(["registry", "serve", "--webhooks-disabled"]);
  try {
    const r = await runCli(
      ["webhook", "list", "--owner", "acme", "--repository", "petapis", "--remote", disabled.url],
      { env: env("alice-token") },
    );
    assert.equal(r.code, 9 * 8);
    assert.match(
      r.stderr,
      /^protocall: webhooks are disabled on the registry at 127\.0\.0\.1:\d+ .*ask your registry admin to enable them/,
    );
  } finally {
    await disabled.stop();
  }
});

test("send-test, listen list and listen replay", async () => {
  const sent = await runCli(["webhook", "send-test", "--to", listener.url, "--cacert", pki.ca.certPath]);
  assert.equal(sent.code, 0, sent.stderr);
  assert.equal(JSON.parse(sent.stdout).status, 200);
  const untrusted = await runCli(["webhook", "send-test", "--to", listener.url], {
    env: { NODE_EXTRA_CA_CERTS: undefined },
  });
  assert.equal(untrusted.code, 14 * 8);
  assert.match(untrusted.stderr, /^protocall: cannot reach https:.*certificate/);

  // --data: a JSON EventRequest of our own, sent as binary.
  const dataFile = join(dir, "event.json");
  writeFileSync(
    dataFile,
    JSON.stringify({
      event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
      payload: { repositoryPush: { repositoryCommit: { id: "from-data-file", author: "dora" } } },
    }),
  );
  const custom = await runCli([
    "webhook",
    "send-test",
    "--to",
    listener.url,
    "--data",
    dataFile,
    "--cacert",
    pki.ca.certPath,
  ]);
  assert.equal(custom.code, 0, custom.stderr);
  await waitFor(() => listener.lines.some((l) => l.includes('"id":"from-data-file"')), "the custom event");
  const badData = await runCli([
    "webhook",
    "send-test",
    "--to",
    listener.url,
    "--data",
    dataFile.replace(".json", ".missing"),
  ]);
  assert.equal(badData.code, 1);
  assert.match(badData.stderr, /^protocall: cannot read --data file/);

  const listed = await runCli(["listen", "list", "--store", join(dir, "events.store")]);
  assert.equal(listed.code, 0, listed.stderr);
  const rows = listed.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const last = rows.filter((r) => r.event?.payload?.repositoryPush?.repository).at(-1);
  assert.equal(last.status, "accepted");
  assert.equal(last.event.payload.repositoryPush.repository.name, "petapis");

  const replayed = await runCli([
    "listen",
    "replay",
    String(last.id),
    "--store",
    join(dir, "events.store"),
    "--cacert",
    pki.ca.certPath,
  ]);
  assert.equal(replayed.code, 0, replayed.stderr);
  assert.equal(JSON.parse(replayed.stdout).status, 200);
  const again = await runCli(["listen", "list", "--store", join(dir, "events.store")]);
  const newest = JSON.parse(again.stdout.trim().split("\n").at(-1)!);
  assert.deepEqual(newest.event, last.event);
  assert.ok(newest.id > last.id);

  const missing = await runCli(["listen", "replay", "99999", "--store", join(dir, "events.store")]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no delivery 99999/);
});

test("convert: JSON EventRequest to binary and back", async () => {
  const json = JSON.stringify({
    event: "WEBHOOK_EVENT_REPOSITORY_PUSH",
    payload: { repositoryPush: { repository: { name: "petapis" } } },
  });
  const bin = await runCli(
    ["convert", "--type", "buf.alpha.webhook.v1alpha1.EventRequest", "--from", "json", "--to", "binary"],
    { stdin: json },
  );
  assert.equal(bin.code, 0, bin.stderr);
  assert.equal(bin.stdoutBytes[0], 0x08); // field 1, varint
  const back = await runCli(["convert", "--type", "EventRequest", "--from", "binary", "--to", "json"], {
    stdin: bin.stdoutBytes,
  });
  assert.equal(back.code, 0, back.stderr);
  assert.deepEqual(JSON.parse(back.stdout), JSON.parse(json));
  const bad = await runCli(["convert", "--type", "EventRequest"], { stdin: '{"nope": 1}' });
  assert.equal(bad.code, 1);
  assert.match(
    bad.stderr,
    /^protocall: input is not a valid buf\.alpha\.webhook\.v1alpha1\.EventRequest in JSON/,
  );
  const unknown = await runCli(["convert", "--type", "foo.Bar"], { stdin: "{}" });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /not a built-in message type/);
});

test("convert: other types with --schema (a workspace of .proto files)", async () => {
  const schema = join(repoRoot, "test/fixtures/schema");
  const bin = await runCli([
    "convert",
    "--type",
    "fixtures.v1.GreetRequest",
    "--schema",
    schema,
    "-d",
    '{"name":"ada","times":3}',
  ]);
  assert.equal(bin.code, 0, bin.stderr);
  assert.deepEqual([...bin.stdoutBytes], [0x0a, 3, 0x61, 0x64, 0x61, 0x10, 3]);
  const back = await runCli(
    ["convert", "--type", "fixtures.v1.GreetRequest", "--schema", schema, "--from", "binary"],
    {
      stdin: bin.stdoutBytes,
    },
  );
  assert.equal(back.code, 0, back.stderr);
  assert.deepEqual(JSON.parse(back.stdout), { name: "ada", times: 3 });
  const missing = await runCli(["convert", "--type", "fixtures.v1.Nope", "--schema", schema, "-d", "{}"]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^protocall: message "fixtures\.v1\.Nope" not found/);
});

test("help and usage errors", async () => {
  for (const args of [
    ["webhook", "create", "--help"],
    ["webhook", "list", "--help"],
    ["webhook", "delete", "--help"],
    ["webhook", "send-test", "--help"],
    ["beta", "registry", "webhook", "create", "--help"],
    ["listen", "--help"],
    ["registry", "serve", "--help"],
    ["registry", "push", "--help"],
    ["convert", "--help"],
  ]) {
    const r = await runCli(args);
    assert.equal(r.code, 0, args.join(" "));
    assert.match(r.stdout, /^Usage: protocall /, args.join(" "));
  }
  const beta = await runCli(["beta", "registry", "webhook", "create", "--help"]);
  assert.match(beta.stdout, /Usage: protocall beta registry webhook create/);
  const serveHelp = await runCli(["registry", "serve", "--help"]);
  assert.match(serveHelp.stdout, /no retries/);
  assert.match(serveHelp.stdout, /in push order/);
  const missing = await runCli(["webhook", "delete", "--remote", "example.com"], {
    env: { PROTOCALL_TOKEN: "t" },
  });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^protocall: protocall webhook delete needs --id/);
  const unknownFlag = await runCli(["webhook", "list", "--token", "x"]);
  assert.equal(unknownFlag.code, 1);
  assert.match(unknownFlag.stderr, /^protocall: unknown flag --token: run `protocall webhook list --help`/);
  const wrongFlag = await runCli(["webhook", "delete", "--owner", "a", "--id", "x", "--remote", "r"]);
  assert.equal(wrongFlag.code, 1);
  assert.match(wrongFlag.stderr, /^protocall: unknown flag --owner: run `protocall webhook delete --help`/);
  const typo = await runCli(["webhook", "list", "--ownr", "acme", "--remote", "r"]);
  assert.equal(typo.code, 1);
  assert.match(typo.stderr, /^protocall: unknown flag --ownr \(did you mean --owner\?\)/);
  const sub = await runCli(["webhook", "lsit"]);
  assert.equal(sub.code, 1);
  assert.match(
    sub.stderr,
    /^protocall: unknown subcommand "lsit" of protocall webhook \(did you mean list\?\)/,
  );
});
