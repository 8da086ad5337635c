// Byte parity of the request headers that `protocall curl` and `buf curl` send, for the Connect, gRPC
// and gRPC-Web protocols over HTTP/1.1, h2c and TLS: a server records every header field as it
// arrived (test/support/header-echo-server.ts), protocall and buf make the same call to it one after
// the other, and the two lists must be equal, field for field. Normalisations, each for a documented
// reason:
//  - HTTP/2 fields are compared sorted by name: Go's HTTP/2 client writes regular fields in map order
//    (it changes from run to run) and its pseudo-headers in another fixed order than Node's (RFC 9113,
//    section 8.3: any order is valid);
//  - HTTP/1.1: Node's client always adds `Connection: keep-alive`, which Go leaves implicit (the same
//    persistent connection in HTTP/1.1); it is removed from protocall's list and checked to be there;
//  - timeout values (`Grpc-Timeout`, `Connect-Timeout-Ms`): buf sends the time left, which shrinks while
//    it loads the schema; the unit must match and both values must lie within the --timeout;
//  - the default `User-Agent` and gRPC-Web's `X-User-Agent` name each tool and its library (checked
//    for their form); most cases set `-A`, so both send the same User-Agent byte for byte.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { runBufCurl } from "../support/buf";
import { runCli } from "../support/cli";
import { type RecordedRequest, startHeaderEchoServer } from "../support/header-echo-server";
import { demoDescriptorSet } from "../support/servers";
import { createTestPki, type TestPki } from "../support/tls";
import { errorJson } from "./harness";

type Listener = "h1" | "h2c" | "tls";

interface Case {
  name: string;
  protocol: "connect" | "grpc" | "grpcweb";
  listener: Listener;
  /** Method path under the demo API. */
  method: string;
  data?: string;
  args?: string[];
  /** The schema comes from reflection (the server answers 404, so only reflection requests are made). */
  reflection?: boolean;
  /** The default User-Agent (no -A). */
  defaultAgent?: boolean;
}

const unary = { method: "demo.v1.GreetService/Greet", data: '{"name": "Ada"}' };
const serverStream = { method: "demo.v1.DemoService/Count", data: '{"count": 2}' };
const clientStream = { method: "demo.v1.DemoService/Sum", data: '{"number": 1} {"number": 2}' };
const bidi = { method: "demo.v1.DemoService/Chat", data: '{"text": "a"}' };

const cases: Case[] = [];
for (const protocol of ["connect", "grpc", "grpcweb"] as const) {
  // gRPC needs HTTP/2; Connect and gRPC-Web use HTTP/1.1 over plain http unless told otherwise.
  const plain: Listener = protocol === "grpc" ? "h2c" : "h1";
  cases.push(
    { name: "unary", protocol, listener: plain, ...unary },
    { name: "server stream", protocol, listener: plain, ...serverStream },
    { name: "client stream", protocol, listener: plain, ...clientStream },
    { name: "bidi stream (h2c)", protocol, listener: "h2c", ...bidi, args: ["--http2-prior-knowledge"] },
    { name: "unary over TLS (ALPN h2)", protocol, listener: "tls", ...unary },
    { name: "server stream over TLS", protocol, listener: "tls", ...serverStream },
    { name: "no request data", protocol, listener: plain, method: clientStream.method },
    { name: "--timeout 12.5s", protocol, listener: plain, ...unary, args: ["--timeout", "12.5s"] },
    { name: "--timeout 90s, stream", protocol, listener: plain, ...serverStream, args: ["--timeout", "90s"] },
    {
      name: "-H headers (repeated, binary), --user",
      protocol,
      listener: plain,
      ...unary,
      // No commas in values: buf splits a value at commas, protocall does not (on purpose).
      args: [
        "-H",
        "X-Trace: abc",
        "-H",
        "x-multi: 1",
        "-H",
        "X-Multi: 2",
        "-H",
        "x-data-bin: AAEC",
        "-u",
        "ada:secret",
      ],
    },
    { name: "Host header", protocol, listener: plain, ...unary, args: ["-H", "Host: api.example:8443"] },
    { name: "default User-Agent", protocol, listener: plain, ...unary, defaultAgent: true },
    // Reflection needs HTTP/2: both tools use h2c over plain http.
    { name: "reflection requests", protocol, listener: "h2c", ...unary, reflection: true },
    {
      name: "reflection requests with --reflect-header",
      protocol,
      listener: "h2c",
      ...unary,
      reflection: true,
      args: ["--reflect-header", "X-Reflect: yes", "-H", "X-Call: 1"],
    },
  );
}

/** The form of each tool's default User-Agent and gRPC-Web X-User-Agent. */
const agentForms = {
  ours: { "user-agent": /^connect-es\/\S+ protocall\/\S+$/, "x-user-agent": /^connect-es\/\S+$/ },
  buf: {
    "user-agent": /^(connect-go|grpc-go-connect)\/\S+ \(go\S+\) buf\/\S+$/,
    "x-user-agent": /^grpc-go-connect\/\S+ \(go\S+\)$/,
  },
};

