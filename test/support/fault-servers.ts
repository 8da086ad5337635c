// Servers that misbehave on purpose, for the client's fault matrix (test/parity/faults.test.ts): each
// answers DemoService/Count (a server stream) or GreetService/Greet (Connect unary) with one fault, in
// the framing of the protocol asked for (Connect, gRPC, gRPC-Web), written byte by byte so that the
// fault is exactly what a broken or hostile server sends. Raw `net`, `http` and `http2` servers: a
// real framework would refuse to send most of these.
import { mkdtempSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as https from "node:https";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGzip, gzipSync } from "node:zlib";
import selfsigned from "selfsigned";
import { FrameType, frame, goawayFrame } from "../../src/core/http2/frames";
import type { TestPki } from "./tls";

export type FaultProtocol = "connect" | "grpc" | "grpcweb";

export type Fault =
  | "ok"
  | "reset-after-headers"
  | "reset-mid-stream"
  | "close-mid-message"
  | "close-between-messages"
  | "goaway-mid-message"
  | "short-body"
  | "silent-after-headers"
  | "bad-length-prefix"
  | "garbage-body"
  | "status-999"
  | "missing-status"
  | "huge"
  | "huge-compressed"
  | "bomb"
  | "bad-details"
  | "bad-end";

export interface FaultServer {
  /** `http(s)://127.0.0.1:<port>` (or `https://localhost:<port>`). */
  url: string;
  close(): Promise<void>;
}

/** The decompressed size of the gzip bomb: 1 GiB of zeros, about 1 MB compressed. */
export const BOMB_SIZE = 1 << 30;
/** One message just over the 4 MiB limit. */
export const HUGE_SIZE = (4 << 20) + 1024;

let bomb: Promise<Buffer> | undefined;

/** 1 GiB of zeros, gzipped (built once per process, streamed so it never sits in memory whole). */
export function gzipBomb(): Promise<Buffer> {
  bomb ??= (async () => {
    const gz = createGzip({ level: 9 });
    const parts: Buffer[] = [];
    gz.on("data", (c: Buffer) => parts.push(c));
    const done = new Promise((ok) => gz.on("end", ok));
    const chunk = Buffer.alloc(1 << 20);
    for (let i = 0; i < BOMB_SIZE / chunk.length; i++) {
      if (!gz.write(chunk)) await new Promise((ok) => gz.once("drain", ok));
    }
    gz.end();
    await done;
    return Buffer.concat(parts);
  })();
  return bomb;
}

/** A protobuf message: field 2 (CountResponse.text / any string field 1 for Greet) of `size` bytes. */
function bigMessage(size: number, field = 2): Buffer {
  const payload = Buffer.alloc(size, 0x61);
  const tag = Buffer.from([(field << 3) | 2]);
  return Buffer.concat([tag, varint(size), payload]);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

function envelope(flags: number, data: Buffer, claimed = data.length): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(claimed, 1);
  return Buffer.concat([head, data]);
}

/** CountResponse{number: 1}. */
const ONE = Buffer.from([0x08, 0x01]);

interface Framing {
  contentType: string;
  encodingHeader: string;
  /** The body's end (trailers in the body), or undefined when trailers go in HTTP trailers. */
  end(status: string | undefined): Buffer;
  trailers(status: string | undefined): Record<string, string> | undefined;
}

function framing(protocol: FaultProtocol): Framing {
  switch (protocol) {
    case "grpc":
      return {
        contentType: "application/grpc",
        encodingHeader: "grpc-encoding",
        end: () => Buffer.alloc(0),
        trailers: (status): Record<string, string> =>
          status === undefined ? { "x-end": "1" } : { "grpc-status": status },
      };
    case "grpcweb":
      return {
        contentType: "application/grpc-web+proto",
        encodingHeader: "grpc-encoding",
        end: (status) =>
          envelope(0x80, Buffer.from(status === undefined ? "x-end: 1\r\n" : `grpc-status: ${status}\r\n`)),
        trailers: () => undefined,
      };
    default:
      return {
        contentType: "application/connect+proto",
        encodingHeader: "connect-content-encoding",
        end: (status) =>
          status === undefined
            ? Buffer.alloc(0)
            : envelope(
                0x02,
                Buffer.from(status === "0" ? "{}" : JSON.stringify({ error: { code: status } })),
              ),
        trailers: () => undefined,
      };
  }
}

type Res = http.ServerResponse | http2.Http2ServerResponse;
type Req = http.IncomingMessage | http2.Http2ServerRequest;

/** Ends the request's connection: "reset" (RST), "close" (FIN alone), "goaway" (HTTP/2 GOAWAY, then FIN). */
type EndConnection = (how: "reset" | "close" | "goaway") => void;

