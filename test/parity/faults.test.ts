// The client's fault matrix: servers that refuse, reset, go silent, send bad frames, bad trailers,
// bad certificates, the wrong HTTP version, huge or compressed-bomb responses (test/support/
// fault-servers.ts), over Connect, gRPC and gRPC-Web, run through both `protocall curl` and the real
// `buf curl`. Each case requires the same exit code and, for RPC errors, the same error code (and the
// same message where buf's is stable and not worded by Go's network stack). Where protocall differs on
// purpose, the case says so and why (`differs`), and checks both sides of the difference.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { bufPath } from "../support/buf";
import { cliPath } from "../support/cli";
import {
  type Fault,
  type FaultProtocol,
  gzipBomb,
  refusedPort,
  serverCertificate,
  startFaultServer,
  startFullBacklogServer,
  startRawServer,
  startStreamResetServer,
} from "../support/fault-servers";
import { peakRun } from "../support/peak-rss";
import { demoDescriptorSet, startSilentServer } from "../support/servers";
import { createTestPki, type TestPki } from "../support/tls";
import { errorJson, runBoth } from "./harness";

interface Target {
  /** The base URL. */
  url: string;
  /** Extra flags (TLS, HTTP version, timeouts). */
  args?: string[];
  close(): Promise<void>;
}

interface FaultCase {
  name: string;
  protocol: FaultProtocol;
  /** Starts the misbehaving server. */
  start(pki: TestPki): Promise<Target>;
  /** Resolve the method by reflection instead of --schema. */
  noSchema?: boolean;
  /** The method called: the Count stream (default) or Connect unary Greet. */
  unary?: boolean;
  /** The exit code both must have. */
  code: number;
  /** Other exit codes buf gives in a race it loses on a busy machine (protocall must give `code`). */
  bufRace?: { codes: number[]; reason: string };
  /** Other exit codes protocall gives in a race Node's HTTP/2 client loses on a busy machine (README, limits). */
  ourRace?: { codes: number[]; reason: string };
  /** Also compare the error message (stable text that both tools word alike). */
  message?: boolean;
  /**
   * Other words buf prints for the same fault when a race goes the other way on a busy machine; then
   * protocall's message must be `usual` (what buf prints when it does not lose the race).
   */
  bufWording?: { usual: string; alternatives: string[]; reason: string };
  /** A deliberate difference: why, and what protocall does instead. */
  differs?: { reason: string; ours: number };
}

const protocols: FaultProtocol[] = ["connect", "grpc", "grpcweb"];
const noop = async () => {};

function server(fault: Fault, protocol: FaultProtocol, extra: string[] = []): FaultCase["start"] {
  return async () => {
    const s = await startFaultServer(fault, protocol, { http2: protocol === "grpc" });
    return { url: s.url, args: extra, close: () => s.close() };
  };
}

function tlsServer(kind: "wrong-ca" | "wrong-host" | "expired", protocol: FaultProtocol): FaultCase["start"] {
  return async (pki) => {
    // wrong-ca: the client trusts an unrelated CA; wrong-host: the certificate names other.example.
    const certificate =
      kind === "expired"
        ? await serverCertificate(pki, { expired: true })
        : kind === "wrong-host"
          ? await serverCertificate(pki, { names: ["other.example"] })
          : { cert: pki.server.cert, key: pki.server.key };
    const ca = kind === "wrong-ca" ? pki.otherCa.certPath : pki.ca.certPath;
    const s = await startFaultServer("ok", protocol, { http2: true, tls: certificate });
    return { url: s.url, args: ["--cacert", ca], close: () => s.close() };
  };
}

/** Why buf's exit code is not copied where the table says so. */
const HTTP1_DEADLINE =
  "over HTTP/1.1 buf sometimes reports a deadline that expires during the call as a plain failure (exit 1: Go's HTTP/1.1 client returns the context's error unwrapped when it wins the race with connect-go); protocall always reports it as deadline_exceeded (exit 32), as buf does when it loses the race and always over HTTP/2";
const INVALID_STATUS =
  "buf exits with 999 × 8 truncated to a byte (56, which reads as permission_denied) and prints the code as code_999; protocall treats a status code outside the gRPC range as unknown (exit 16), as the gRPC specification asks";

const MISSING_STATUS =
  "connect-node ends the body of an HTTP/2 stream the server resets as if it were complete, so a gRPC response without grpc-status cannot yet be told from a reset stream (buf: internal); protocall reports both as internal (104), buf a clean end without status as unknown (16)";

const RESET_AFTER_HANDOVER =
  "a reset that arrives after Node's HTTP/2 session has taken the socket (the preface already written) reaches the session as a clean close without an error, so protocall can only say unavailable (connection closed before the response) where buf says canceled";

