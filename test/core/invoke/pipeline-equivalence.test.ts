// The CLI and the editor make a call the same way: each case runs as the real `protocall curl`
// (dist/cli.js) and through the editor's call session with the options the same arguments parse to,
// and what the user sees must be identical: stdout is the session's messages (or listing), one per
// line; stderr is the session's error text; the exit codes are equal.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type CallResult, createCallSession } from "../../../src/core/invoke/call-session";
import { parseCurlArgs } from "../../../src/core/invoke/curl-args";
import { type RunResult, runCli } from "../../support/cli";
import {
  type DemoServer,
  demoDescriptorSet,
  type SilentServer,
  startDemoServer,
  startSilentServer,
  startTlsDemoServer,
} from "../../support/servers";
import { createTestPki } from "../../support/tls";

interface Case {
  name: string;
  args: () => string[];
  /** The exit code both must have. */
  exit: number;
  /** What stderr must match (besides being equal). */
  stderr?: RegExp;
  /**
   * The call's deadline and the server's (from the timeout header) run out together: whichever answers
   * first is reported, our "context deadline exceeded" or the server's "the operation timed out".
   * Each run may see either, so the two are compared with the wording made one.
   */
  deadlineRace?: boolean;
}

const oneDeadlineWording = (text: string) =>
  text.replace('"the operation timed out"', '"context deadline exceeded"');