/** A length prefix that promises 100 bytes, and 10 of them. */
const PARTIAL_MESSAGE = Buffer.concat([envelope(0, Buffer.alloc(0), 100), Buffer.alloc(10, 0x61)]);

/** Answers one request with the fault; `end` ends the request's connection. */
async function answer(
  fault: Fault,
  protocol: FaultProtocol,
  req: Req,
  res: Res,
  end: EndConnection,
): Promise<void> {
  const reset = () => end("reset");
  req.resume();
  await new Promise((ok) => req.once("end", ok));
  const unary = req.url?.endsWith("GreetService/Greet") ?? false;
  if (unary) return answerUnary(fault, res, end);
  const f = framing(protocol);
  const headers: Record<string, string> = { "content-type": f.contentType };
  const compressed = fault === "huge-compressed" || fault === "bomb";
  if (compressed) headers[f.encodingHeader] = "gzip";
  const w = res as http.ServerResponse;
  w.writeHead(200, headers);
  const send = (b: Buffer) => new Promise<void>((ok) => (w.write(b) ? ok() : w.once("drain", ok)));
  const finish = async (status: string | undefined) => {
    const end = f.end(status);
    if (end.length > 0) await send(end);
    const t = f.trailers(status);
    if (t) w.addTrailers(t);
    w.end();
  };
  switch (fault) {
    case "ok":
      await send(envelope(0, ONE));
      return finish("0");
    case "reset-after-headers":
      w.flushHeaders();
      setTimeout(reset, 100);
      return;
    case "reset-mid-stream":
      await send(envelope(0, ONE));
      setTimeout(reset, 100);
      return;
    case "close-mid-message":
    case "goaway-mid-message":
      // The connection ends cleanly (no reset) inside a message.
      await send(PARTIAL_MESSAGE);
      setTimeout(() => end(fault === "goaway-mid-message" ? "goaway" : "close"), 100);
      return;
    case "close-between-messages":
      await send(envelope(0, ONE));
      setTimeout(() => end("close"), 100);
      return;
    case "silent-after-headers":
      w.flushHeaders();
      return;
    case "bad-length-prefix":
      await send(envelope(0, ONE, 1000));
      return finish("0");
    case "garbage-body":
      await send(envelope(0, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])));
      return finish("0");
    case "status-999":
      await send(envelope(0, ONE));
      return finish(protocol === "connect" ? "bogus" : "999");
    case "missing-status":
      await send(envelope(0, ONE));
      return finish(undefined);
    case "huge":
      await send(envelope(0, bigMessage(HUGE_SIZE)));
      return finish("0");
    case "huge-compressed":
      await send(envelope(1, gzipSync(bigMessage(HUGE_SIZE))));
      return finish("0");
    case "bomb":
      await send(envelope(1, await gzipBomb()));
      return finish("0");
    case "bad-details": {
      // An error whose details are not a google.rpc.Status (gRPC: grpc-status-details-bin;
      // Connect: a detail whose value is not base64 of a message).
      await send(envelope(0, ONE));
      if (protocol === "connect") {
        await send(
          envelope(
            0x02,
            Buffer.from(
              JSON.stringify({
                error: {
                  code: "not_found",
                  message: "x",
                  details: [{ type: "google.rpc.ErrorInfo", value: "!!" }],
                },
              }),
            ),
          ),
        );
        w.end();
        return;
      }
      const details = Buffer.from([0xff, 0xff, 0xff]).toString("base64");
      if (protocol === "grpcweb") {
        await send(
          envelope(
            0x80,
            Buffer.from(`grpc-status: 5\r\ngrpc-message: x\r\ngrpc-status-details-bin: ${details}\r\n`),
          ),
        );
        w.end();
        return;
      }
      w.addTrailers({ "grpc-status": "5", "grpc-message": "x", "grpc-status-details-bin": details });
      w.end();
      return;
    }
    case "bad-end":
      // The end of the stream is not what the protocol says it is (Connect: JSON that does not parse;
      // gRPC-Web: a trailer block that is not header lines; gRPC: grpc-status that is not a number).
      await send(envelope(0, ONE));
      if (protocol === "connect") {
        await send(envelope(0x02, Buffer.from("{not json")));
        w.end();
        return;
      }
      if (protocol === "grpcweb") {
        await send(envelope(0x80, Buffer.from("not a header block")));
        w.end();
        return;
      }
      w.addTrailers({ "grpc-status": "abc" });
      w.end();
      return;
  }
}