const cases: FaultCase[] = [];
for (const protocol of protocols) {
  const add = (c: Omit<FaultCase, "protocol">) => cases.push({ ...c, protocol });
  const http1 = protocol !== "grpc";
  add({
    name: "connection refused",
    code: 112,
    message: true,
    start: async () => ({ url: `http://127.0.0.1:${await refusedPort()}`, close: noop }),
  });
  add({
    name: "reset before the response headers",
    code: 8,
    start: async () => {
      const s = await startRawServer("reset");
      return { url: `http://${s.host}`, close: () => s.close() };
    },
  });
  add({
    // Both say canceled; the words depend on whether the reset is seen while dialing or reading.
    name: "reset as soon as it is accepted",
    code: 8,
    ourRace: { codes: [112], reason: RESET_AFTER_HANDOVER },
    start: async () => {
      const s = await startRawServer("reset-on-accept");
      return { url: `http://${s.host}`, close: () => s.close() };
    },
  });
  if (protocol === "grpc") {
    add({
      name: "HTTP/2 GOAWAY (ENHANCE_YOUR_CALM) before the response",
      code: 112,
      message: true,
      bufWording: {
        usual: "http2: Transport received GOAWAY from server ErrCode:ENHANCE_YOUR_CALM",
        alternatives: ["http2: client conn could not be established"],
        reason:
          "Go's transport says the connection could not be established when it reads the GOAWAY before the request was handed to the connection",
      },
      start: async () => {
        const s = await startRawServer("goaway");
        return { url: `http://${s.host}`, close: () => s.close() };
      },
    });
  }
  add({
    name: "closed before the response headers",
    code: 112,
    message: true,
    start: async () => {
      const s = await startRawServer("close");
      return { url: `http://${s.host}`, close: () => s.close() };
    },
  });
  add({ name: "reset after the response headers", code: 8, start: server("reset-after-headers", protocol) });
  add({ name: "reset in the middle of the stream", code: 8, start: server("reset-mid-stream", protocol) });
  // A clean close (FIN, no reset) is not a reset: where the body stopped decides (unknown inside a
  // message, internal between two), in Go's words for the read ("unexpected EOF", or the GOAWAY).
  add({
    name: "closed in the middle of a message",
    code: 16,
    message: true,
    start: server("close-mid-message", protocol),
  });
  add({
    name: "closed between two messages",
    code: 104,
    message: true,
    start: server("close-between-messages", protocol),
  });
  if (protocol === "grpc") {
    add({
      name: "GOAWAY and close in the middle of a message",
      code: 16,
      message: true,
      start: server("goaway-mid-message", protocol),
    });
  }
  for (const [flags, what] of [
    [["--timeout", "2s"], "--timeout 2s"],
    [["--connect-timeout", "1"], "--connect-timeout 1"],
  ] as const) {
    add({
      name: `full listen backlog (never accepted), ${what}`,
      code: 32,
      message: true,
      start: async () => {
        const s = await startFullBacklogServer();
        return { url: `http://${s.host}`, args: [...flags], close: () => s.close() };
      },
    });
  }
  add({
    // 5 s: the call must be sent before the deadline, and a busy machine can take seconds to start.
    name: "silent after accept, --timeout 5s",
    code: 32,
    message: true,
    bufRace: http1 ? { codes: [1], reason: HTTP1_DEADLINE } : undefined,
    start: async () => {
      const s = await startSilentServer();
      return { url: `http://${s.host}`, args: ["--timeout", "5s"], close: () => s.close() };
    },
  });
  add({
    name: "silent after the response headers, --timeout 5s",
    code: 32,
    message: true,
    bufRace: http1 ? { codes: [1], reason: HTTP1_DEADLINE } : undefined,
    start: server("silent-after-headers", protocol, ["--timeout", "5s"]),
  });
  add({
    name: "a length prefix longer than the body",
    code: 104,
    message: true,
    start: server("bad-length-prefix", protocol),
  });
  add({ name: "a message that is not protobuf", code: 1, start: server("garbage-body", protocol) });
  if (protocol === "connect") {
    add({
      name: 'an end-of-stream error with code "bogus"',
      code: 16,
      start: server("status-999", protocol),
    });
  } else {
    add({
      name: "grpc-status: 999",
      code: 56,
      differs: { reason: INVALID_STATUS, ours: 16 },
      start: server("status-999", protocol),
    });
  }
  add({
    name: "no status at the end",
    code: protocol === "connect" ? 104 : 16,
    message: protocol === "connect",
    differs: protocol === "connect" ? undefined : { reason: MISSING_STATUS, ours: 104 },
    start: server("missing-status", protocol),
  });
  // buf's message depends on which of its goroutines sees the HTTP/1.1 answer first.
  add({
    name: "an HTTP/1.1-only server with --http2-prior-knowledge",
    code: 112,
    // On a busy machine the server's answer and close can beat buf's write of the preface: buf then
    // reports the failed write (`write: broken pipe`, canceled) instead of what it read.
    bufRace: { codes: [8], reason: "the server closed before buf's preface was written (broken pipe)" },
    start: async () => {
      const s = await startFaultServer("ok", protocol);
      return { url: s.url, args: ["--http2-prior-knowledge"], close: () => s.close() };
    },
  });
  // The server's fault, so `internal` (connect-es alone says invalid_argument or data_loss).
  add({ name: "error details that do not decode", code: 104, start: server("bad-details", protocol) });
  add({
    name: "an end of stream that does not parse",
    code: protocol === "grpc" ? 16 : 104,
    start: server("bad-end", protocol),
  });
  add({ name: "a message over 4 MiB", code: 64, message: true, start: server("huge", protocol) });
  add({
    name: "a gzip message that expands past 4 MiB",
    code: 64,
    message: true,
    start: server("huge-compressed", protocol),
  });
  add({ name: "a gzip bomb (1 MB → 1 GiB)", code: 64, message: true, start: server("bomb", protocol) });
  add({
    name: "a certificate from an unknown authority",
    code: 112,
    message: true,
    start: tlsServer("wrong-ca", protocol),
  });
  add({
    name: "a certificate for another host",
    code: 112,
    message: true,
    start: tlsServer("wrong-host", protocol),
  });
  // The message names the current time to the second (the two tools run in the same second or not).
  add({ name: "an expired certificate", code: 112, start: tlsServer("expired", protocol) });
}
// Connect unary (the body is the message itself, no envelope).
for (const [fault, name, code] of [
  ["huge", "a message over 4 MiB", 64],
  ["huge-compressed", "a gzip message that expands past 4 MiB", 64],
  ["bomb", "a gzip bomb (1 MB → 1 GiB)", 64],
  ["garbage-body", "a message that is not protobuf", 1],
  ["reset-after-headers", "reset after the response headers", 8],
] as const) {
  cases.push({
    name: `unary: ${name}`,
    protocol: "connect",
    unary: true,
    code,
    message: code === 64,
    start: server(fault, "connect"),
  });
}

