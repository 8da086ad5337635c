// Parity with `buf curl` against servers nobody on this project wrote: the gRPC interop TestService on
// grpc-go (with its reflection service) and on grpc Python (C-core; no reflection in Debian, so the
// schema is a descriptor set of the same protos), built from Debian's packages by
// scripts/build-interop.sh. Every interop test case that curl flags can express runs through
// both tools, over h2c and TLS, and must give the same stdout, exit code and error JSON. The servers
// speak gRPC only (neither grpc-go nor grpc Python serves gRPC-Web or Connect).
//
// Verbose cases also compare, line for line, the request headers of the call and the response headers
// and trailers that the server sent back, with one documented normalisation: the User-Agent line is
// left out (each tool names itself; README "Where protocall curl differs from buf curl on purpose").
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  buildInteropServers,
  type InteropBuild,
  type InteropServer,
  type InteropServerKind,
  startInteropServer,
} from "../support/interop-servers";
import { createTestPki, type TestPki } from "../support/tls";
import { assertParity, errorJson, type Pair, runBoth } from "./harness";

const zeros = (n: number) => Buffer.alloc(n).toString("base64");
const json = (...docs: unknown[]) => docs.map((d) => JSON.stringify(d)).join("\n");

/** The interop cases' sizes (grpc/doc/interop-test-descriptions.md). */
const requestSizes = [27182, 8, 1828, 45904];
const responseSizes = [31415, 9, 2653, 58979];
const SPECIAL_MESSAGE = "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n";
const ECHO_HEADERS = [
  "-H",
  "x-grpc-test-echo-initial: test_initial_metadata_value",
  "-H",
  "x-grpc-test-echo-trailing-bin: q6ur",
];

type Transport = "h2c" | "tls";

interface Case {
  name: string;
  /** `Service/Method` under grpc.testing. */
  method: string;
  args?: string[];
  /** TLS flags instead of `--cacert <the test CA>`. */
  tlsArgs?: (pki: TestPki) => string[];
  /** The schema from the descriptor set for both servers (no reflection, so the call itself fails). */
  descriptorSet?: boolean;
  /** Sent on stdin with `-d @-` (the large cases exceed a command-line argument). */
  stdin?: string;
  code: number;
  /** Compares the verbose request and response header lines of the call too. */
  verbose?: boolean;
  only?: Transport;
  /** How to compare RPC errors (see harness.ts); default the whole error JSON. */
  errors?: "json" | "code";
  /** Only for the server with reflection (grpc-go). */
  reflectionOnly?: boolean;
  /** Extra checks on the pair (after parity). */
  check?: (pair: Pair) => void;
}

