// The proxy's HTTP/2 relay against a real Node http2 server upstream and real Node http2 clients on
// loopback: request heads readdressed to the upstream (authority, scheme, base path) whatever the
// client's encoder did (dynamic table, CONTINUATION for big heads, padding), many streams on one
// connection, answers passed back byte for byte, and every call recorded as the other paths record
// it (messages, answer head, trailers, trailers-only answers, resets either way). A head the relay
// cannot decode is reported once and passed on as it came; an upstream it cannot reach sends the
// connection down the proxy's other path.
import assert from "node:assert/strict";
import * as http2 from "node:http2";
import * as https from "node:https";
import * as net from "node:net";
import { after, before, test } from "node:test";
import { frame } from "../../../src/core/http2/frames";
import { encodeHeadersStatic } from "../../../src/core/http2/hpack";
import type { ProxiedCall } from "../../../src/core/proxy/call-store";
import { connectRelayUpstream, relayHttp2 } from "../../../src/core/proxy/h2-relay";
import { rewriteFields } from "../../../src/core/proxy/h2-request-rewrite";
import { type RunningProxy, startProxy } from "../../../src/core/proxy/proxy-server";
import { ConnectionGuard } from "../../../src/core/serve/connection-guard";
import { createFrontServer } from "../../../src/core/serve/front-server";
import { listenOn } from "../../../src/core/serve/listen";
import { createTestPki } from "../../support/tls";

type Call = Omit<ProxiedCall, "id">;

/** An upstream that echoes the body and tells in its answer head what request head it saw. */
async function startUpstream(opts: http2.ServerOptions = {}) {
  const server = http2.createServer(opts);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => {});
    const path = String(headers[":path"]);
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    if (path.endsWith("/Hang")) return;
    if (path.endsWith("/Reset")) {
      stream.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      return;
    }
    if (path.endsWith("/TrailersOnly")) {
      stream.respond(
        { ":status": 200, "content-type": "application/grpc", "grpc-status": "5" },
        { endStream: true },
      );
      return;
    }
    stream.on("end", () => {
      stream.respond(
        {
          ":status": 200,
          "content-type": String(headers["content-type"] ?? "application/octet-stream"),
          "x-seen-authority": String(headers[":authority"]),
          "x-seen-scheme": String(headers[":scheme"]),
          "x-seen-path": path,
          "x-seen-token": String(headers["x-token"] ?? ""),
          "x-seen-big": String(headers["x-big"] ?? "").length,
          "x-seen-te": String(headers.te ?? ""),
        },
        { waitForTrailers: true },
      );
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0", "x-trailer": "t" }));
      stream.end(Buffer.concat(chunks));
    });
  });
  const { port } = await listenOn(server as unknown as net.Server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  };
}

let upstream: Awaited<ReturnType<typeof startUpstream>>;
let proxy: RunningProxy;
const calls: Call[] = [];
const warnings: string[] = [];

before(async () => {
  upstream = await startUpstream({ paddingStrategy: http2.constants.PADDING_STRATEGY_MAX });
  proxy = await startProxy({
    upstream: `${upstream.url}/base/`,
    onCall: (c) => void calls.push(c),
    onWarning: (w) => void warnings.push(w),
  });
});
after(async () => {
  await proxy?.close();
  await upstream?.close();
});

/** One request on `session`: the answer's head, body and trailers. */
function call(
  session: http2.ClientHttp2Session,
  path: string,
  body: Buffer | string,
  extra: http2.OutgoingHttpHeaders = {},
): Promise<{ head: http2.IncomingHttpHeaders; body: Buffer; trailers: http2.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const s = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      ...extra,
    });
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    s.on("response", (h) => {
      head = h;
    });
    s.on("trailers", (t) => {
      trailers = t;
    });
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("error", reject);
    s.on("close", () => resolve({ head, body: Buffer.concat(chunks), trailers }));
    s.end(body);
  });
}

