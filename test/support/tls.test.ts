import assert from "node:assert/strict";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { createTestPki } from "./tls";

test("the test PKI serves TLS that verifies against its CA and requires the client cert", async () => {
  const pki = await createTestPki();
  const server = https.createServer(
    {
      cert: pki.server.cert,
      key: pki.server.key,
      ca: pki.ca.cert,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (_req, res) => res.end("ok"),
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  try {
    const body = await new Promise<string>((resolve, reject) => {
      https
        .get(
          {
            host: "127.0.0.1",
            port,
            servername: "localhost",
            ca: readFileSync(pki.ca.certPath),
            cert: pki.client.cert,
            key: pki.client.key,
          },
          (res) => {
            let s = "";
            res.on("data", (c) => (s += c));
            res.on("end", () => resolve(s));
          },
        )
        .on("error", reject);
    });
    assert.equal(body, "ok");
    await assert.rejects(
      new Promise((resolve, reject) =>
        https
          .get({ host: "127.0.0.1", port, servername: "localhost", ca: pki.otherCa.cert }, resolve)
          .on("error", reject),
      ),
      /self-signed|unable to verify|unable to get local issuer/,
    );
  } finally {
    server.close();
  }
});
