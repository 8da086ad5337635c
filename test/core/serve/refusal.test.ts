// Refusing a request without losing its answer, on every server that uses the shared refusal rules
// (the webhook listener and the registry emulator): a body declared over the limit is refused before
// `100 Continue`, an HTTP/1.1 client still sending reads its 413 (lingering close), and an HTTP/2
// stream answered while its body is still arriving is reset so that the client stops sending.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseRegistryConfig } from "../../../src/core/registry-emulator/config";
import { type RegistryEmulator, startRegistryEmulator } from "../../../src/core/registry-emulator/server";
import { type Listener, startListener } from "../../../src/core/webhooks/listener";
import { EventStore } from "../../../src/core/webhooks/store";

const MiB = 1024 * 1024;
let listener: Listener;
let store: EventStore;
let emulator: RegistryEmulator;

before(async () => {
  store = await EventStore.open(join(mkdtempSync(join(tmpdir(), "protocall-refusal-")), "events.store"));
  listener = await startListener({ store, maxBodyBytes: MiB });
  emulator = await startRegistryEmulator({
    config: parseRegistryConfig({
      users: [{ name: "alice", token: "alice-token" }],
      repositories: [{ owner: "acme", name: "petapis", admins: ["alice"] }],
    }),
    maxUploadBytes: MiB,
  });
});

after(async () => {
  await listener.close();
  await store.close();
  await emulator.close();
});

interface Target {
  readonly name: string;
  url(): URL;
  readonly headers: string;
}

const targets: Target[] = [
  { name: "listener", url: () => new URL(listener.callbackUrl), headers: "" },
  {
    name: "registry emulator",
    url: () => new URL("/buf.registry.module.v1.UploadService/Upload", emulator.url),
    headers: "Authorization: Bearer alice-token\r\n",
  },
];

const head = (t: Target, length: number, extra = "") =>
  `POST ${t.url().pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/proto\r\n` +
  `Content-Length: ${length}\r\n${t.headers}${extra}\r\n`;

for (const t of targets) {
  test(`${t.name}: a body declared over the limit is refused before 100 Continue`, async () => {
    const socket = net.connect(Number(t.url().port), "127.0.0.1");
    socket.on("error", () => {});
    let text = "";
    socket.on("data", (d: Buffer) => {
      text += d.toString("latin1");
    });
    socket.write(head(t, 60_000_000, "Expect: 100-continue\r\n"));
    await new Promise((resolve) => socket.once("close", resolve));
    assert.match(text, /^HTTP\/1\.1 413 /, text.slice(0, 200));
    assert.doesNotMatch(text, /100 Continue/);
    assert.match(text, /resource_exhausted/);
  });

  test(`${t.name}: an HTTP/1.1 client still sending a refused body reads its 413`, {
    timeout: 60_000,
  }, async () => {
    // A client that sends its 60 MB before it reads (as curl may while it is writing): closing the
    // connection under it resets it, and the answer waiting unread in its socket is lost.
    for (let i = 0; i < 3; i++) {
      const outcome = await new Promise<{ text: string; error?: string }>((resolve) => {
        const socket = net.connect(Number(t.url().port), "127.0.0.1");
        socket.pause();
        let text = "";
        let error: string | undefined;
        socket.on("data", (d: Buffer) => {
          text += d.toString("latin1");
        });
        socket.on("error", (err: NodeJS.ErrnoException) => {
          error = err.code ?? err.message;
        });
        socket.on("close", () => resolve({ text, error }));
        socket.write(head(t, 60_000_000));
        const chunk = Buffer.alloc(1024 * 1024);
        let sent = 0;
        const pump = () => {
          while (!socket.destroyed) {
            sent++;
            if (sent === 60) {
              socket.write(chunk, () => socket.resume());
              return;
            }
            if (!socket.write(chunk)) {
              socket.once("drain", pump);
              return;
            }
          }
        };
        pump();
      });
      assert.match(outcome.text, /^HTTP\/1\.1 413 /, `try ${i + 1}: ${outcome.error ?? "no answer"}`);
    }
  });
}

/** Opens an HTTP/2 stream that keeps sending; resolves when the server closes it. */
function http2Upload(
  base: string,
  headers: http2.OutgoingHttpHeaders,
): Promise<{ status: number; rstCode: number | undefined; body: string }> {
  return new Promise((resolve) => {
    const session = http2.connect(base);
    session.on("error", () => {});
    const stream = session.request({ ":method": "POST", ...headers });
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", () => {});
    // Never ends: a chunk every 20 ms for as long as the stream is open.
    const timer = setInterval(() => {
      if (!stream.destroyed && !stream.closed) stream.write(Buffer.alloc(16 * 1024, 1));
    }, 20);
    stream.on("close", () => {
      clearInterval(timer);
      resolve({ status, rstCode: stream.rstCode, body: Buffer.concat(chunks).toString() });
      session.destroy();
    });
  });
}

test("listener: every HTTP/2 refusal whose body is still arriving resets the stream after the answer", {
  timeout: 60_000,
}, async () => {
  const path = new URL(listener.callbackUrl).pathname;
  const cases: { headers: http2.OutgoingHttpHeaders; status: number }[] = [
    {
      headers: { ":path": path, "content-type": "application/json", "content-length": "60000000" },
      status: 413,
    },
    { headers: { ":path": path, "content-type": "application/json" }, status: 413 },
    { headers: { ":path": "/no.such.Service/Method", "content-type": "application/json" }, status: 404 },
    { headers: { ":path": path, ":method": "PUT", "content-type": "application/json" }, status: 405 },
  ];
  for (const c of cases) {
    const res = await http2Upload(listener.url, c.headers);
    assert.equal(res.status, c.status, JSON.stringify(c.headers));
    assert.ok(res.body.length > 0, "the answer's body arrived");
    assert.equal(res.rstCode, http2.constants.NGHTTP2_NO_ERROR);
  }
});
