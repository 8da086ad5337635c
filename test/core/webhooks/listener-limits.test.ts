// The listener's connection limits: idle, slow-header, slow-body and silent HTTP/2 connections are
// closed by the header, body and idle timeouts (over http and https), a cap bounds the connections
// open at once, and valid deliveries keep flowing while attackers hold connections.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import tls from "node:tls";
import { encodeEvent, samplePushEvent } from "../../../src/core/webhooks/event";
import { closePostConnections, post } from "../../../src/core/webhooks/http-post";
import { type Listener, startListener } from "../../../src/core/webhooks/listener";
import { EventStore } from "../../../src/core/webhooks/store";
import { createTestPki, type TestPki } from "../../support/tls";
import { waitFor } from "./support";

const proto = { "content-type": "application/proto", "connect-protocol-version": "1" };
// A header timeout long enough for TLS handshakes on a busy machine (the handshake counts toward it).
const limits = { headersTimeoutMs: 2500, bodyTimeoutMs: 900, idleTimeoutMs: 700 };
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const EMPTY_SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

let pki: TestPki;
before(async () => {
  pki = await createTestPki();
});
after(() => closePostConnections());

async function withListener(
  fn: (l: Listener, store: EventStore) => Promise<void>,
  options: { tls?: boolean; maxConnections?: number } = {},
): Promise<void> {
  const store = await EventStore.open(join(mkdtempSync(join(tmpdir(), "protocall-limits-")), "events.store"));
  const listener = await startListener({
    store,
    tls: options.tls ? { cert: pki.server.cert, key: pki.server.key } : undefined,
    limits: { ...limits, maxConnections: options.maxConnections },
  });
  try {
    await fn(listener, store);
  } finally {
    await listener.close();
    await store.close();
  }
}

/** An attacker's connection: `closed` turns true when the listener closes it. */
interface Attack {
  readonly kind: string;
  closed: boolean;
  /** The HTTP status the listener answered, if it answered. */
  status?: number;
  stop(): void;
}

