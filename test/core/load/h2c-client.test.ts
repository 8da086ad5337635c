// The light path's HTTP/2 client (src/core/load/h2c-client.ts) against Node's own http2 server on
// loopback: the response heads it decodes must equal what Node's http2 client reads of the same
// answers (Huffman-coded values, repeats, a dynamic table that evicts, a head split over CONTINUATION
// frames), bodies larger than either side's flow control window must go through, and resets, GOAWAY,
// a server's stream limit, PING and a server that goes away must each end as they should.
import assert from "node:assert/strict";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import { after, before, describe, test } from "node:test";
import { encodeHeaders } from "../../../src/core/http2/hpack";
import {
  CANCEL,
  H2cConnection,
  type H2cFailure,
  type H2cResponse,
  REFUSED_STREAM,
} from "../../../src/core/load/h2c-client";

let server: http2.Http2Server;
let port: number;
const sessions = new Set<http2.ServerHttp2Session>();
let maxConcurrent = 0;
/** The server side of the connection that carried the last request. */
let lastSession: http2.Http2Session | undefined;
let active = 0;

/** What each path answers. */
function handle(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
  const path = String(headers[":path"]);
  const chunks: Buffer[] = [];
  lastSession = stream.session;
  active++;
  maxConcurrent = Math.max(maxConcurrent, active);
  stream.on("close", () => active--);
  stream.on("error", () => {}); // resets, ours and the client's, end streams here on purpose
  stream.on("data", (c: Buffer) => chunks.push(c));
  stream.on("end", () => {
    const body = Buffer.concat(chunks);
    const n = Number(/n=(\d+)/.exec(path)?.[1] ?? 0);
    if (path.startsWith("/echo")) {
      stream.respond({ ":status": 200, "content-type": "application/octet-stream" });
      stream.end(body);
    } else if (path.startsWith("/headers")) {
      // Values that change per call (the table evicts), that Huffman coding shortens, and repeats.
      stream.respond({
        ":status": 200,
        "content-type": "application/proto",
        "x-count": String(n),
        "x-text": `www.example.com/${"abc".repeat(n % 7)}/${n}`,
        "x-latin": "caf\u00e9 \u00fcber",
        "set-cookie": [`a=${n}`, "b=2; Path=/"],
        "x-repeat": ["one", "two"],
        "x-big": n % 5 === 0 ? "z".repeat(3000) : "small",
      });
      stream.end(`body ${n}`);
    } else if (path.startsWith("/huge-head")) {
      stream.respond({ ":status": 200, "x-huge": "h".repeat(40_000), "x-after": "yes" });
      stream.end("ok");
    } else if (path.startsWith("/big")) {
      stream.respond({ ":status": 200 });
      stream.end(Buffer.alloc(n, 7));
    } else if (path.startsWith("/reset")) {
      stream.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    } else if (path.startsWith("/slow")) {
      setTimeout(() => {
        if (stream.destroyed) return;
        stream.respond({ ":status": 200 });
        stream.end("late");
      }, n);
    } else if (path.startsWith("/goaway")) {
      // Answers this stream, and tells the client nothing after it will be processed.
      stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id);
      stream.respond({ ":status": 200 });
      stream.end("bye");
    } else if (path.startsWith("/hang")) {
      // Never answers: the test ends the connection.
    } else {
      stream.respond({ ":status": 404 });
      stream.end();
    }
  });
}

before(async () => {
  server = http2.createServer({ settings: { maxConcurrentStreams: 4 } });
  server.on("stream", handle);
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  for (const s of sessions) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

function headersOf(path: string, length: number): Buffer {
  return encodeHeaders([
    [":method", "POST"],
    [":scheme", "http"],
    [":authority", `127.0.0.1:${port}`],
    [":path", path],
    ["content-length", String(length)],
  ]);
}

function call(
  h: H2cConnection,
  path: string,
  body: Uint8Array = Buffer.from("hi"),
): Promise<{ failure?: H2cFailure; response?: H2cResponse }> {
  return new Promise((resolve) =>
    h.request(headersOf(path, body.length), body, (failure, response) => resolve({ failure, response })),
  );
}

/** The same request through Node's http2 client: its response head and body. */
async function viaNode(path: string): Promise<{ head: http2.IncomingHttpHeaders; body: Buffer }> {
  const client = http2.connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise((resolve, reject) => {
      const req = client.request({ ":method": "POST", ":path": path });
      let head: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      req.on("response", (h) => (head = h));
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve({ head, body: Buffer.concat(chunks) }));
      req.on("error", reject);
      req.end("hi");
    });
  } finally {
    client.close();
  }
}

/** A head without the Date header (it may tick between two calls), `:status` as a string. */
function comparable(head: Record<string, unknown>) {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(head)) if (k !== "date") out[k] = k === ":status" ? String(v) : v;
  return out;
}

