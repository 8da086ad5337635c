// The emulator's HTTP front: HTTP/1.1 and HTTP/2 on one port (http and https), and the checks made
// before a body is read: the RPC exists (unimplemented), the token is valid (unauthenticated), the
// body fits (resource_exhausted). A refused body is never buffered: the answer comes while the client
// is still sending it.
import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import net from "node:net";
import { after, before, test } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { parseRegistryConfig } from "../../../src/core/registry-emulator/config";
import { type RegistryEmulator, startRegistryEmulator } from "../../../src/core/registry-emulator/server";
import { CommitService } from "../../../src/gen/buf/registry/module/v1/commit_service_pb";
import { OwnerService } from "../../../src/gen/buf/registry/owner/v1/owner_service_pb";
import { createTestPki, type TestPki } from "../../support/tls";
import { waitFor } from "../webhooks/support";

const config = parseRegistryConfig({
  users: [{ name: "alice", token: "alice-token" }],
  repositories: [{ owner: "acme", name: "petapis", admins: ["alice"] }],
});

let pki: TestPki;
let plain: RegistryEmulator;
let secure: RegistryEmulator;
const uploadPath = "/buf.registry.module.v1.UploadService/Upload";
const MiB = 1024 * 1024;

before(async () => {
  pki = await createTestPki();
  plain = await startRegistryEmulator({ config, maxUploadBytes: 2 * MiB });
  secure = await startRegistryEmulator({ config, tls: { cert: pki.server.cert, key: pki.server.key } });
});

after(async () => {
  await plain.close();
  await secure.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Bytes of the body the client had written when the answer arrived. */
  sent: number;
}

/**
 * Starts an HTTP/1.1 POST that announces `declared` bytes (chunked when undefined) and sends them one
 * 256 KiB chunk at a time, slowly, until an answer arrives; resolves with the answer.
 */
function slowPost(
  base: string,
  path: string,
  headers: Record<string, string>,
  declared: number | undefined,
): Promise<Answer> {
  const url = new URL(path, base);
  const lib = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = lib.request(url, {
      method: "POST",
      ca: pki.ca.cert,
      agent: false,
      headers: {
        "content-type": "application/proto",
        ...(declared === undefined ? {} : { "content-length": String(declared) }),
        ...headers,
      },
    });
    req.flushHeaders();
    const chunk = Buffer.alloc(256 * 1024, 1);
    const timer = setInterval(() => {
      if (answered || req.destroyed) return;
      if (declared !== undefined && sent + chunk.length > declared) return;
      sent += chunk.length;
      req.write(chunk);
    }, 20);
    req.on("response", (res) => {
      answered = true;
      clearInterval(timer);
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => {
        req.destroy();
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(parts).toString(),
          sent,
        });
      });
    });
    req.on("error", (err) => {
      clearInterval(timer);
      if (!answered) reject(err);
    });
  });
}

test("no token or a wrong token: unauthenticated at once, while a 200 MB body is still being sent", async () => {
  for (const emulator of [plain, secure]) {
    const none = await slowPost(emulator.url, uploadPath, {}, 200 * MiB);
    assert.equal(none.status, 401);
    assert.deepEqual(JSON.parse(none.body), {
      code: "unauthenticated",
      message: 'missing "Authorization: Bearer <token>" header',
    });
    assert.ok(none.sent < 20 * MiB, `answered after ${none.sent} bytes`);
    assert.equal(none.headers.connection, "close", "the rest of the body is not read");
    const wrong = await slowPost(emulator.url, uploadPath, { authorization: "Bearer nope" }, 200 * MiB);
    assert.equal(wrong.status, 401);
    assert.equal(JSON.parse(wrong.body).message, "invalid token");
    assert.ok(wrong.sent < 20 * MiB, `answered after ${wrong.sent} bytes`);
  }
});

test("a body over the limit: resource_exhausted, from its declared length or as soon as it passes the limit", async () => {
  const auth = { authorization: "Bearer alice-token" };
  const declared = await slowPost(plain.url, uploadPath, auth, 3 * MiB);
  assert.equal(declared.status, 413);
  assert.equal(JSON.parse(declared.body).code, "resource_exhausted");
  assert.match(JSON.parse(declared.body).message, /3145728 bytes exceeds the limit of 2097152 bytes/);
  assert.ok(declared.sent < MiB, `answered after ${declared.sent} bytes`);
  const chunked = await slowPost(plain.url, uploadPath, auth, undefined);
  assert.equal(chunked.status, 413);
  assert.match(JSON.parse(chunked.body).message, /exceeds the limit of 2097152 bytes/);
  assert.ok(chunked.sent <= 4 * MiB, `answered after ${chunked.sent} bytes`);
  // Every RPC but Upload takes at most 4 MiB.
  const small = await slowPost(plain.url, "/buf.registry.module.v1.CommitService/GetCommits", auth, 5 * MiB);
  assert.equal(small.status, 413);
  assert.match(JSON.parse(small.body).message, /limit of 4194304 bytes/);
});

