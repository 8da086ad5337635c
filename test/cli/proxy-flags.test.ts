// The proxy's server flags are the shared ones of protocall's servers (server-flags.ts): `--tls`
// generates its certificate once (said so, then reused), buf curl trusts it with --cacert, and the
// TLS flag mistakes get the same errors as the other servers'.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { startCliServer } from "../core/webhooks/support";
import { runBufCurl } from "../support/buf";
import { runCli } from "../support/cli";
import { type DemoServer, startDemoServer } from "../support/servers";

const config = mkdtempSync(join(tmpdir(), "protocall-proxy-flags-"));
const env = { XDG_CONFIG_HOME: config };
let demo: DemoServer;
before(async () => {
  demo = await startDemoServer();
});
after(async () => {
  await demo?.close();
  rmSync(config, { recursive: true, force: true });
});

test("--tls generates the proxy's certificate once, says so, and buf curl trusts it with --cacert", async () => {
  const cert = join(config, "protocall", "proxy-cert.pem");
  for (const word of ["generated", "using"]) {
    const proxy = await startCliServer(
      ["proxy", "--upstream", demo.url, "--tls", "--store", join(config, "calls.store")],
      env,
    );
    try {
      assert.match(proxy.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.match(
        proxy.stderr(),
        new RegExp(`^${word} self-signed certificate ${cert}\\nSHA-256 fingerprint `, "m"),
      );
      const r = await runBufCurl([
        "--protocol",
        "grpc",
        "--cacert",
        cert,
        "-d",
        '{"name":"tls"}',
        `${proxy.url}/demo.v1.GreetService/Greet`,
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { greeting: "Hello, tls!" });
    } finally {
      await proxy.stop();
    }
  }
});

test("TLS flag mistakes are refused before anything starts", async () => {
  const store = ["--store", join(config, "x.store")];
  const both = await runCli([
    "proxy",
    "--upstream",
    demo.url,
    "--tls",
    "--cert",
    "c.pem",
    "--key",
    "k.pem",
    ...store,
  ]);
  assert.equal(both.code, 1);
  assert.match(both.stderr, /use either --tls or --cert\/--key, not both/);
  const half = await runCli(["proxy", "--upstream", demo.url, "--cert", "c.pem", ...store]);
  assert.equal(half.code, 1);
  assert.match(half.stderr, /--cert and --key must be given together/);
});