// An HTTP/2 stream the server resets (RST_STREAM) while the connection stays up: the gRPC mapping of
// HTTP/2 codes (connect-go's), and a code outside it as a failed read (in the body) or `unavailable`.
for (const [code, name, when, exit] of [
  [0x8, "CANCEL", "in-body", 8],
  [0x7, "REFUSED_STREAM", "in-body", 112],
  [0xb, "ENHANCE_YOUR_CALM", "in-body", 64],
  [0xc, "INADEQUATE_SECURITY", "in-body", 56],
  [0x2, "INTERNAL_ERROR", "in-body", 104],
  [0x5, "STREAM_CLOSED", "in-body", 16],
  [0x0, "NO_ERROR", "before-response", 104],
  [0x8, "CANCEL", "before-response", 8],
  [0xd, "HTTP_1_1_REQUIRED", "before-response", 112],
] as const) {
  cases.push({
    name: `RST_STREAM ${name} ${when === "in-body" ? "in the middle of a message" : "before the response"}`,
    protocol: "grpc",
    code: exit,
    message: true,
    start: async () => {
      const s = await startStreamResetServer(code, when);
      return { url: `http://${s.host}`, close: () => s.close() };
    },
  });
}

// Connect unary bodies cut short of their Content-Length without a reset: a clean close over
// HTTP/1.1, an HTTP/2 stream that ends early (both: unknown, "read message: unexpected EOF").
cases.push({
  name: "unary: closed in the middle of the body",
  protocol: "connect",
  unary: true,
  code: 16,
  message: true,
  start: server("close-mid-message", "connect"),
});
cases.push({
  name: "unary: an HTTP/2 body shorter than its Content-Length",
  protocol: "connect",
  unary: true,
  code: 16,
  message: true,
  start: async () => {
    const s = await startFaultServer("short-body", "connect", { http2: true });
    return { url: s.url, args: ["--http2-prior-knowledge"], close: () => s.close() };
  },
});

