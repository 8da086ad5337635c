// A new user's first steps with the https listener and the registry emulator: `webhook send-test`,
// `listen replay` and the registry client commands trust the self-signed certificates that
// `protocall listen --tls` and `protocall registry serve --tls` generated on this machine, without
// flags; another self-signed certificate fails with the flag that fixes it; `listen list` before any
// delivery, or of a store nothing reached yet, says there is none yet instead of an ENOENT error or
// nothing at all.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ensureSelfSignedCert } from "../../src/core/webhooks/self-signed";
import { startCliServer, waitFor } from "../core/webhooks/support";
import { runCli } from "../support/cli";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "protocall-trust-"));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test("send-test and replay reach `listen --tls` without flags", { timeout: 90_000 }, async () => {
  const config = tempDir();
  const env = { XDG_CONFIG_HOME: config };
  const store = join(config, "events.store");
  const listener = await startCliServer(["listen", "--tls", "--store", store], env);
  try {
    assert.match(listener.url, /^https:/);
    const sent = await runCli(["webhook", "send-test", "--to", listener.url], { env });
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(JSON.parse(sent.stdout).status, 200);
    await waitFor(() => listener.lines.length === 2, "the delivery line");
    const id = String(JSON.parse(listener.lines[1]).id);
    const replayed = await runCli(["listen", "replay", id, "--store", store], { env });
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.equal(JSON.parse(replayed.stdout).to, listener.url);
    assert.equal(JSON.parse(replayed.stdout).status, 200);
    await waitFor(() => listener.lines.length === 3, "the replayed delivery");
  } finally {
    await listener.stop();
  }
});

test("another self-signed certificate fails with the flag that fixes it; --cacert fixes it", {
  timeout: 90_000,
}, async () => {
  const config = tempDir();
  const env = { XDG_CONFIG_HOME: config };
  const mine = await ensureSelfSignedCert(tempDir(), "mine");
  const store = join(config, "events.store");
  const listener = await startCliServer(
    ["listen", "--cert", mine.certPath, "--key", mine.keyPath, "--store", store],
    env,
  );
  try {
    const refused = await runCli(["webhook", "send-test", "--to", listener.url], { env });
    assert.equal(refused.code, 14 * 8);
    assert.match(
      refused.stderr,
      /^protocall: cannot reach https:\/\/127\.0\.0\.1:\d+\/\S+: self-signed certificate/,
    );
    assert.match(refused.stderr, /with --cacert FILE, or skip verification with -k\n$/);
    assert.equal(refused.stderr.trimEnd().split("\n").length, 1);
    const trusted = await runCli(["webhook", "send-test", "--to", listener.url, "--cacert", mine.certPath], {
      env,
    });
    assert.equal(trusted.code, 0, trusted.stderr);
    await waitFor(() => listener.lines.length === 2, "the delivery line");
    const id = String(JSON.parse(listener.lines[1]).id);
    const replay = await runCli(["listen", "replay", id, "--store", store], { env });
    assert.equal(replay.code, 14 * 8);
    assert.match(replay.stderr, /^protocall: cannot replay delivery \d+ to https:.*--cacert FILE.*-k\n$/);
    const insecure = await runCli(["listen", "replay", id, "--store", store, "-k"], { env });
    assert.equal(insecure.code, 0, insecure.stderr);
    // The one trust rule, as for registries: SSL_CERT_FILE (or SSL_CERT_DIR) names what is trusted.
    const byEnv = await runCli(["listen", "replay", id, "--store", store], {
      env: { ...env, SSL_CERT_FILE: mine.certPath },
    });
    assert.equal(byEnv.code, 0, byEnv.stderr);
  } finally {
    await listener.stop();
  }
});

test("the registry client commands reach `registry serve --tls` without flags", {
  timeout: 90_000,
}, async () => {
  const config = tempDir();
  const env = { XDG_CONFIG_HOME: config, PROTOCALL_TOKEN: "alice-token" };
  const registry = await startCliServer(["registry", "serve", "--tls"], env);
  try {
    assert.match(registry.url, /^https:/);
    const list = await runCli(
      ["webhook", "list", "--owner", "acme", "--repository", "petapis", "--remote", registry.url],
      { env },
    );
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout), { webhooks: [] });
    const push = await runCli(
      ["registry", "push", "--remote", registry.url, "--owner", "acme", "--repository", "petapis"],
      { env },
    );
    assert.equal(push.code, 0, push.stderr);
    const deliveries = await runCli(["registry", "deliveries", "--remote", registry.url], { env });
    assert.equal(deliveries.code, 0, deliveries.stderr);
  } finally {
    await registry.stop();
  }
});

test("registry serve delivers to `listen --tls` on this machine without --trust-ca", {
  timeout: 90_000,
}, async () => {
  const config = tempDir();
  const env = { XDG_CONFIG_HOME: config, PROTOCALL_TOKEN: "alice-token" };
  const listener = await startCliServer(["listen", "--tls", "--store", join(config, "events.store")], env);
  const registry = await startCliServer(["registry", "serve", "--batch-interval", "100ms"], env);
  try {
    const repo = ["--owner", "acme", "--repository", "petapis", "--remote", registry.url];
    const created = await runCli(["webhook", "create", ...repo, "--callback-url", listener.url], { env });
    assert.equal(created.code, 0, created.stderr);
    const pushed = await runCli(["registry", "push", ...repo], { env });
    assert.equal(pushed.code, 0, pushed.stderr);
    const commit = JSON.parse(pushed.stdout).commit.id as string;
    await waitFor(() => listener.lines.some((l) => l.includes(commit)), "the push at the listener", 30_000);
    const deliveries = await runCli(["registry", "deliveries", "--remote", registry.url], { env });
    assert.equal(JSON.parse(deliveries.stdout).deliveries.at(-1).httpStatus, 200, deliveries.stdout);
  } finally {
    await registry.stop();
    await listener.stop();
  }
});

test("listen list before any delivery: no deliveries yet, exit 0", { timeout: 30_000 }, async () => {
  const config = tempDir();
  const env = { XDG_CONFIG_HOME: config };
  const fresh = await runCli(["listen", "list"], { env });
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.equal(fresh.stdout, "");
  assert.match(
    fresh.stderr,
    /^no deliveries yet: .*events\.store does not exist until `protocall listen` stores one\n$/,
  );
  assert.doesNotMatch(fresh.stderr, /ENOENT/);
  const named = await runCli(["listen", "list", "--store", join(config, "nope.store")], { env });
  assert.equal(named.code, 0, named.stderr);
  assert.match(named.stderr, /^no deliveries yet: .*nope\.store does not exist/);
  const replay = await runCli(["listen", "replay", "1"], { env });
  assert.equal(replay.code, 1);
  assert.match(replay.stderr, /no deliveries yet/);
  assert.match(replay.stderr, /protocall: no delivery 1 in .*events\.store: see `protocall listen list`\n$/);
});

test("listen list of a store a listener created but nothing reached: no deliveries yet, exit 0", {
  timeout: 60_000,
}, async () => {
  const config = tempDir();
  const store = join(config, "quiet.store");
  const listener = await startCliServer(["listen", "--store", store], { XDG_CONFIG_HOME: config });
  assert.equal(await listener.stop(), 0, listener.stderr());
  const r = await runCli(["listen", "list", "--store", store], { env: { XDG_CONFIG_HOME: config } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, `no deliveries yet in ${store}\n`);
});