const cases: Case[] = [
  {
    name: "empty_unary",
    method: "TestService/EmptyCall",
    args: ["-d", "{}"],
    code: 0,
    check: ({ ours }) => assert.equal(ours.stdout, "{}\n"),
  },
  {
    name: "large_unary",
    method: "TestService/UnaryCall",
    stdin: json({ responseType: "COMPRESSABLE", responseSize: 314159, payload: { body: zeros(271828) } }),
    code: 0,
    check: ({ ours }) => assert.equal(JSON.parse(ours.stdout).payload.body, zeros(314159)),
  },
  {
    name: "client_streaming",
    method: "TestService/StreamingInputCall",
    stdin: json(...requestSizes.map((n) => ({ payload: { body: zeros(n) } }))),
    code: 0,
    check: ({ ours }) => assert.equal(ours.stdout, '{\n  "aggregatedPayloadSize": 74922\n}\n'),
  },
  {
    name: "server_streaming",
    method: "TestService/StreamingOutputCall",
    args: ["-d", JSON.stringify({ responseParameters: responseSizes.map((size) => ({ size })) })],
    code: 0,
    check: ({ ours }) => assert.equal(ours.stdout.match(/"body"/g)?.length, 4),
  },
  {
    name: "ping_pong",
    method: "TestService/FullDuplexCall",
    stdin: json(
      ...responseSizes.map((size, i) => ({
        responseParameters: [{ size }],
        payload: { body: zeros(requestSizes[i]) },
      })),
    ),
    code: 0,
    check: ({ ours }) => assert.equal(ours.stdout.match(/"body"/g)?.length, 4),
  },
  {
    name: "empty_stream",
    method: "TestService/FullDuplexCall",
    code: 0,
    check: ({ ours }) => assert.equal(ours.stdout, ""),
  },
  {
    name: "custom_metadata (unary)",
    method: "TestService/UnaryCall",
    args: ["-v", ...ECHO_HEADERS],
    stdin: json({ responseSize: 31415, payload: { body: zeros(27182) } }),
    code: 0,
    verbose: true,
  },
  {
    name: "custom_metadata (bidi)",
    method: "TestService/FullDuplexCall",
    args: ["-v", ...ECHO_HEADERS],
    stdin: json({ responseParameters: [{ size: 31415 }], payload: { body: zeros(27182) } }),
    code: 0,
    verbose: true,
  },
  {
    name: "status_code_and_message (unary)",
    method: "TestService/UnaryCall",
    args: ["-d", JSON.stringify({ responseStatus: { code: 2, message: "test status message" } })],
    code: 16,
  },
  {
    name: "status_code_and_message (bidi)",
    method: "TestService/FullDuplexCall",
    args: ["-d", JSON.stringify({ responseStatus: { code: 2, message: "test status message" } })],
    code: 16,
  },
  {
    name: "special_status_message",
    method: "TestService/UnaryCall",
    args: ["-d", JSON.stringify({ responseStatus: { code: 2, message: SPECIAL_MESSAGE } })],
    code: 16,
    check: ({ ours }) => assert.equal(errorJson(ours.stderr).message, SPECIAL_MESSAGE),
  },
  { name: "unimplemented_method", method: "TestService/UnimplementedCall", args: ["-d", "{}"], code: 96 },
  {
    name: "unimplemented_service",
    method: "UnimplementedService/UnimplementedCall",
    args: ["-d", "{}"],
    code: 96,
  },
  {
    name: "timeout_on_sleeping_server",
    // The server sleeps a minute before its first response. Server streaming rather than the case's
    // FullDuplexCall: when the deadline ends a bidi stream, buf reports it as a plain failure (exit 1)
    // or as the RPC error (exit 32) depending on timing. buf's --timeout covers the whole command (a
    // deadline that ends before the call starts is a plain failure too), so the schema comes from the
    // descriptor set and the deadline leaves time for a busy machine.
    method: "TestService/StreamingOutputCall",
    args: ["--timeout", "8s"],
    stdin: json({
      responseParameters: [{ size: 31415, intervalUs: 60_000_000 }],
      payload: { body: zeros(27182) },
    }),
    descriptorSet: true,
    code: 32,
    // The server gets the deadline too (Grpc-Timeout) and may end the call first: grpc Python then
    // sends "Deadline Exceeded", which buf prints when it arrives before buf's own deadline fires (a
    // race that depends on timing). The codes must match; protocall's text is Go's.
    errors: "code",
    check: ({ ours, buf }) => {
      assert.equal(errorJson(ours.stderr).message, "context deadline exceeded");
      assert.ok(
        ["context deadline exceeded", "Deadline Exceeded"].includes(errorJson(buf.stderr).message ?? ""),
      );
    },
  },
  {
    name: "TLS with an unrelated CA",
    method: "TestService/EmptyCall",
    tlsArgs: (pki) => ["--cacert", pki.otherCa.certPath],
    args: ["-d", "{}"],
    descriptorSet: true,
    code: 112,
    only: "tls",
  },
  {
    name: "TLS with a wrong server name",
    method: "TestService/EmptyCall",
    tlsArgs: (pki) => ["--cacert", pki.ca.certPath, "--servername", "wrong.example"],
    args: ["-d", "{}"],
    descriptorSet: true,
    code: 112,
    only: "tls",
  },
  {
    name: "TLS with -k (no verification)",
    method: "TestService/EmptyCall",
    tlsArgs: () => ["-k"],
    args: ["-d", "{}"],
    code: 0,
    only: "tls",
  },
  {
    // buf says only that the service is not in the schema; protocall names the TLS failure. Both
    // exit 1 (not an RPC error: reflection failed).
    name: "TLS with an unrelated CA, schema from reflection",
    method: "TestService/EmptyCall",
    tlsArgs: (pki) => ["--cacert", pki.otherCa.certPath],
    args: ["-d", "{}"],
    code: 1,
    only: "tls",
    reflectionOnly: true,
    check: ({ ours }) => assert.match(ours.stderr, /x509: certificate signed by unknown authority/),
  },
];

/**
 * The request (`> (#N)`) and response (`< (#N)`) header lines of the last HTTP request in verbose
 * stderr, without the tool's prefix and without User-Agent. Apart, because buf may print a bidi
 * stream's response headers before its request headers.
 */