function track(kind: string, socket: net.Socket, timer?: NodeJS.Timeout): Attack {
  const a: Attack = {
    kind,
    closed: false,
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
  socket.on("data", (d: Buffer) => {
    const m = /^HTTP\/1\.1 (\d{3})/.exec(d.toString("latin1"));
    if (m) a.status = Number(m[1]);
  });
  socket.on("error", () => {});
  socket.on("close", () => {
    a.closed = true;
    clearInterval(timer);
  });
  return a;
}

function connect(url: URL, secure: boolean, alpn: string[] = ["http/1.1"]): net.Socket {
  const port = Number(url.port);
  return secure
    ? tls.connect({ host: "127.0.0.1", port, ca: pki.ca.cert, ALPNProtocols: alpn, servername: "localhost" })
    : net.connect(port, "127.0.0.1");
}

const headLines = (url: URL, extra = "") =>
  `POST ${url.pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/proto\r\n${extra}`;

/** Opens `n` connections of each kind an attacker holds open. */
function attack(listener: Listener, n: number, secure: boolean): Attack[] {
  const url = new URL(listener.callbackUrl);
  const out: Attack[] = [];
  for (let i = 0; i < n; i++) {
    // Connects and sends nothing (over https: not even a TLS handshake).
    out.push(track("silent", net.connect(Number(url.port), "127.0.0.1")));
    // Sends a request head one header line at a time, never finishing it.
    const slowHead = connect(url, secure);
    slowHead.write(headLines(url));
    out.push(
      track(
        "slow headers",
        slowHead,
        setInterval(() => slowHead.write(`X-Slow-${i}: yes\r\n`), 100),
      ),
    );
    // Sends a whole head, then the body one byte at a time.
    const slowBody = connect(url, secure);
    slowBody.write(`${headLines(url, "Content-Length: 100000\r\n")}\r\n`);
    out.push(
      track(
        "slow body",
        slowBody,
        setInterval(() => slowBody.write("x"), 100),
      ),
    );
    // A valid request, then an idle keep-alive connection.
    const idle = connect(url, secure);
    const body = Buffer.from(encodeEvent(samplePushEvent()));
    idle.write(`${headLines(url, `Content-Length: ${body.length}\r\n`)}\r\n`);
    idle.write(body);
    out.push(track("idle after a request", idle));
    // An HTTP/2 connection (preface and SETTINGS) that opens no stream.
    const h2 = connect(url, secure, ["h2"]);
    h2.write(Buffer.concat([PREFACE, EMPTY_SETTINGS]));
    out.push(track("silent HTTP/2", h2));
    // An HTTP/2 stream whose body trickles.
    out.push(slowHttp2Body(listener, secure));
  }
  return out;
}

function slowHttp2Body(listener: Listener, secure: boolean): Attack {
  const session = http2.connect(listener.url, secure ? { ca: pki.ca.cert } : {});
  const a: Attack = { kind: "slow HTTP/2 body", closed: false, stop: () => session.destroy() };
  session.on("error", () => {});
  const stream = session.request({
    ":method": "POST",
    ":path": new URL(listener.callbackUrl).pathname,
    "content-type": "application/proto",
    "content-length": "100000",
  });
  stream.on("error", () => {});
  stream.on("response", (h) => {
    a.status = Number(h[":status"]);
  });
  stream.resume();
  const timer = setInterval(() => {
    if (!stream.destroyed) stream.write("x");
  }, 100);
  // The attack is over when the listener has refused the stream (the session may stay).
  stream.on("close", () => {
    clearInterval(timer);
    a.closed = true;
    session.close();
  });
  return a;
}

async function allClosed(attacks: Attack[]): Promise<void> {
  await waitFor(() => attacks.every((a) => a.closed), "every attacker closed", 30_000).catch(() => {
    const open = attacks.filter((a) => !a.closed).map((a) => `${a.kind} ${a.status}`);
    assert.fail(`${open.length} attackers still open: ${[...new Set(open)].join(", ")}`);
  });
}

async function deliverDuring(listener: Listener, secure: boolean, count: number): Promise<number[]> {
  const statuses: number[] = [];
  const body = encodeEvent(samplePushEvent());
  for (let i = 0; i < count; i++) {
    const res = await post(listener.callbackUrl, body, proto, secure ? { ca: pki.ca.cert } : {});
    statuses.push(res.status);
  }
  return statuses;
}

for (const secure of [false, true]) {
  const scheme = secure ? "https" : "http";
  test(`${scheme}: idle, slow and silent connections are closed by the timeouts; valid deliveries flow meanwhile`, {
    timeout: 120_000,
  }, async () => {
    await withListener(
      async (listener, store) => {
        const attacks = attack(listener, 8, secure);
        try {
          const statuses = await deliverDuring(listener, secure, 10);
          assert.deepEqual(statuses, Array(10).fill(200));
          await allClosed(attacks);
          // The slow bodies were answered 408 before their connection or stream was closed.
          const slowBodies = attacks.filter((a) => a.kind.includes("body"));
          assert.ok(
            slowBodies.every((a) => a.status === 408),
            slowBodies.map((a) => a.status).join(" "),
          );
          const rejected = (await store.list()).filter((d) => d.status === "rejected");
          assert.ok(
            rejected.some((d) => d.httpStatus === 408 && /did not arrive within 900 ms/.test(d.reason!)),
          );
          await waitFor(() => listener.connections() === 0, "no connection left open");
        } finally {
          for (const a of attacks) a.stop();
        }
      },
      { tls: secure },
    );
  });
}

test("at the connection cap, attackers' connections make room for valid deliveries", {
  timeout: 120_000,
}, async () => {
  await withListener(
    async (listener) => {
      assert.equal(listener.limits.maxConnections, 24);
      // Far more attackers than the cap, of every kind, kept coming back for a while.
      const attacks = attack(listener, 10, false);
      let peak = 0;
      const sampler = setInterval(() => {
        peak = Math.max(peak, listener.connections());
      }, 5);
      try {
        await new Promise((r) => setTimeout(r, 200));
        const more = attack(listener, 10, false);
        attacks.push(...more);
        // Five senders at a time (valid senders beyond the cap would take each other's places).
        const statuses: number[] = [];
        for (let round = 0; round < 6; round++) {
          const batch = await Promise.all(
            Array.from({ length: 5 }, () =>
              post(listener.callbackUrl, encodeEvent(samplePushEvent()), proto).then((r) => r.status),
            ),
          );
          statuses.push(...batch);
        }
        assert.deepEqual(statuses, Array(30).fill(200));
        assert.ok(peak <= 24, `peak of ${peak} connections`);
        await allClosed(attacks);
      } finally {
        clearInterval(sampler);
        for (const a of attacks) a.stop();
      }
    },
    { maxConnections: 24 },
  );
});

test("a connection that keeps completing requests is not closed as idle", { timeout: 60_000 }, async () => {
  await withListener(async (listener, store) => {
    // One HTTP/1.1 keep-alive connection delivers every 200 ms, for several times the idle limit.
    const url = new URL(listener.callbackUrl);
    const socket = net.connect(Number(url.port), "127.0.0.1");
    let closed = false;
    socket.on("close", () => {
      closed = true;
    });
    const body = Buffer.from(encodeEvent(samplePushEvent()));
    let answers = 0;
    socket.on("data", (d: Buffer) => {
      answers += d.toString("latin1").split("HTTP/1.1 200 OK").length - 1;
    });
    for (let i = 1; i <= 12; i++) {
      socket.write(`${headLines(url, `Content-Length: ${body.length}\r\n`)}\r\n`);
      socket.write(body);
      await waitFor(() => answers === i || closed, `answer ${i}`);
      assert.equal(closed, false, `closed after ${i - 1} requests`);
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(store.count(), 12);
    socket.destroy();
  });
});

test("far more senders at once than the connection cap: each is answered, none is reset", {
  timeout: 120_000,
}, async () => {
  await withListener(
    async (listener, store) => {
      const url = new URL(listener.callbackUrl);
      const body = Buffer.from(encodeEvent(samplePushEvent()));
      // Each sender opens its own connection and sends one whole request.
      const one = () =>
        new Promise<string>((resolve) => {
          const socket = net.connect(Number(url.port), "127.0.0.1");
          let text = "";
          let error = "";
          socket.on("data", (d: Buffer) => {
            text += d.toString("latin1");
          });
          socket.on("error", (err: NodeJS.ErrnoException) => {
            error = err.code ?? err.message;
          });
          socket.on("close", () => resolve(error ? `error ${error}` : text));
          socket.write(`${headLines(url, `Content-Length: ${body.length}\r\nConnection: close\r\n`)}\r\n`);
          socket.write(body);
        });
      const answers = await Promise.all(Array.from({ length: 300 }, one));
      const kinds = answers.map(
        (a) => /^HTTP\/1\.1 (200|503) /.exec(a)?.[1] ?? (a.slice(0, 60) || "no answer"),
      );
      const counts: Record<string, number> = {};
      for (const k of kinds) counts[k] = (counts[k] ?? 0) + 1;
      assert.deepEqual(
        Object.keys(counts).filter((k) => k !== "200" && k !== "503"),
        [],
        JSON.stringify(counts),
      );
      for (const a of answers.filter((x) => x.startsWith("HTTP/1.1 503")))
        assert.match(a, /\r\nRetry-After: 1\r\n/);
      assert.equal(store.count(), counts["200"]);
    },
    { maxConnections: 8 },
  );
});
