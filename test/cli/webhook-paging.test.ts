// ListWebhooks paging through the CLI and the registry emulator over HTTPS: more webhooks than one page holds.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { startCliServer } from "../core/webhooks/support";
import { runCli } from "../support/cli";
import { createTestPki } from "../support/tls";

test("webhook list follows every page (page size 2, five webhooks)", { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-paging-"));
  const pki = await createTestPki();
  const names = ["r1", "r2", "r3", "r4", "r5"];
  writeFileSync(
    join(dir, "config.json"),
    JSON.stringify({
      users: [{ name: "alice", token: "alice-token" }],
      repositories: names.map((name) => ({ owner: "acme", name, admins: ["alice"] })),
    }),
  );
  const registry = await startCliServer([
    "registry",
    "serve",
    "--config",
    join(dir, "config.json"),
    "--page-size",
    "2",
    "--cert",
    pki.server.certPath,
    "--key",
    pki.server.keyPath,
    "--verbose",
  ]);
  try {
    assert.match(registry.url, /^https:/);
    const env = { PROTOCALL_TOKEN: "alice-token", NODE_EXTRA_CA_CERTS: pki.ca.certPath };
    for (const name of names) {
      const r = await runCli(
        [
          "webhook",
          "create",
          "--owner",
          "acme",
          "--repository",
          name,
          "--remote",
          registry.url,
          "--callback-url",
          `https://hooks.example.com/${name}/buf.alpha.webhook.v1alpha1.EventService/Event`,
        ],
        { env },
      );
      assert.equal(r.code, 0, r.stderr);
    }
    const list = await runCli(["webhook", "list", "--owner", "acme", "--remote", registry.url], { env });
    assert.equal(list.code, 0, list.stderr);
    const hooks = JSON.parse(list.stdout).webhooks as { repositoryName: string }[];
    assert.deepEqual(
      hooks.map((h) => h.repositoryName),
      names,
    );
    // The already-exists hint names the registry as the user wrote it.
    const again = await runCli(
      [
        "webhook",
        "create",
        "--owner",
        "acme",
        "--repository",
        "r1",
        "--remote",
        registry.url,
        "--callback-url",
        "https://hooks.example.com/buf.alpha.webhook.v1alpha1.EventService/Event",
      ],
      { env },
    );
    assert.equal(again.code, 48);
    assert.ok(again.stderr.includes(`--remote ${registry.url}`), again.stderr);
  } finally {
    await registry.stop();
  }
});