function lastCallHeaderLines(stderr: string, tool: string): { request: string[]; response: string[] } {
  const lines = stderr
    .split("\n")
    .filter((l) => l.startsWith(`${tool}: `))
    .map((l) => l.slice(tool.length + 2));
  let last = 0;
  for (const l of lines) {
    const m = /^[<>] \(#(\d+)\)/.exec(l);
    if (m) last = Math.max(last, Number(m[1]));
  }
  return {
    request: lines.filter((l) => l.startsWith(`> (#${last}) `) && !/^> \(#\d+\) User-Agent: /.test(l)),
    response: lines.filter((l) => l.startsWith(`< (#${last}) `)),
  };
}

// Flat, so the concurrency below bounds the whole suite (two processes per test).
describe("parity: gRPC interop cases against grpc-go and grpc Python", {
  concurrency: 3,
  timeout: 1_200_000,
}, () => {
  let pki: TestPki;
  let built: InteropBuild;
  const servers = new Map<InteropServerKind, InteropServer>();
  before(async () => {
    [pki, built] = await Promise.all([createTestPki(), buildInteropServers()]);
    const started = await Promise.all([
      startInteropServer("grpc-go", pki),
      startInteropServer("grpc-python", pki),
    ]);
    for (const s of started) servers.set(s.kind, s);
  });
  after(async () => {
    await Promise.all([...servers.values()].map((s) => s.close()));
  });

  /** grpc-go answers reflection; grpc Python gets the descriptor set of the same protos. */
  const schemaArgs = (kind: InteropServerKind, c?: Case) =>
    kind === "grpc-go" && !c?.descriptorSet ? [] : ["--schema", built.descriptorSet];
  const baseUrl = (kind: InteropServerKind, t: Transport) => {
    const s = servers.get(kind);
    if (!s) throw new Error(`the ${kind} server did not start`);
    return t === "tls" ? s.tlsUrl : s.plainUrl;
  };
  const transportArgs = (t: Transport) => (t === "tls" ? ["--cacert", pki.ca.certPath] : []);

  for (const kind of ["grpc-go", "grpc-python"] as const) {
    for (const transport of ["h2c", "tls"] as const) {
      const label = `${kind} ${transport}`;
      for (const c of cases) {
        if (c.only && c.only !== transport) continue;
        if (c.reflectionOnly && kind !== "grpc-go") continue;
        test(`${label}: ${c.name}`, async () => {
          const full = [
            "--protocol",
            "grpc",
            ...schemaArgs(kind, c),
            ...(c.tlsArgs ? c.tlsArgs(pki) : transportArgs(transport)),
            ...(c.args ?? []),
            ...(c.stdin !== undefined ? ["-d", "@-"] : []),
            `${baseUrl(kind, transport)}/grpc.testing.${c.method}`,
          ];
          const pair = await assertParity(full, {
            code: c.code,
            stdin: c.stdin,
            timeoutMs: 60_000,
            errors: c.errors,
          });
          if (c.verbose) {
            const ours = lastCallHeaderLines(pair.ours.stderr, "protocall");
            const buf = lastCallHeaderLines(pair.buf.stderr, "buf");
            assert.ok(
              buf.response.some((l) => /X-Grpc-Test-Echo-Trailing-Bin: q6ur$/.test(l)) &&
                buf.response.some((l) => /X-Grpc-Test-Echo-Initial: test_initial_metadata_value$/.test(l)),
              `the server echoes the metadata to buf:\n${buf.response.join("\n")}`,
            );
            assert.deepEqual(ours.request, buf.request, "verbose request headers of the call");
            assert.deepEqual(
              ours.response,
              buf.response,
              "verbose response headers and trailers of the call",
            );
          }
          c.check?.(pair);
        });
      }

      test(`${label}: --list-services and --list-methods`, async () => {
        for (const flag of ["--list-services", "--list-methods"]) {
          const pair = await assertParity(
            [
              "--protocol",
              "grpc",
              ...schemaArgs(kind),
              ...transportArgs(transport),
              flag,
              baseUrl(kind, transport),
            ],
            { code: 0, timeoutMs: 60_000 },
          );
          assert.match(pair.ours.stdout, /^grpc\.testing\.TestService(\/EmptyCall)?$/m);
        }
      });

      test(`${label}: cancel_after_begin (Ctrl-C once the client stream has started)`, async () => {
        const args = [
          "--protocol",
          "grpc",
          "-v",
          ...schemaArgs(kind),
          ...transportArgs(transport),
          "-d",
          "@-",
          `${baseUrl(kind, transport)}/grpc.testing.TestService/StreamingInputCall`,
        ];
        // buf keeps reading stdin after Ctrl-C and exits when it ends; protocall exits at once. Stdin is
        // closed 2 s after the interrupt.
        const pair = await runBoth(args, {
          timeoutMs: 60_000,
          closeStdinAfterInterruptMs: 2000,
          // Both print this once the call has begun (buf sends the request headers with the first
          // message, so there may be no HTTP request yet).
          interruptWhen: /\* Invoking RPC grpc\.testing\.TestService\.StreamingInputCall\n/,
        });
        assert.equal(pair.buf.code, 8, `buf's exit code\n${pair.buf.stderr}`);
        assert.equal(pair.ours.code, 8, `protocall's exit code\n${pair.ours.stderr}`);
        // Go's context says "context canceled"; a Ctrl-C that reaches buf while its connection is still
        // being set up (a TLS handshake on a busy machine) surfaces the interrupt's own cause instead, a
        // race that depends on timing. Protocall's text is Go's.
        assert.deepEqual(errorJson(pair.ours.stderr), { code: "canceled", message: "context canceled" });
        const theirs = errorJson(pair.buf.stderr);
        assert.equal(theirs.code, "canceled", pair.buf.stderr);
        assert.ok(
          ["context canceled", "interrupt signal received"].includes(theirs.message ?? ""),
          pair.buf.stderr,
        );
      });
    }
  }
});
