// Which CAs a registry client trusts, as buf (a Go program) decides it: SSL_CERT_FILE and SSL_CERT_DIR
// replace the system's roots, --cacert adds to them, each certificate is given to TLS once, and an
// unreadable or empty file is named in a one-line error.
import assert from "node:assert/strict";
import { mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ProtocallError } from "../../../src/core/errors";
import { remoteAccess } from "../../../src/core/registry/access";
import { registryTrust } from "../../../src/core/registry/trust";
import { createTestPki } from "../../support/tls";

test("SSL_CERT_FILE and SSL_CERT_DIR replace the system roots; each certificate appears once", async () => {
  const pki = await createTestPki(["localhost"]);
  const dir = mkdtempSync(join(tmpdir(), "protocall-trust-"));
  writeFileSync(join(dir, "ca.pem"), pki.ca.cert);
  symlinkSync(join(dir, "ca.pem"), join(dir, "abcd1234.0"));
  writeFileSync(join(dir, "README"), "not a certificate\n");
  const ca = registryTrust({ env: { SSL_CERT_FILE: pki.ca.certPath, SSL_CERT_DIR: dir } });
  assert.deepEqual(ca, [pki.ca.cert.trim()]);
});

test("--cacert adds to the roots; a file without a certificate is refused with its name", async () => {
  const pki = await createTestPki(["localhost"]);
  const dir = mkdtempSync(join(tmpdir(), "protocall-trust-"));
  const ca = registryTrust({ env: { SSL_CERT_FILE: pki.ca.certPath }, caFile: pki.otherCa.certPath });
  assert.deepEqual(ca, [pki.ca.cert.trim(), pki.otherCa.cert.trim()]);
  writeFileSync(join(dir, "empty.pem"), "nothing\n");
  assert.throws(
    () => registryTrust({ env: { SSL_CERT_FILE: pki.ca.certPath }, caFile: "empty.pem", cwd: dir }),
    (err) =>
      err instanceof ProtocallError &&
      err.message ===
        `--cacert ${join(dir, "empty.pem")} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
  );
  assert.throws(
    () => registryTrust({ env: { SSL_CERT_FILE: join(dir, "missing.pem") } }),
    (err) =>
      err instanceof ProtocallError &&
      err.message ===
        `cannot read SSL_CERT_FILE ${join(dir, "missing.pem")}: ENOENT; name a PEM file of trusted certificates`,
  );
});

test("the certificates Protocall's own servers generated, and a plain-http registry's access, by the one rule", async () => {
  const pki = await createTestPki(["localhost"]);
  const ca = registryTrust({ env: { SSL_CERT_FILE: pki.ca.certPath }, extraCas: [pki.otherCa.cert] });
  assert.deepEqual(ca, [pki.ca.cert.trim(), pki.otherCa.cert.trim()]);
  // Over plain http nothing is read, unless --cacert names a file (so a wrong one is still reported).
  const env = { SSL_CERT_FILE: join(pki.dir, "missing.pem"), HOME: pki.dir };
  assert.equal(remoteAccess("localhost:8080", { env, secure: false }).ca, undefined);
  assert.throws(() => remoteAccess("localhost:8080", { env }), /cannot read SSL_CERT_FILE/);
  assert.throws(
    () =>
      remoteAccess("localhost:8080", {
        env: { HOME: pki.dir },
        secure: false,
        caFile: "missing.pem",
        cwd: pki.dir,
      }),
    /cannot read --cacert .*missing\.pem: ENOENT/,
  );
});