describe("the CLI and the editor's session say the same", { timeout: 300_000 }, () => {
  const home = mkdtempSync(join(tmpdir(), "protocall-equivalence-"));
  const session = createCallSession();
  let demo: DemoServer;
  let noReflection: DemoServer;
  let tls: DemoServer;
  let mtls: DemoServer;
  let caPath: string;
  let status: Server;
  let statusUrl: string;
  let silent: SilentServer;
  let schema: string;

  before(async () => {
    const pki = await createTestPki();
    caPath = pki.ca.certPath;
    [demo, noReflection, tls, mtls, schema] = await Promise.all([
      startDemoServer(),
      startDemoServer({ reflection: false }),
      startTlsDemoServer(pki),
      startTlsDemoServer(pki, { requestClientCert: true }),
      demoDescriptorSet(),
    ]);
    // Answers every request with an HTTP error that is not an RPC response.
    status = createServer((req, res) => {
      req.resume();
      res.writeHead(503, { "content-type": "text/plain" }).end("down for maintenance");
    });
    await new Promise<void>((ok) => status.listen(0, "127.0.0.1", ok));
    statusUrl = `http://127.0.0.1:${(status.address() as AddressInfo).port}`;
    silent = await startSilentServer();
    writeFileSync(join(home, "bad.json"), '\n  {"nam": "b"}\n');
  });

  after(async () => {
    await session.close();
    await Promise.all([demo.close(), noReflection.close(), tls.close(), mtls.close()]);
    status.closeAllConnections();
    await new Promise<void>((ok) => status.close(() => ok()));
    await silent.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cases: Case[] = [
    {
      name: "success (unary, schema from reflection)",
      args: () => ["-d", '{"name": "same"}', `${demo.url}/demo.v1.GreetService/Greet`],
      exit: 0,
    },
    {
      name: "a unary error with details",
      args: () => [
        "--protocol",
        "grpc",
        "-d",
        '{"code": "CODE_NOT_FOUND", "message": "no such order", "details": ["DETAIL_ERROR_INFO", "DETAIL_QUOTA_EXCEEDED"]}',
        `${demo.url}/demo.v1.DemoService/Fail`,
      ],
      exit: 40,
      stderr: /^\{\n {3}"code": "not_found",\n {3}"message": "no such order",\n {3}"details": \[/,
    },
    {
      name: "a server stream",
      args: () => ["-d", '{"count": 3, "text": "tick"}', `${demo.url}/demo.v1.DemoService/Count`],
      exit: 0,
    },
    {
      name: "an Any packed inside an Any (types found as they are met)",
      args: () => [
        "-d",
        JSON.stringify({
          extra: {
            "@type": "type.googleapis.com/demo.v1.Everything",
            extra: { "@type": "type.googleapis.com/demo.v1.GreetResponse", greeting: "deep" },
          },
        }),
        `${demo.url}/demo.v1.DemoService/Echo`,
      ],
      exit: 0,
    },
    {
      name: "listing methods",
      args: () => ["--list-methods", demo.url],
      exit: 0,
    },
    {
      name: "an unknown method",
      args: () => ["-d", "{}", `${demo.url}/demo.v1.GreetService/Greeet`],
      exit: 1,
      stderr: /^protocall: .*Greeet.*\n$/,
    },
    {
      name: "an unknown field in the request, with the field meant",
      args: () => ["-d", "@bad.json", `${demo.url}/demo.v1.GreetService/Greet`],
      exit: 1,
      stderr:
        /^protocall: bad\.json:2:3: .*unknown field "nam" in message demo\.v1\.GreetRequest \(did you mean "name"\?\).*\n$/,
    },
    {
      name: "a TLS failure (an unknown authority)",
      args: () => ["--schema", schema, "-d", "{}", `${tls.url}/demo.v1.GreetService/Greet`],
      exit: 112,
      stderr: /"message": "x509: certificate signed by unknown authority"/,
    },
    {
      name: "a TLS alert during the call (a client certificate is required), in Go's words",
      args: () => [
        "--cacert",
        caPath,
        "--schema",
        schema,
        "-d",
        "{}",
        `${mtls.url}/demo.v1.GreetService/Greet`,
      ],
      exit: 112,
      stderr: /"message": "[^"\n]*remote error: tls: certificate required[^"\n]*"/,
    },
    {
      name: "a TLS alert during reflection: one line",
      args: () => ["--cacert", caPath, "-d", "{}", `${mtls.url}/demo.v1.GreetService/Greet`],
      exit: 1,
      stderr: /^protocall: server reflection failed: .*remote error: tls: certificate required.*\n$/,
    },
    {
      name: "an HTTP status error (Connect unary: the status line, as connect-go says it)",
      args: () => ["--schema", schema, "-d", "{}", `${statusUrl}/demo.v1.GreetService/Greet`],
      exit: 112,
      stderr: /"message": "503 Service Unavailable"/,
    },
    {
      name: "an HTTP status error (gRPC-Web)",
      args: () => [
        "--protocol",
        "grpcweb",
        "--schema",
        schema,
        "-d",
        "{}",
        `${statusUrl}/demo.v1.GreetService/Greet`,
      ],
      exit: 112,
      stderr: /"message": "HTTP status 503 Service Unavailable"/,
    },
    {
      name: "a reflection failure",
      args: () => ["-d", "{}", `${noReflection.url}/demo.v1.GreetService/Greet`],
      exit: 1,
      stderr: /^protocall: .*reflection.*\n$/,
    },
    {
      name: "a timeout before the call",
      args: () => ["--timeout", "1ns", "-d", "{}", `${demo.url}/demo.v1.GreetService/Greet`],
      exit: 1,
      stderr: /^protocall: timed out after .* \(--timeout\) .*: context deadline exceeded\n$/,
    },
    {
      name: "a timeout during reflection and the TLS handshake (a server that never answers)",
      args: () => ["--timeout", "2s", "-d", "{}", `https://${silent.host}/demo.v1.GreetService/Greet`],
      exit: 1,
      stderr:
        /^protocall: timed out after 2s \(--timeout\) before the call was sent: context deadline exceeded\n$/,
    },
    {
      name: "a deadline during the call",
      args: () => [
        "--schema",
        schema,
        "--timeout",
        "5s",
        "-d",
        '{"count": 2, "delayMs": 60000}',
        `${demo.url}/demo.v1.DemoService/Count`,
      ],
      exit: 32,
      stderr: /"message": "context deadline exceeded"/,
      deadlineRace: true,
    },
  ];

  for (const c of cases) {
    test(c.name, async () => {
      const args = c.args();
      const [cli, editor] = await Promise.all([
        runCli(["curl", ...args], { cwd: home, env: { HOME: home, NETRC: undefined }, timeoutMs: 60_000 }),
        session.call(parseCurlArgs(args).options, { cwd: home, env: { HOME: home }, homedir: home }),
      ]);
      const context = describeBoth(args, cli, editor);
      assert.ok(!cli.timedOut, context);
      assert.equal(cli.code, c.exit, context);
      assert.equal(editor.exitCode, cli.code, context);
      assert.equal(
        (editor.listing ?? editor.messages).map((line) => `${line}\n`).join(""),
        cli.stdout,
        context,
      );
      const words = c.deadlineRace ? oneDeadlineWording : (text: string) => text;
      assert.equal(words(editor.error?.text ?? ""), words(cli.stderr), context);
      if (c.stderr) assert.match(words(cli.stderr), c.stderr, context);
      if (c.exit === 0) assert.notEqual(cli.stdout, "", context);
    });
  }
});

function describeBoth(args: string[], cli: RunResult, editor: CallResult): string {
  return [
    `args: ${JSON.stringify(args)}`,
    `CLI exit ${cli.code}, stdout:\n${cli.stdout}\nstderr:\n${cli.stderr}`,
    `session exit ${editor.exitCode}, messages: ${JSON.stringify(editor.messages)}, error: ${editor.error?.text ?? "none"}`,
  ].join("\n");
}
