// Test PKI: a CA, a server certificate for localhost/127.0.0.1 signed by it, a client certificate for
// mTLS, and an unrelated CA (to test "unknown authority"). Generated fresh for each test run.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import selfsigned from "selfsigned";

export interface Pem {
  cert: string;
  key: string;
  certPath: string;
  keyPath: string;
}

export interface TestPki {
  dir: string;
  ca: Pem;
  server: Pem;
  client: Pem;
  otherCa: Pem;
}

function write(dir: string, name: string, cert: string, key: string): Pem {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  writeFileSync(certPath, cert);
  writeFileSync(keyPath, key);
  return { cert, key, certPath, keyPath };
}

async function makeCa(cn: string) {
  return selfsigned.generate([{ name: "commonName", value: cn }], {
    keyType: "ec",
    algorithm: "sha256",
    curve: "P-256",
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
}

/** Creates the PKI in a new temporary directory. `serverNames` become DNS SANs of the server cert. */
export async function createTestPki(serverNames: string[] = ["localhost"]): Promise<TestPki> {
  const dir = mkdtempSync(join(tmpdir(), "protocall-pki-"));
  const ca = await makeCa("Protocall Test CA");
  const otherCa = await makeCa("Unrelated Test CA");
  const server = await selfsigned.generate([{ name: "commonName", value: serverNames[0] ?? "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    curve: "P-256",
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          // A name that is an IPv4 address (0.0.0.0, which proxied tests use) is an IP entry.
          ...serverNames.map((value) =>
            /^\d+\.\d+\.\d+\.\d+$/.test(value)
              ? { type: 7 as const, ip: value }
              : { type: 2 as const, value },
          ),
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  });
  const client = await selfsigned.generate([{ name: "commonName", value: "protocall-test-client" }], {
    keyType: "ec",
    algorithm: "sha256",
    curve: "P-256",
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true },
      { name: "extKeyUsage", clientAuth: true },
    ],
  });
  return {
    dir,
    ca: write(dir, "ca", ca.cert, ca.private),
    otherCa: write(dir, "other-ca", otherCa.cert, otherCa.private),
    server: write(dir, "server", server.cert, server.private),
    client: write(dir, "client", client.cert, client.private),
  };
}
