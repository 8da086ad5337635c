// Registry access against the real buf (1.75, from @bufbuild/buf): for each token form and trust
// rule of the shared table (test/support/token-forms.ts), the Authorization header buf sends to a
// registry (or whether it reaches it at all), and the same answer from Protocall's one registry
// access module. The table says where Protocall differs on purpose (host names compared without
// regard to case; NODE_EXTRA_CA_CERTS, which a Go program ignores).
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { remoteAccess } from "../../../src/core/registry/access";
import { bufPath } from "../../support/buf";
import { runProcess } from "../../support/cli";
import { createTestPki, type TestPki } from "../../support/tls";
import {
  formSetup,
  type RecordingRegistry,
  startRecordingRegistry,
  tokenForms,
  trustEnv,
  trustForms,
} from "../../support/token-forms";

let pki: TestPki;
let registry: RecordingRegistry;

before(async () => {
  pki = await createTestPki(["localhost"]);
  registry = await startRecordingRegistry(pki);
});
after(() => registry?.close());

/** Runs buf against the registry (a call that needs a token) and returns what it sent. */
async function bufCall(home: string, env: Record<string, string>) {
  const r = await runProcess(bufPath, ["registry", "module", "commit", "list", `${registry.remote}/acme/x`], {
    timeoutMs: 60_000,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      XDG_CACHE_HOME: join(home, ".cache"),
      BUF_CACHE_DIR: join(home, ".cache", "buf"),
      BUF_TOKEN: undefined,
      NETRC: undefined,
      PROTOCALL_TOKEN: undefined,
      SSL_CERT_FILE: undefined,
      SSL_CERT_DIR: undefined,
      NODE_EXTRA_CA_CERTS: undefined,
      ...env,
    },
  });
  return { ...r, headers: [...new Set(registry.take())] };
}

// One buf process at a time: the registry records the headers of whichever call reaches it.
describe("the token buf sends, and the one Protocall finds", { concurrency: 1 }, () => {
  for (const form of tokenForms.filter((f) => !f.ours)) {
    test(form.name, async () => {
      const { home, env } = formSetup(form, registry.remote);
      const ours = () => remoteAccess(registry.remote, { env: { HOME: home, ...env } }).token?.token;
      const buf = await bufCall(home, { ...env, SSL_CERT_FILE: pki.ca.certPath });
      if (form.error) {
        assert.deepEqual(buf.headers, [], "buf refuses the value before calling");
        assert.match(buf.stderr, /invalid token/);
        assert.throws(ours, form.error);
        return;
      }
      const bufToken = form.buf === undefined ? form.token : (form.buf ?? undefined);
      assert.deepEqual(buf.headers, [bufToken === undefined ? "" : `Bearer ${bufToken}`], buf.stderr);
      assert.equal(ours(), form.token);
    });
  }
});

describe("whether buf trusts the registry, and whether Protocall does", { concurrency: 1 }, () => {
  for (const form of trustForms) {
    test(form.name, async () => {
      const { home } = formSetup({ name: "", env: {} }, registry.remote);
      const env = trustEnv(form, pki);
      const buf = await bufCall(home, { ...env, BUF_TOKEN: "tok" });
      const bufTrusts = form.buf ?? form.trusted;
      assert.deepEqual(buf.headers, bufTrusts ? ["Bearer tok"] : [], buf.stderr);
      if (!bufTrusts) assert.match(buf.stderr, /certificate signed by unknown authority/);
      const ca = remoteAccess(registry.remote, { env: { HOME: home, ...env } }).ca ?? [];
      assert.equal(
        ca.some((pem) => pem.replace(/\r/g, "").trim() === pki.ca.cert.replace(/\r/g, "").trim()),
        form.trusted,
      );
    });
  }
});
