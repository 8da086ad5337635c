// The front every server of ours has (listener, registry emulator, mock, proxy): HTTP/1.1 and HTTP/2
// on one cleartext port, and over TLS by ALPN; HTTP/2 as request objects or as streams; each request
// counted on its connection; and at the connection cap a new request is answered 503 with
// Retry-After rather than reset, whichever server it is.
import assert from "node:assert/strict";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as https from "node:https";
import type * as net from "node:net";
import { after, before, test } from "node:test";
import { ConnectionGuard } from "../../../src/core/serve/connection-guard";
import { createFrontServer, type FrontServerOptions } from "../../../src/core/serve/front-server";
import { listenOn } from "../../../src/core/serve/listen";
import type { NodeReq, NodeRes } from "../../../src/core/serve/refusal";
import { createTestPki, type TestPki } from "../../support/tls";

let pki: TestPki;
before(async () => {
  pki = await createTestPki(["localhost"]);
});

const answer = (req: NodeReq, res: NodeRes) => {
  res.writeHead(200, { "content-type": "text/plain" });
  res.end(`request over HTTP/${req.httpVersion}`);
};

async function serve(o: Partial<FrontServerOptions> & { guard?: ConnectionGuard }) {
  const guard = o.guard ?? new ConnectionGuard({});
  const server = createFrontServer({ onRequest: answer, ...o, guard });
  const { port } = await listenOn(server);
  return {
    port,
    guard,
    server,
    close: () => {
      guard.close();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const servers: { close(): Promise<void> }[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

function h1Get(port: number, secure = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const get = secure
      ? https.get({ port, host: "127.0.0.1", servername: "localhost", ca: pki.ca.cert, path: "/" })
      : http.get({ port, host: "127.0.0.1", path: "/" });
    get.on("response", (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => resolve(body));
    });
    get.on("error", reject);
  });
}

function h2Get(port: number, secure = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const session = secure
      ? http2.connect(`https://localhost:${port}`, { ca: pki.ca.cert })
      : http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":path": "/" });
    let body = "";
    stream.on("data", (c) => {
      body += c;
    });
    stream.on("end", () => {
      session.close();
      resolve(body);
    });
    stream.on("error", reject);
  });
}

test("one cleartext port takes HTTP/1.1 and HTTP/2 with prior knowledge", async () => {
  const s = await serve({});
  servers.push(s);
  assert.equal(await h1Get(s.port), "request over HTTP/1.1");
  assert.equal(await h2Get(s.port), "request over HTTP/2.0");
});

test("over TLS, ALPN chooses: h2 and http/1.1 on one port", async () => {
  const s = await serve({ tls: { cert: pki.server.cert, key: pki.server.key } });
  servers.push(s);
  assert.equal(await h1Get(s.port, true), "request over HTTP/1.1");
  assert.equal(await h2Get(s.port, true), "request over HTTP/2.0");
});

test("with onStream, HTTP/2 calls come as streams and HTTP/1.1 ones as requests", async () => {
  const s = await serve({
    onStream: (stream) => {
      stream.respond({ ":status": 200 });
      stream.end("a stream");
    },
  });
  servers.push(s);
  assert.equal(await h2Get(s.port), "a stream");
  assert.equal(await h1Get(s.port), "request over HTTP/1.1");
});

test("takeHttp2 is offered HTTP/2 connections only (cleartext and TLS); one handed back later is served with its first bytes intact", async () => {
  for (const secure of [false, true]) {
    const offered: net.Socket[] = [];
    const guard = new ConnectionGuard({});
    /** Connections the guard counted when each was offered. */
    const counted: number[] = [];
    const s = await serve({
      guard,
      ...(secure ? { tls: { cert: pki.server.cert, key: pki.server.key } } : {}),
      takeHttp2: (socket, fallback) => {
        offered.push(socket);
        counted.push(guard.size);
        // Taken, then handed back a moment later (as the proxy does when its upstream is out of reach).
        setTimeout(fallback, 50);
        return true;
      },
    });
    servers.push(s);
    assert.equal(await h1Get(s.port, secure), "request over HTTP/1.1");
    assert.equal(offered.length, 0, "an HTTP/1.1 connection was offered");
    assert.equal(await h2Get(s.port, secure), "request over HTTP/2.0");
    assert.equal(offered.length, 1);
    assert.ok(counted[0] >= 1, "an offered connection is under the guard");
  }
  // Declined: the HTTP/2 server serves it at once.
  const declined = await serve({ takeHttp2: () => false });
  servers.push(declined);
  assert.equal(await h2Get(declined.port), "request over HTTP/2.0");
});

test("at the connection cap with every connection busy, a new request is answered 503 with Retry-After", async () => {
  const held: NodeRes[] = [];
  const guard = new ConnectionGuard({ maxConnections: 2 });
  const s = await serve({
    guard,
    // Each request is held open: its connection is busy, not one to close for a newcomer.
    onRequest: (_req, res) => {
      held.push(res);
    },
  });
  servers.push(s);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  const busy = [0, 1].map(() => {
    const r = http.request({ port: s.port, host: "127.0.0.1", method: "POST", agent });
    r.on("error", () => {});
    r.end("{}");
    return r;
  });
  while (held.length < 2) await new Promise((r) => setTimeout(r, 10));
  const refused = await new Promise<{ status?: number; retryAfter?: string }>((resolve, reject) => {
    const r = http.request({ port: s.port, host: "127.0.0.1", method: "POST" }, (res) => {
      res.resume();
      resolve({ status: res.statusCode, retryAfter: res.headers["retry-after"] });
    });
    r.on("error", reject);
    r.end("{}");
  });
  assert.deepEqual(refused, { status: 503, retryAfter: "1" });
  for (const res of held) res.end();
  for (const r of busy) r.destroy();
  agent.destroy();
});

test("requests are counted on their connection while they run (HTTP/1.1 and HTTP/2)", async () => {
  const seen: number[] = [];
  const guard = new ConnectionGuard({});
  const s = await serve({
    guard,
    // Looked at a moment later: an HTTP/2 stream is counted just after its request is handed on.
    onRequest: (req, res) =>
      setImmediate(() => {
        const socket =
          req.httpVersionMajor === 2 ? (req as http2.Http2ServerRequest).stream.session : req.socket;
        seen.push(guard.of(socket as net.Socket | http2.Http2Session)?.active ?? -1);
        answer(req, res);
      }),
  });
  servers.push(s);
  await h1Get(s.port);
  await h2Get(s.port);
  assert.deepEqual(seen, [1, 1]);
});