/** A gRPC envelope around `text`. */
function envelope(text: string): Buffer {
  const payload = Buffer.from(text);
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

test("request heads: authority, scheme and path readdressed, hop-by-hop headers dropped, te: trailers kept", () => {
  const target = { scheme: "https", authority: "up.example:8443", basePath: "/base" };
  assert.deepEqual(
    rewriteFields(
      [
        [":method", "POST"],
        [":scheme", "http"],
        [":path", "/a.B/C"],
        ["host", "proxy:1"],
        ["keep-alive", "timeout=5"],
        ["connection", "close"],
        ["te", "trailers"],
        ["x-a", "1"],
        ["x-a", "2"],
      ],
      target,
    ),
    [
      [":method", "POST"],
      [":scheme", "https"],
      [":path", "/base/a.B/C"],
      [":authority", "up.example:8443"],
      ["te", "trailers"],
      ["x-a", "1"],
      ["x-a", "2"],
    ],
  );
  // Trailers from the client: no pseudo-headers added.
  assert.deepEqual(
    rewriteFields(
      [
        ["x-t", "1"],
        ["te", "gzip"],
      ],
      target,
    ),
    [["x-t", "1"]],
  );
});

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(condition(), `timed out waiting for ${what}`);
}

test("many streams on one relayed connection: heads readdressed, bodies and trailers passed, every call recorded", async () => {
  const relayedBefore = proxy.relayed();
  const session = http2.connect(proxy.url, { paddingStrategy: http2.constants.PADDING_STRATEGY_MAX });
  try {
    const n = 200;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        call(session, `/pkg.Svc/Method${i}?q=${i}`, envelope(`message ${i}`), {
          te: "trailers",
          "x-token": `token-${i % 3}`,
        }),
      ),
    );
    results.forEach((r, i) => {
      assert.equal(r.head[":status"], 200);
      assert.equal(r.head["x-seen-authority"], `127.0.0.1:${upstream.port}`);
      assert.equal(r.head["x-seen-scheme"], "http");
      assert.equal(r.head["x-seen-path"], `/base/pkg.Svc/Method${i}?q=${i}`);
      assert.equal(r.head["x-seen-token"], `token-${i % 3}`);
      assert.equal(r.head["x-seen-te"], "trailers");
      assert.deepEqual(r.body, envelope(`message ${i}`));
      assert.equal(r.trailers["x-trailer"], "t");
    });
    assert.equal(proxy.relayed(), relayedBefore + 1, "the connection was not relayed");
    await until(() => calls.filter((c) => c.method.startsWith("pkg.Svc/Method")).length === n, "the calls");
    for (let i = 0; i < n; i++) {
      const c = calls.find((x) => x.method === `pkg.Svc/Method${i}`) as Call;
      assert.equal(c.protocol, "grpc");
      assert.equal(c.httpVersion, "2");
      assert.equal(c.httpStatus, 200);
      assert.equal(c.status, "ok");
      assert.equal(c.requestHeaders["x-token"], `token-${i % 3}`);
      assert.equal(c.responseHeaders["x-seen-path"], `/base/pkg.Svc/Method${i}?q=${i}`);
      assert.equal(c.trailers["x-trailer"], "t");
      assert.deepEqual(c.requestMessages, [Buffer.from(`message ${i}`).toString("base64")]);
      assert.deepEqual(c.responseMessages, [Buffer.from(`message ${i}`).toString("base64")]);
    }
  } finally {
    session.close();
  }
});

test("heads indexed in the client's table, and one big enough for CONTINUATION frames, arrive intact", async () => {
  const session = http2.connect(proxy.url);
  try {
    // One after another, so the client's encoder refers to fields it indexed for the requests before.
    for (let i = 0; i < 5; i++) {
      const r = await call(session, "/pkg.Svc/Indexed", envelope("x"), { "x-token": "same-every-time" });
      assert.equal(r.head["x-seen-token"], "same-every-time");
      assert.equal(r.head["x-seen-path"], "/base/pkg.Svc/Indexed");
    }
    const big = "b".repeat(40_000);
    const r = await call(session, "/pkg.Svc/Big", envelope("y"), { "x-big": big });
    assert.equal(r.head["x-seen-big"], String(big.length));
    await until(() => calls.some((c) => c.method === "pkg.Svc/Big"), "the big call");
    assert.equal(calls.find((c) => c.method === "pkg.Svc/Big")?.requestHeaders["x-big"], big);
  } finally {
    session.close();
  }
});

