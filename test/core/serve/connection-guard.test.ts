// The connection guard at its cap, on a plain server that hands connections on as the listener does:
// a new connection whose first bytes arrive while every open connection is busy is answered (HTTP/1.1
// 503 with Retry-After, HTTP/2 SETTINGS and GOAWAY) instead of reset, and a connection closed to make
// room for a new one is told so the same way.
import assert from "node:assert/strict";
import http2 from "node:http2";
import net from "node:net";
import { test } from "node:test";
import { ConnectionGuard } from "../../../src/core/serve/connection-guard";

/** A server that accepts through the guard; each admitted connection is marked busy when `busy`. */
async function guarded(maxConnections: number) {
  const guard = new ConnectionGuard({ maxConnections });
  const state = { busy: true };
  const server = net.createServer((socket) => {
    socket.on("error", () => {});
    if (!guard.accept(socket, true)) return;
    socket.once("data", (chunk: Buffer) => {
      if (!guard.admit(socket, chunk)) return;
      // A request is being processed on it: not a connection to close for a new one.
      if (state.busy) guard.requestStarted(guard.of(socket));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    guard,
    port,
    state,
    close: () => {
      guard.close();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Connects, sends `bytes`, and resolves with what came back when the server closes (or an error). */
function exchange(port: number, bytes: string | Buffer): Promise<{ text: Buffer; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", (err: NodeJS.ErrnoException) => {
      error = err.code;
    });
    socket.on("close", () => resolve({ text: Buffer.concat(chunks), error }));
    socket.write(bytes);
  });
}

async function openBusy(port: number, n: number, guard: ConnectionGuard): Promise<net.Socket[]> {
  const sockets = Array.from({ length: n }, () => {
    const s = net.connect(port, "127.0.0.1");
    s.on("error", () => {});
    s.write("POST / HTTP/1.1\r\nHost: x\r\n\r\n");
    return s;
  });
  while (guard.size < n) await new Promise((r) => setTimeout(r, 10));
  return sockets;
}

test("at the cap with every connection busy, a request is answered 503 with Retry-After, not reset", async () => {
  const s = await guarded(3);
  try {
    const busy = await openBusy(s.port, 3, s.guard);
    const answer = await exchange(s.port, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
    assert.equal(answer.error, undefined);
    const text = answer.text.toString("latin1");
    assert.match(text, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.match(text, /\r\nRetry-After: 1\r\n/);
    assert.match(text, /\r\nConnection: close\r\n/);
    assert.deepEqual(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)), {
      code: "unavailable",
      message: "the server has its maximum of 3 connections open; retry after 1 s",
    });
    assert.equal(s.guard.stats.answered, 1);
    assert.equal(s.guard.size, 3);
    for (const b of busy) b.destroy();
  } finally {
    await s.close();
  }
});

test("at the cap with every connection busy, an HTTP/2 client gets GOAWAY (no stream processed)", async () => {
  const s = await guarded(2);
  try {
    const busy = await openBusy(s.port, 2, s.guard);
    const session = http2.connect(`http://127.0.0.1:${s.port}`);
    const outcome = await new Promise<{ code: number; last: number; debug: string }>((resolve) => {
      session.on("goaway", (code, last, debug) => resolve({ code, last, debug: String(debug) }));
      session.on("error", () => {});
      const stream = session.request({ ":method": "POST", ":path": "/x" });
      stream.on("error", () => {});
      stream.end("{}");
    });
    session.destroy();
    assert.deepEqual(outcome, {
      code: http2.constants.NGHTTP2_NO_ERROR,
      last: 0,
      debug: "the server has its maximum of 2 connections open; retry after 1 s",
    });
    for (const b of busy) b.destroy();
  } finally {
    await s.close();
  }
});

test("a connection closed to make room for a new one is answered 503, not reset", async () => {
  const s = await guarded(1);
  s.state.busy = false;
  try {
    // An open connection with a request head still arriving (no request being processed).
    const victim = exchange(s.port, "POST /slow HTTP/1.1\r\nHost: x\r\n");
    while (s.guard.size < 1) await new Promise((r) => setTimeout(r, 10));
    const newcomer = net.connect(s.port, "127.0.0.1");
    newcomer.on("error", () => {});
    newcomer.write("POST / HTTP/1.1\r\nHost: x\r\n\r\n");
    const answer = await victim;
    assert.equal(answer.error, undefined);
    assert.match(answer.text.toString("latin1"), /^HTTP\/1\.1 503 Service Unavailable\r\nRetry-After: 1\r\n/);
    assert.equal(s.guard.stats.evicted, 1);
    newcomer.destroy();
  } finally {
    await s.close();
  }
});