// --timeout bounds every phase: a silent server during reflection fails at --timeout before the
// call is sent (exit 1 in both tools); a TLS handshake that never ends, with --schema, is part of the
// call (deadline_exceeded, exit 32 in both).
for (const [name, scheme, schema, code] of [
  ["silent during reflection, --timeout 2s", "http", false, 1],
  ["silent during the TLS handshake, --timeout 2s", "https", true, 32],
] as const) {
  cases.push({
    name,
    protocol: "grpc",
    code,
    noSchema: !schema,
    start: async () => {
      const s = await startSilentServer();
      return { url: `${scheme}://${s.host}`, args: ["--timeout", "2s"], close: () => s.close() };
    },
  });
}

/** Matches of the last run, printed at the end (the parity count). */
const outcome: { name: string; match: boolean }[] = [];

describe("parity: the fault matrix", { concurrency: 3, timeout: 600_000 }, () => {
  let pki: TestPki;
  let schema: string;
  before(async () => {
    [pki, schema] = await Promise.all([createTestPki(["localhost"]), demoDescriptorSet(), gzipBomb()]);
  });
  after(() => {
    const matched = outcome.filter((o) => o.match).length;
    console.log(`fault matrix: ${matched}/${outcome.length} cases match buf curl`);
  });

  test("a gzip bomb (1 MB → 1 GiB) ends with bounded memory in both tools", async (t) => {
    const target = await startFaultServer("bomb", "grpc", { http2: true });
    try {
      const args = ["curl", "--protocol", "grpc", "--schema", schema, "-d", "{}"];
      args.push(`${target.url}/demo.v1.DemoService/Count`);
      const ours = await peakRun(process.execPath, [cliPath, ...args]);
      const buf = await peakRun(bufPath, args);
      t.diagnostic(
        `gzip bomb: protocall ${ours.peakMb} MB peak RSS, ${ours.ms} ms; buf ${buf.peakMb} MB, ${buf.ms} ms`,
      );
      assert.equal(ours.code, 64, ours.stderr);
      assert.equal(buf.code, 64, buf.stderr);
      // Inflating it whole took 3.1 GB; the cap leaves the process near its size at rest.
      assert.ok(ours.peakMb < 256, `protocall's peak RSS ${ours.peakMb} MB`);
    } finally {
      await target.close();
    }
  });

  for (const c of cases) {
    test(`${c.protocol}: ${c.name}`, async (t) => {
      const target = await c.start(pki);
      try {
        const method = c.unary ? "demo.v1.GreetService/Greet" : "demo.v1.DemoService/Count";
        const args = [
          "--protocol",
          c.protocol,
          ...(c.noSchema ? [] : ["--schema", schema]),
          ...(target.args ?? []),
          "-d",
          c.unary ? '{"name": "x"}' : '{"count": 1}',
          `${target.url}/${method}`,
        ];
        const pair = await runBoth(args, { timeoutMs: 30_000 });
        const { ours, buf } = pair;
        const context = `args: ${JSON.stringify(args)}\nprotocall exit ${ours.code}:\n${ours.stderr}\nbuf exit ${buf.code}:\n${buf.stderr}`;
        assert.ok(!ours.timedOut && !buf.timedOut, `a run did not end\n${context}`);
        if (c.bufRace?.codes.includes(buf.code)) {
          t.diagnostic(`buf lost a race: ${c.bufRace.reason}`);
          assert.equal(ours.code, c.code, `protocall's exit code\n${context}`);
          outcome.push({ name: `${c.protocol}: ${c.name}`, match: false });
          return;
        }
        assert.equal(buf.code, c.code, `buf's exit code\n${context}`);
        if (c.ourRace?.codes.includes(ours.code)) {
          t.diagnostic(`protocall lost a race: ${c.ourRace.reason}`);
          outcome.push({ name: `${c.protocol}: ${c.name}`, match: false });
          return;
        }
        if (c.differs) {
          t.diagnostic(`deliberate difference: ${c.differs.reason}`);
          assert.equal(ours.code, c.differs.ours, `protocall's exit code\n${context}`);
          outcome.push({ name: c.name, match: false });
          return;
        }
        outcome.push({ name: `${c.protocol}: ${c.name}`, match: ours.code === buf.code });
        assert.equal(ours.code, buf.code, `exit codes differ\n${context}`);
        if (ours.code >= 8) {
          const a = errorJson(ours.stderr);
          const b = errorJson(buf.stderr);
          assert.equal(a.code, b.code, `error codes differ\n${context}`);
          if (c.bufWording?.alternatives.includes(b.message ?? "")) {
            t.diagnostic(`buf lost a race: ${c.bufWording.reason}`);
            assert.equal(a.message, c.bufWording.usual, `protocall's error message\n${context}`);
          } else if (c.message) assert.equal(a.message, b.message, `error messages differ\n${context}`);
        } else {
          assert.match(ours.stderr, /^protocall: \S.*\n$/, `one line\n${context}`);
        }
      } finally {
        await target.close();
      }
    });
  }
});