/** Connect unary (GreetService/Greet): the body is the message itself. */
async function answerUnary(fault: Fault, res: Res, end: EndConnection): Promise<void> {
  const w = res as http.ServerResponse;
  const headers: Record<string, string> = { "content-type": "application/proto" };
  let body: Buffer;
  switch (fault) {
    case "close-mid-message":
    case "short-body":
      // Content-Length 100, 10 bytes of it; then the connection closes cleanly ("close-mid-message"),
      // or the response ends there ("short-body", an HTTP/2 stream ended early).
      w.writeHead(200, { ...headers, "content-length": "100" });
      if (fault === "short-body") {
        w.end(Buffer.alloc(10, 0x0a));
        return;
      }
      w.write(Buffer.alloc(10, 0x0a));
      setTimeout(() => end("close"), 100);
      return;
    case "huge":
      body = bigMessage(HUGE_SIZE, 1);
      break;
    case "huge-compressed":
      headers["content-encoding"] = "gzip";
      body = gzipSync(bigMessage(HUGE_SIZE, 1));
      break;
    case "bomb":
      headers["content-encoding"] = "gzip";
      body = await gzipBomb();
      break;
    case "garbage-body":
      body = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
      break;
    case "reset-after-headers":
      w.writeHead(200, headers);
      w.flushHeaders();
      setTimeout(() => end("reset"), 100);
      return;
    default:
      body = Buffer.from([0x0a, 0x02, 0x68, 0x69]);
  }
  w.writeHead(200, { ...headers, "content-length": String(body.length) });
  w.end(body);
}

export interface FaultServerOptions {
  /** HTTP/2 (h2c, or h2 over TLS); default HTTP/1.1. */
  http2?: boolean;
  /** TLS with this certificate and key; the URL then names `localhost`. */
  tls?: { cert: string; key: string };
}

/** Starts a server that answers every request with `fault` in `protocol`'s framing. */
export async function startFaultServer(
  fault: Fault,
  protocol: FaultProtocol,
  options: FaultServerOptions = {},
): Promise<FaultServer> {
  const sockets = new Map<number, net.Socket>();
  const handler = (req: Req, res: Res) => {
    const port = (req.socket as net.Socket).remotePort ?? 0;
    const end: EndConnection = (how) => {
      const session = (req as http2.Http2ServerRequest).stream?.session;
      if (how === "goaway" && session) session.destroy();
      else if (how === "reset") sockets.get(port)?.resetAndDestroy();
      else sockets.get(port)?.destroy();
    };
    answer(fault, protocol, req, res, end).catch(() => end("reset"));
  };
  let server: net.Server;
  if (options.http2 && options.tls) {
    server = http2.createSecureServer({ ...options.tls, allowHTTP1: true }, handler);
  } else if (options.http2) {
    server = http2.createServer(handler);
  } else if (options.tls) {
    server = https.createServer(options.tls, handler);
  } else {
    server = http.createServer(handler);
  }
  const track = (socket: net.Socket) => {
    socket.on("error", () => {});
    if (socket.remotePort) sockets.set(socket.remotePort, socket);
    socket.once("close", () => sockets.delete(socket.remotePort ?? 0));
  };
  server.on("connection", track);
  server.on("secureConnection", () => {});
  server.on("tlsClientError", () => {});
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `${options.tls ? "https://localhost" : "http://127.0.0.1"}:${port}`,
    async close() {
      for (const s of sockets.values()) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

export interface RawServer {
  /** `127.0.0.1:<port>` */
  host: string;
  close(): Promise<void>;
}

/**
 * A TCP server that reads what the client sends, then: "reset" resets the connection (RST), "close"
 * closes it (FIN), before any response.
 */
export async function startRawServer(
  behaviour: "reset" | "close" | "reset-on-accept" | "goaway",
): Promise<RawServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    // Once the request has arrived (no more bytes for 100 ms): a client still writing its body when
    // the reset comes would report the failed write instead (buf then says "use of closed network
    // connection", unavailable), which is another fault than the one this server stands for.
    let quiet: NodeJS.Timeout | undefined;
    // Or reset at once, before reading anything.
    if (behaviour === "reset-on-accept") {
      socket.resetAndDestroy();
      return;
    }
    // Or, to an HTTP/2 client, SETTINGS and GOAWAY (ENHANCE_YOUR_CALM, no stream processed), and
    // nothing more.
    if (behaviour === "goaway") {
      socket.once("data", () => {
        const enhanceYourCalm = 0xb;
        socket.write(
          Buffer.concat([frame(FrameType.SETTINGS, 0, 0, Buffer.alloc(0)), goawayFrame(0, enhanceYourCalm)]),
        );
      });
      return;
    }
    socket.on("data", () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => (behaviour === "reset" ? socket.resetAndDestroy() : socket.end()), 100);
    });
    socket.on("close", () => clearTimeout(quiet));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    host: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/**
 * An HTTP/2 (h2c) server, written frame by frame, that resets the first stream of each connection
 * (RST_STREAM with `code`) while the connection stays up: "before-response" instead of answering,
 * "in-body" after gRPC response headers and 10 bytes of a message that promises 100. Node's own
 * HTTP/2 server cannot do this: it ends the stream (END_STREAM) before it resets it.
 */
