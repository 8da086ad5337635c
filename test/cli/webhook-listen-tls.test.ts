// `protocall listen --tls`: a self-signed certificate generated once in the config directory, its path
// and SHA-256 fingerprint printed, and reused on the next start.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { startCliServer, waitFor } from "../core/webhooks/support";
import { runCli } from "../support/cli";

test("listen --tls generates a certificate once, prints its fingerprint, and reuses it", {
  timeout: 60_000,
}, async () => {
  const config = mkdtempSync(join(tmpdir(), "protocall-xdg-"));
  const env = { XDG_CONFIG_HOME: config };
  const first = await startCliServer(["listen", "--tls", "--store", join(config, "events.store")], env);
  let fingerprint: string;
  try {
    assert.match(
      first.url,
      /^https:\/\/127\.0\.0\.1:\d+\/buf\.alpha\.webhook\.v1alpha1\.EventService\/Event$/,
    );
    const certPath = join(config, "protocall", "listener-cert.pem");
    await waitFor(() => first.stderr().includes("fingerprint"), "the fingerprint line");
    assert.match(first.stderr(), new RegExp(`generated self-signed certificate ${certPath}`));
    fingerprint = new X509Certificate(readFileSync(certPath)).fingerprint256;
    assert.match(first.stderr(), new RegExp(`SHA-256 fingerprint ${fingerprint}`));
    // The printed certificate is the one served: trusting it makes the https delivery succeed.
    const sent = await runCli(["webhook", "send-test", "--to", first.url, "--cacert", certPath]);
    assert.equal(sent.code, 0, sent.stderr);
  } finally {
    await first.stop();
  }
  const second = await startCliServer(["listen", "--tls", "--store", join(config, "events.store")], env);
  try {
    await waitFor(() => second.stderr().includes("fingerprint"), "the fingerprint line");
    assert.match(second.stderr(), /using self-signed certificate/);
    assert.match(second.stderr(), new RegExp(`SHA-256 fingerprint ${fingerprint}`));
  } finally {
    await second.stop();
  }
});

test("registry serve --tls: https with its own self-signed certificate", { timeout: 60_000 }, async () => {
  const config = mkdtempSync(join(tmpdir(), "protocall-xdg-"));
  const registry = await startCliServer(["registry", "serve", "--tls"], { XDG_CONFIG_HOME: config });
  try {
    assert.match(registry.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const certPath = join(config, "protocall", "registry-cert.pem");
    await waitFor(() => registry.stderr().includes("fingerprint"), "the fingerprint line");
    assert.match(registry.stderr(), new RegExp(`generated self-signed certificate ${certPath}`));
    const list = await runCli(
      [
        "webhook",
        "list",
        "--owner",
        "acme",
        "--repository",
        "petapis",
        "--remote",
        registry.url,
        "--cacert",
        certPath,
      ],
      { env: { PROTOCALL_TOKEN: "alice-token" } },
    );
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout), { webhooks: [] });
  } finally {
    await registry.stop();
  }
});