test("trailers-only answers and resets either way are recorded as the other paths record them", async () => {
  const session = http2.connect(proxy.url);
  try {
    const only = await call(session, "/pkg.Svc/TrailersOnly", envelope("z"));
    assert.equal(only.head["grpc-status"], "5");

    const reset = await call(session, "/pkg.Svc/Reset", envelope("z")).catch((e: Error) => e);
    assert.ok(reset instanceof Error, "the upstream's reset did not reach the client");

    const hang = session.request({
      ":method": "POST",
      ":path": "/pkg.Svc/Hang",
      "content-type": "application/grpc",
      "grpc-timeout": "5S",
    });
    hang.on("error", () => {});
    hang.write(envelope("w"));
    await until(() => hang.pending === false, "the hanging stream to open");
    await new Promise((r) => setTimeout(r, 50));
    hang.close(http2.constants.NGHTTP2_CANCEL);

    await until(
      () => ["TrailersOnly", "Reset", "Hang"].every((m) => calls.some((c) => c.method === `pkg.Svc/${m}`)),
      "the three calls",
    );
    const byName = (m: string) => calls.find((c) => c.method === `pkg.Svc/${m}`) as Call;
    assert.equal(byName("TrailersOnly").status, "not_found");
    assert.equal(byName("Reset").status, "resource_exhausted"); // ENHANCE_YOUR_CALM from the upstream
    assert.equal(byName("Hang").status, "canceled");
    assert.deepEqual(byName("Hang").requestMessages, [Buffer.from("w").toString("base64")]);
    assert.equal(byName("Hang").requestHeaders["grpc-timeout"], "5S");
  } finally {
    session.close();
  }
});

test("a request head that cannot be decoded is passed on as it came and reported once", async () => {
  const before = warnings.length;
  const socket = net.connect(proxy.port, "127.0.0.1");
  const got: Buffer[] = [];
  socket.on("data", (c: Buffer) => got.push(c));
  socket.on("error", () => {});
  await new Promise((r) => socket.once("connect", r));
  const settings = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
  // HEADERS on stream 1 whose block refers to dynamic table entry 70, which the table does not have.
  const headers = Buffer.from([0, 0, 1, 1, 0x5, 0, 0, 0, 1, 0x80 | 70]);
  socket.write(Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), settings, headers]));
  // The upstream's own answer to the block (a GOAWAY with COMPRESSION_ERROR) comes back through.
  const goaway = () => {
    const all = Buffer.concat(got);
    for (let at = 0; at + 9 <= all.length; at += 9 + all.readUIntBE(at, 3)) {
      if (all[at + 3] === 7 && at + 17 <= all.length) return all.readUInt32BE(at + 13);
    }
    return undefined;
  };
  await until(() => goaway() !== undefined, "the upstream's GOAWAY");
  assert.equal(goaway(), http2.constants.NGHTTP2_COMPRESSION_ERROR);
  socket.destroy();
  assert.equal(warnings.length, before + 1, warnings.join("\n"));
  assert.match(warnings[before], /HTTP\/2 relay: cannot decode a request head/);
});

test("an upstream the relay cannot reach sends the connection down the other path (unavailable)", async () => {
  const closed = await startUpstream();
  const url = closed.url;
  await closed.close();
  const lone = await startProxy({ upstream: url, onCall: () => {} });
  const session = http2.connect(lone.url);
  try {
    const r = await call(session, "/pkg.Svc/Down", envelope("x"));
    assert.equal(r.head["grpc-status"], "14");
    assert.equal(lone.relayed(), 0);
  } finally {
    session.close();
    await lone.close();
  }
});