export async function startStreamResetServer(
  code: number,
  when: "before-response" | "in-body",
): Promise<RawServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    // Once the request has arrived (no more bytes for 100 ms), as in startRawServer.
    let quiet: NodeJS.Timeout | undefined;
    let answered = false;
    socket.on("data", () => {
      clearTimeout(quiet);
      if (answered) return;
      quiet = setTimeout(() => {
        answered = true;
        const settings = [frame(4, 0, 0, Buffer.alloc(0)), frame(4, 1, 0, Buffer.alloc(0))];
        const reset = Buffer.alloc(4);
        reset.writeUInt32BE(code);
        if (when === "in-body") {
          // HPACK: :status 200 (static index 8), content-type (static name 31) application/grpc.
          const type = Buffer.from("application/grpc");
          const headers = Buffer.concat([Buffer.from([0x88, 0x0f, 0x10, type.length]), type]);
          socket.write(
            Buffer.concat([...settings, frame(1, 0x4, 1, headers), frame(0, 0, 1, PARTIAL_MESSAGE)]),
          );
          setTimeout(() => socket.write(frame(3, 0, 1, reset)), 100);
        } else {
          socket.write(Buffer.concat([...settings, frame(3, 0, 1, reset)]));
        }
      }, 100);
    });
    socket.on("close", () => clearTimeout(quiet));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    host: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/**
 * A port on loopback whose listen backlog is full: a socket that listens (backlog 0) but never
 * accepts, its queue filled by connections of its own, so a new connection is never established (the
 * kernel drops its SYN). Node cannot listen without accepting, so a small Python program holds it.
 */
export async function startFullBacklogServer(): Promise<RawServer> {
  const { spawn } = await import("node:child_process");
  const program = [
    "import socket, sys, time",
    "s = socket.socket()",
    's.bind(("127.0.0.1", 0))',
    "s.listen(0)",
    "port = s.getsockname()[1]",
    "held = []",
    "for _ in range(4):",
    "    c = socket.socket()",
    "    c.setblocking(False)",
    "    try:",
    '        c.connect(("127.0.0.1", port))',
    "    except BlockingIOError:",
    "        pass",
    "    held.append(c)",
    "time.sleep(0.2)",
    "print(port, flush=True)",
    "sys.stdin.read()",
  ].join("\n");
  const child = spawn("python3", ["-c", program], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise<string>((ok, fail) => {
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`the full-backlog server exited (${code})`)));
    child.stdout.once("data", (c: Buffer) => ok(c.toString().trim()));
  });
  return {
    host: `127.0.0.1:${port}`,
    async close() {
      const exited = new Promise((ok) => child.once("exit", ok));
      child.stdin.end();
      await exited;
    },
  };
}

/** A port on loopback where nothing listens (bound, then released). */
export async function refusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

/**
 * A server certificate signed by the test CA: for `names` (DNS) and 127.0.0.1, or, when `expired`,
 * one that expired yesterday.
 */
export async function serverCertificate(
  pki: TestPki,
  options: { names?: string[]; expired?: boolean } = {},
): Promise<{ cert: string; key: string }> {
  const day = 24 * 3600 * 1000;
  const names = options.names ?? ["localhost"];
  const dates = options.expired
    ? { notBeforeDate: new Date(Date.now() - 30 * day), notAfterDate: new Date(Date.now() - day) }
    : {};
  const generated = await selfsigned.generate([{ name: "commonName", value: names[0] ?? "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    curve: "P-256",
    ...dates,
    ca: { key: pki.ca.key, cert: pki.ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [...names.map((value) => ({ type: 2 as const, value })), { type: 7, ip: "127.0.0.1" }],
      },
    ],
  } as Parameters<typeof selfsigned.generate>[1]);
  return { cert: generated.cert, key: generated.private };
}

/** Writes `text` to a new temporary file and returns its path. */
export function tempFile(name: string, text: string | Buffer): string {
  const path = join(mkdtempSync(join(tmpdir(), "protocall-faults-")), name);
  writeFileSync(path, text);
  return path;
}