/**
 * The header fields of a request in comparable form (see the file header), checking what is left out.
 * `timeoutMs` bounds timeout values.
 */
function comparable(r: RecordedRequest, tool: "ours" | "buf", c: Case, timeoutMs?: number): string[] {
  let fields = r.headers;
  if (r.httpVersion === "1.1" && tool === "ours") {
    const keepAlive = fields.filter(([n, v]) => n === "Connection" && v === "keep-alive");
    assert.equal(keepAlive.length, 1, `Node's client announces keep-alive once: ${JSON.stringify(fields)}`);
    fields = fields.filter(([n]) => n !== "Connection");
  }
  if (r.httpVersion === "2.0") {
    fields = [...fields].sort(([a], [b]) => {
      const pa = a.startsWith(":");
      const pb = b.startsWith(":");
      if (pa !== pb) return pa ? -1 : 1;
      return a < b ? -1 : a > b ? 1 : 0;
    });
  }
  return fields.map(([name, value]) => {
    const key = name.toLowerCase();
    if (key === "grpc-timeout" || key === "connect-timeout-ms") {
      const m = /^(\d{1,8})([numSMH]?)$/.exec(value);
      assert.ok(m, `${tool}: a ${name} value: ${value}`);
      const scale = { n: 1e-6, u: 1e-3, m: 1, S: 1e3, M: 60e3, H: 3600e3, "": 1 }[m[2]] ?? 1;
      const ms = Number(m[1]) * scale;
      assert.ok(
        timeoutMs !== undefined && ms > 0 && ms <= timeoutMs,
        `${tool}: ${name}: ${value} is within --timeout`,
      );
      return `${name}: <timeout>${m[2]}`;
    }
    if ((key === "user-agent" && c.defaultAgent) || key === "x-user-agent") {
      assert.match(value, agentForms[tool][key], `${tool}: the ${name} header names the tool`);
      return `${name}: <${key}>`;
    }
    return `${name}: ${value}`;
  });
}

describe("parity: request headers of all three protocols, field for field", {
  concurrency: 3,
  timeout: 600_000,
}, () => {
  let pki: TestPki;
  let schema: string;
  before(async () => {
    // A descriptor set: buf compiles a directory on every run, which can eat a short --timeout.
    [pki, schema] = await Promise.all([createTestPki(), demoDescriptorSet()]);
  });

  for (const c of cases) {
    test(`${c.protocol}: ${c.name}`, async () => {
      const server = await startHeaderEchoServer(pki);
      try {
        const base =
          c.listener === "h1" ? server.h1Url : c.listener === "h2c" ? server.h2cUrl : server.tlsUrl;
        const args = [
          "--protocol",
          c.protocol,
          ...(c.reflection ? [] : ["--schema", schema]),
          ...(c.listener === "tls" ? ["--cacert", pki.ca.certPath] : []),
          ...(c.defaultAgent ? [] : ["-A", "parity-test/1.0"]),
          ...(c.args ?? []),
          ...(c.data !== undefined ? ["-d", c.data] : []),
          `${base}/${c.method}`,
        ];
        const ours = await runCli(["curl", ...args], { timeoutMs: 30_000 });
        const oursRequests = server.requests.splice(0);
        const buf = await runBufCurl(args, { timeoutMs: 30_000 });
        const bufRequests = server.requests.splice(0);
        const context = `args: ${JSON.stringify(args)}\nprotocall stderr:\n${ours.stderr}\nbuf stderr:\n${buf.stderr}`;
        assert.ok(ours.code !== 0 && buf.code !== 0, `both fail on the 404 answer\n${context}`);
        assert.ok(bufRequests.length > 0, `buf made a request\n${context}`);
        if (c.reflection) {
          // After a failed look-up protocall asks for the service list (to suggest names), on the same
          // stream path with the same headers: one request more than buf.
          assert.equal(oursRequests.length, bufRequests.length + 1, `one more request\n${context}`);
          const [last, extra] = oursRequests.slice(-2);
          assert.deepEqual(extra.headers, last.headers, "the list request's headers");
        } else {
          assert.equal(oursRequests.length, bufRequests.length, `the same number of requests\n${context}`);
        }
        if (buf.code >= 8) {
          assert.equal(ours.code, buf.code, `exit codes\n${context}`);
          assert.deepEqual(errorJson(ours.stderr), errorJson(buf.stderr), `error JSON\n${context}`);
        }
        const at = c.args?.indexOf("--timeout") ?? -1;
        const timeoutMs = at >= 0 ? Number.parseFloat(c.args?.[at + 1] ?? "") * 1000 : undefined;
        bufRequests.forEach((b, i) => {
          const a = oursRequests[i];
          assert.equal(a.httpVersion, b.httpVersion, `HTTP version of request ${i + 1}\n${context}`);
          assert.deepEqual(
            comparable(a, "ours", c, timeoutMs),
            comparable(b, "buf", c, timeoutMs),
            `request ${i + 1}\n${context}`,
          );
        });
      } finally {
        await server.close();
      }
    });
  }
});