describe("the light path's HTTP/2 client", { timeout: 60_000 }, () => {
  test("decodes each response head as Node's http2 client does, across a table that evicts", async () => {
    const h = new H2cConnection("127.0.0.1", port);
    try {
      for (let n = 0; n < 40; n++) {
        const [mine, node] = await Promise.all([call(h, `/headers?n=${n}`), viaNode(`/headers?n=${n}`)]);
        assert.equal(mine.failure, undefined);
        assert.ok(mine.response);
        assert.deepEqual(comparable(mine.response.head), comparable(node.head), `call ${n}`);
        assert.equal(mine.response.body.toString(), node.body.toString());
      }
      const [mine, node] = await Promise.all([call(h, "/huge-head"), viaNode("/huge-head")]);
      assert.ok(mine.response, JSON.stringify(mine.failure));
      assert.deepEqual(comparable(mine.response.head), comparable(node.head));
    } finally {
      h.close();
    }
  });

  test("sends and receives bodies beyond both flow control windows", async () => {
    const h = new H2cConnection("127.0.0.1", port);
    try {
      const body = Buffer.alloc(300_000);
      for (let i = 0; i < body.length; i++) body[i] = i % 251;
      const echo = await call(h, "/echo", body);
      assert.ok(echo.response, JSON.stringify(echo.failure));
      assert.ok(echo.response.body.equals(body));
      const big = await call(h, "/big?n=20000000");
      assert.ok(big.response, JSON.stringify(big.failure));
      assert.equal(big.response.body.length, 20_000_000);
      assert.ok(big.response.body.every((b) => b === 7));
    } finally {
      h.close();
    }
  });

  test("keeps to the server's stream limit, queuing the rest", async () => {
    const h = new H2cConnection("127.0.0.1", port);
    maxConcurrent = 0;
    try {
      const done = await Promise.all(Array.from({ length: 20 }, (_, i) => call(h, `/slow?n=${20 + i}`)));
      assert.ok(done.every((d) => d.response?.body.toString() === "late"));
      assert.ok(maxConcurrent <= 4, `${maxConcurrent} streams at once`);
    } finally {
      h.close();
    }
  });

  test("ends a reset stream with its code, and the connection stays usable", async () => {
    const h = new H2cConnection("127.0.0.1", port);
    try {
      const reset = await call(h, "/reset");
      assert.deepEqual(reset.failure, { kind: "reset", code: http2.constants.NGHTTP2_ENHANCE_YOUR_CALM });
      assert.equal((await call(h, "/echo")).response?.body.toString(), "hi");
      assert.ok(h.usable);
    } finally {
      h.close();
    }
  });

  test("after GOAWAY, answers what the server took, refuses the rest and takes no more", async () => {
    let ended = 0;
    const h = new H2cConnection("127.0.0.1", port, () => ended++);
    const slow = call(h, "/slow?n=300");
    await new Promise((r) => setTimeout(r, 50));
    const bye = call(h, "/goaway");
    const [a, b] = await Promise.all([slow, bye]);
    assert.equal(b.response?.body.toString(), "bye");
    // The slow stream came before the GOAWAY's last stream, so it is still answered.
    assert.equal(a.response?.body.toString(), "late");
    assert.equal(h.usable, false);
    assert.equal(ended, 1);
  });

  test("a request after the server's GOAWAY on a stream above its last one is refused", async () => {
    const h = new H2cConnection("127.0.0.1", port);
    // Both requests go out in one write; the server processes the first and refuses the second.
    const first = call(h, "/goaway");
    const second = call(h, "/slow?n=10");
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.response?.body.toString(), "bye");
    assert.deepEqual(b.failure, { kind: "reset", code: REFUSED_STREAM });
  });

  test("answers the server's PING", async () => {
    const h = new H2cConnection("127.0.0.1", port);
    try {
      await call(h, "/echo");
      const s = lastSession;
      assert.ok(s && !s.closed);
      const rtt = await new Promise<number>((resolve, reject) =>
        s.ping((err, ms) => (err ? reject(err) : resolve(ms))),
      );
      assert.ok(rtt >= 0);
    } finally {
      h.close();
    }
  });

  test("cancels what is in flight", async () => {
    const h = new H2cConnection("127.0.0.1", port);
    try {
      const pending = call(h, "/hang");
      await new Promise((r) => setTimeout(r, 50));
      h.cancelAll();
      assert.deepEqual((await pending).failure, { kind: "reset", code: CANCEL });
      assert.equal((await call(h, "/echo")).response?.body.toString(), "hi");
    } finally {
      h.close();
    }
  });

  test("a server that closes its connections ends every stream on them, and the connection", async () => {
    const h = new H2cConnection("127.0.0.1", port);
    const hanging = Array.from({ length: 3 }, () => call(h, "/hang"));
    while (active < 3) await new Promise((r) => setTimeout(r, 10));
    for (const s of sessions) s.destroy();
    for (const r of await Promise.all(hanging)) {
      assert.ok(r.failure, "no response, and no hang");
    }
    assert.equal(h.usable, false);
    const late = await call(h, "/echo");
    assert.equal(late.failure?.kind, "connection");
  });

  test("a server that drops the socket, or was never there, ends the streams with why", async () => {
    const dropping = net.createServer((sock) => sock.once("data", () => sock.destroy()));
    await new Promise<void>((r) => dropping.listen(0, "127.0.0.1", r));
    const freePort = (dropping.address() as AddressInfo).port;
    try {
      const h = new H2cConnection("127.0.0.1", freePort);
      const dropped = await call(h, "/echo");
      assert.deepEqual(dropped.failure, {
        kind: "connection",
        message: "the connection closed before the response",
      });
    } finally {
      await new Promise<void>((r) => dropping.close(() => r()));
    }
    const nobody = new H2cConnection("127.0.0.1", freePort);
    const refused = await call(nobody, "/echo");
    assert.equal(refused.failure?.kind, "connection");
    assert.match(refused.failure?.kind === "connection" ? refused.failure.message : "", /ECONNREFUSED/);
  });

  test("a server that is not HTTP/2 ends the streams instead of hanging", async () => {
    const http1 = net.createServer((sock) => {
      sock.once("data", () => {
        sock.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      });
    });
    await new Promise<void>((r) => http1.listen(0, "127.0.0.1", r));
    try {
      const h = new H2cConnection("127.0.0.1", (http1.address() as AddressInfo).port);
      const r = await call(h, "/echo");
      assert.equal(r.failure?.kind, "connection");
    } finally {
      await new Promise<void>((r) => http1.close(() => r()));
    }
  });
});