test("HTTP/2: an unauthenticated stream is answered at once and reset, the body unread", async () => {
  const session = http2.connect(secure.url, { ca: pki.ca.cert });
  try {
    const stream = session.request({
      ":method": "POST",
      ":path": uploadPath,
      "content-type": "application/proto",
      "content-length": String(200 * MiB),
    });
    stream.write(Buffer.alloc(256 * 1024));
    const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) =>
      stream.once("response", resolve),
    );
    assert.equal(headers[":status"], 401);
    let body = "";
    stream.on("data", (c: Buffer) => {
      body += c.toString();
    });
    await new Promise<void>((resolve) => stream.once("end", () => resolve()));
    assert.equal(JSON.parse(body).code, "unauthenticated");
    // The server reset the stream with NO_ERROR: "stop sending".
    await waitFor(() => stream.rstCode === http2.constants.NGHTTP2_NO_ERROR, "the stream reset");
    stream.destroy();
  } finally {
    session.close();
  }
});

test("an RPC the emulator does not serve: unimplemented (501), naming what it serves; gRPC gets trailers", async () => {
  const res = await slowPost(
    plain.url,
    "/buf.registry.module.v1beta1.CommitService/GetCommits",
    { authorization: "Bearer alice-token" },
    0,
  );
  assert.equal(res.status, 501);
  const body = JSON.parse(res.body) as { code: string; message: string };
  assert.equal(body.code, "unimplemented");
  assert.match(
    body.message,
    /^buf\.registry\.module\.v1beta1\.CommitService\/GetCommits is not served by this registry emulator; it serves .*buf\.registry\.module\.v1\.UploadService.*buf\.registry\.owner\.v1\.OwnerService/,
  );
  const grpc = createClient(
    CommitService,
    createGrpcTransport({ baseUrl: secure.url, nodeOptions: { ca: pki.ca.cert } }),
  );
  await assert.rejects(
    grpc.getCommits({ resourceRefs: [] }),
    (err: unknown) => ConnectError.from(err).code === Code.Unauthenticated,
  );
});

test("one port speaks HTTP/1.1 and HTTP/2, over http (prior knowledge) and https (ALPN), binary and JSON", async () => {
  for (const emulator of [plain, secure]) {
    for (const httpVersion of ["1.1", "2"] as const) {
      for (const useBinaryFormat of [true, false]) {
        const owners = createClient(
          OwnerService,
          createConnectTransport({
            baseUrl: emulator.url,
            httpVersion,
            useBinaryFormat,
            nodeOptions: { ca: pki.ca.cert },
          }),
        );
        const res = await owners.getOwners(
          { ownerRefs: [{ value: { case: "name", value: "acme" } }] },
          { headers: { authorization: "Bearer alice-token" } },
        );
        assert.equal(res.owners[0].value.case, "organization", `${emulator.url} HTTP/${httpVersion}`);
        assert.equal(res.owners[0].value.value?.name, "acme");
      }
    }
  }
});

test("an undecodable binary body is the client's fault: invalid_argument (400, gRPC 3), as bad JSON is", async () => {
  const path = "/buf.registry.owner.v1.OwnerService/GetOwners";
  const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]);
  for (const [contentType, body] of [
    ["application/proto", garbage],
    ["application/json", Buffer.from("{not json")],
  ] as const) {
    const res = await fetch(new URL(path, plain.url), {
      method: "POST",
      headers: { "content-type": contentType, authorization: "Bearer alice-token" },
      body,
    });
    assert.equal(res.status, 400, contentType);
    assert.equal(((await res.json()) as { code: string }).code, "invalid_argument", contentType);
  }
  // gRPC: the same bytes in one uncompressed message.
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, garbage.length]), garbage]);
  const session = http2.connect(plain.url);
  try {
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: "Bearer alice-token",
    });
    stream.end(frame);
    stream.resume();
    const trailers = await new Promise<http2.IncomingHttpHeaders>((resolve) =>
      stream.once("trailers", resolve),
    );
    assert.equal(trailers["grpc-status"], String(Code.InvalidArgument));
    assert.match(decodeURIComponent(String(trailers["grpc-message"])), /^parse binary: /);
  } finally {
    session.close();
  }
});

test("by default an Upload over 32 MiB is refused with resource_exhausted before its body is read", async () => {
  const emulator = await startRegistryEmulator({ config });
  try {
    const url = new URL(uploadPath, emulator.url);
    const answer = (length: number) =>
      new Promise<string>((resolve) => {
        const socket = net.connect(Number(url.port), "127.0.0.1");
        let text = "";
        socket.on("error", () => {});
        socket.on("data", (d: Buffer) => {
          text += d.toString("latin1");
          // A 100 Continue means the body would be read: the answer is that line.
          if (/100 Continue\r\n\r\n|resource_exhausted.*\}/s.test(text)) {
            resolve(text);
            socket.destroy();
          }
        });
        socket.write(
          `POST ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/proto\r\n` +
            `Authorization: Bearer alice-token\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`,
        );
      });
    const over = await answer(32 * MiB + 1);
    assert.match(over, /^HTTP\/1\.1 413 /);
    assert.match(over, /"code":"resource_exhausted"/);
    assert.match(await answer(32 * MiB), /^HTTP\/1\.1 100 Continue/);
  } finally {
    await emulator.close();
  }
});