/** A front with a relay behind it and a guard of short timeouts (the proxy's own are 10-30 s). */
async function relayFront(guard: ConnectionGuard, onCall: (c: Call) => void = () => {}) {
  const upstreamUrl = new URL(upstream.url);
  const server = createFrontServer({
    guard,
    onRequest: () => assert.fail("an HTTP/2 connection reached the HTTP/2 server"),
    takeHttp2: (socket) => {
      void connectRelayUpstream(upstreamUrl, {}).then((up) =>
        relayHttp2(socket, up as net.Socket, {
          proxy: { upstream: upstream.url, onCall },
          upstreamUrl,
          guard,
        }),
      );
      return true;
    },
  });
  const { port } = await listenOn(server);
  return { port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test("a relayed connection counts against the guard, stays open while a stream is, and is closed once idle with a GOAWAY", async () => {
  const guard = new ConnectionGuard({ idleTimeoutMs: 300, headersTimeoutMs: 300 });
  const front = await relayFront(guard);
  const session = http2.connect(`http://127.0.0.1:${front.port}`);
  let closedAt = 0;
  let goaway: number | undefined;
  session.on("close", () => {
    closedAt = Date.now();
  });
  session.on("goaway", (code) => {
    goaway = code;
  });
  session.on("error", () => {});
  try {
    const hang = session.request({
      ":method": "POST",
      ":path": "/pkg.Svc/Hang",
      "content-type": "application/grpc",
    });
    hang.on("error", () => {});
    hang.write(envelope("still here"));
    await until(() => guard.size === 1, "the connection to be counted");
    // Three idle timeouts with the stream open and nothing passing: the connection stays.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(closedAt, 0, "the guard closed a connection with a stream open");
    hang.close(http2.constants.NGHTTP2_CANCEL);
    const closedStream = Date.now();
    await until(() => closedAt > 0, "the idle connection to be closed");
    assert.ok(closedAt - closedStream >= 250, "closed before its idle timeout");
    assert.equal(goaway, http2.constants.NGHTTP2_NO_ERROR, "no GOAWAY before the close");
    await until(() => guard.size === 0, "the guard to let it go");
  } finally {
    session.destroy();
    guard.close();
    await front.close();
  }
});

test("TLS on both sides: relayed over TLS with ALPN h2, trusting the upstream as told; no trust or no h2 takes the other path", async () => {
  const pki = await createTestPki(["localhost"]);
  const secure = http2.createSecureServer({ cert: pki.server.cert, key: pki.server.key });
  secure.on("stream", (stream, headers) => {
    stream.respond({
      ":status": 200,
      "x-seen-scheme": String(headers[":scheme"]),
      "x-seen-authority": String(headers[":authority"]),
    });
    stream.end("over tls");
  });
  const { port } = await listenOn(secure as unknown as net.Server);
  // An https server that speaks HTTP/1.1 only: ALPN gives no h2.
  const h1only = https.createServer({ cert: pki.server.cert, key: pki.server.key }, (_req, res) =>
    res.end("h1"),
  );
  const h1port = (await listenOn(h1only)).port;
  const proxies: RunningProxy[] = [];
  const through = async (upstreamUrl: string, ca?: string, insecure = false) => {
    const p = await startProxy({
      upstream: upstreamUrl,
      ca,
      insecure,
      tls: { cert: pki.server.cert, key: pki.server.key },
      onCall: () => {},
    });
    proxies.push(p);
    const session = http2.connect(`https://localhost:${p.port}`, { ca: pki.ca.cert });
    try {
      return { answer: await call(session, "/pkg.Svc/Tls", envelope("x")), relayed: p.relayed() };
    } finally {
      session.close();
    }
  };
  try {
    const ok = await through(`https://localhost:${port}`, pki.ca.cert);
    assert.equal(ok.relayed, 1);
    assert.equal(ok.answer.body.toString(), "over tls");
    assert.equal(ok.answer.head["x-seen-scheme"], "https");
    assert.equal(ok.answer.head["x-seen-authority"], `localhost:${port}`);

    // -k: not verified, relayed all the same.
    const unverified = await through(`https://localhost:${port}`, undefined, true);
    assert.equal(unverified.relayed, 1);
    assert.equal(unverified.answer.body.toString(), "over tls");

    const untrusted = await through(`https://localhost:${port}`);
    assert.equal(untrusted.relayed, 0);
    assert.equal(untrusted.answer.head["grpc-status"], "14");

    const noH2 = await through(`https://localhost:${h1port}`, pki.ca.cert);
    assert.equal(noH2.relayed, 0);
    assert.equal(noH2.answer.head["grpc-status"], "14");
  } finally {
    for (const p of proxies) await p.close();
    await new Promise<void>((r) => secure.close(() => r()));
    await new Promise<void>((r) => h1only.close(() => r()));
  }
});

test("an upstream that lowers its header table size gets heads it can read, request after request", async () => {
  const small = await startUpstream({ settings: { headerTableSize: 0 } });
  const p = await startProxy({ upstream: small.url, onCall: () => {} });
  const session = http2.connect(p.url);
  try {
    for (let i = 0; i < 3; i++) {
      const r = await call(session, `/pkg.Svc/Small${i}`, envelope("x"), { "x-token": "same" });
      assert.equal(r.head["x-seen-path"], `/pkg.Svc/Small${i}`);
      assert.equal(r.head["x-seen-token"], "same");
    }
    assert.equal(p.relayed(), 1);
  } finally {
    session.close();
    await p.close();
    await small.close();
  }
});

test("a closed connection ends its open calls: the client's close is its cancel, the upstream's leaves them unanswered", async () => {
  const own = await startUpstream();
  const seen: Call[] = [];
  const p = await startProxy({ upstream: own.url, onCall: (c) => void seen.push(c) });
  const open = async (path: string) => {
    const session = http2.connect(p.url);
    session.on("error", () => {});
    const s = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc" });
    s.on("error", () => {});
    s.write(envelope("before the close"));
    await until(() => s.pending === false, "the stream to open");
    // Let the upstream see the call before a side goes.
    await new Promise((r) => setTimeout(r, 100));
    return session;
  };
  try {
    const clientGone = await open("/pkg.ClientGone/Hang");
    clientGone.destroy();
    const upstreamGone = await open("/pkg.UpstreamGone/Hang");
    await own.close();
    await until(
      () => ["ClientGone", "UpstreamGone"].every((m) => seen.some((c) => c.method === `pkg.${m}/Hang`)),
      "both calls",
    );
    upstreamGone.destroy();
    const byName = (m: string) => seen.find((c) => c.method === `pkg.${m}/Hang`) as Call;
    assert.equal(byName("ClientGone").status, "canceled");
    assert.equal(byName("UpstreamGone").status, "unavailable");
    assert.match(byName("UpstreamGone").error ?? "", /the upstream closed the connection/);
  } finally {
    await p.close();
    await own.close();
  }
});

test("after the relay's GOAWAY, a stream the client opens is not passed on and opens no call", async () => {
  const guard = new ConnectionGuard({ idleTimeoutMs: 300, headersTimeoutMs: 5000 });
  const seen: Call[] = [];
  const front = await relayFront(guard, (c) => void seen.push(c));
  const socket = net.connect(front.port, "127.0.0.1");
  const got: Buffer[] = [];
  socket.on("data", (c: Buffer) => got.push(c));
  socket.on("error", () => {});
  await new Promise((r) => socket.once("connect", r));
  const head = (path: string) =>
    encodeHeadersStatic([
      [":method", "POST"],
      [":scheme", "http"],
      [":path", path],
      [":authority", "proxy"],
      ["content-type", "application/grpc"],
    ]);
  const frames = () => {
    const all = Buffer.concat(got);
    const out: { type: number; stream: number; payload: Buffer }[] = [];
    for (let at = 0; at + 9 <= all.length; at += 9 + all.readUIntBE(at, 3)) {
      const end = at + 9 + all.readUIntBE(at, 3);
      if (end > all.length) break;
      out.push({ type: all[at + 3], stream: all.readUInt32BE(at + 5), payload: all.subarray(at + 9, end) });
    }
    return out;
  };
  const settingsAck = frame(4, 1, 0, Buffer.alloc(0));
  socket.write(
    Buffer.concat([
      Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
      frame(4, 0, 0, Buffer.alloc(0)),
      frame(1, 0x5, 1, head("/pkg.Before/Call")), // END_HEADERS | END_STREAM
    ]),
  );
  try {
    // The answer to stream 1, then (idle) the relay's GOAWAY naming stream 1 as the last.
    await until(() => frames().some((f) => f.type === 7), "the GOAWAY");
    socket.write(settingsAck);
    const goaway = frames().find((f) => f.type === 7) as { payload: Buffer };
    assert.equal(goaway.payload.readUInt32BE(0), 1);
    assert.equal(goaway.payload.readUInt32BE(4), 0);
    assert.ok(
      frames().some((f) => f.type === 1 && f.stream === 1),
      "stream 1 was not answered",
    );
    socket.write(frame(1, 0x5, 3, head("/pkg.After/Call")));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(!frames().some((f) => f.stream === 3), "stream 3 reached the upstream and was answered");
    assert.deepEqual(
      seen.map((c) => c.method),
      ["pkg.Before/Call"],
    );
  } finally {
    socket.destroy();
    guard.close();
    await front.close();
  }
});
