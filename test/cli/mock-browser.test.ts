// A browser client nobody here wrote gets the answers the stubs say: `@connectrpc/connect-web` in
// Chromium, on a page served from one loopback port, calls `protocall mock` on another port (so every
// call is cross-origin and rests on the mock's CORS answers) over Connect (JSON and binary) and
// gRPC-Web (binary and JSON): a unary call with a response header, a server stream, an error with
// typed details and a header.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { build } from "esbuild";
import { type Browser, chromium } from "playwright-core";
import { startCliServer } from "../core/webhooks/support";
import { repoRoot } from "../support/cli";
import { chromiumArgs, chromiumPath } from "../support/workbench";

const stubs = `### greet a page
/demo.v1.GreetService/Greet

{"name": "page"}

>>> ok
x-served-by: protocall-mock

{"greeting": "Hello, {{request.name}}!"}

### count
/demo.v1.DemoService/Count

{"count": 3}

>>> ok

{"number": 1, "text": "one"}
{"number": 2, "text": "two"}
{"number": 3, "text": "three"}

### over quota
/demo.v1.DemoService/Fail

{"message": "quota"}

>>> resource_exhausted "quota exceeded for {{request.message}}"
x-quota: calls
# @detail demo.v1.QuotaExceeded {"resource": "calls", "limit": "100", "retryAfter": "60s"}
# @detail google.rpc.ErrorInfo {"reason": "QUOTA_EXCEEDED", "domain": "demo.example"}
`;

// The page's client: every call over every transport, results as plain JSON for the test to compare.
const client = `
import { ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { toJson } from "@bufbuild/protobuf";
import { DemoService, QuotaExceededSchema } from "./src/gen/demo/v1/demo_pb";
import { GreetService } from "./src/gen/demo/v1/greet_pb";
import { ErrorInfoSchema } from "./src/gen/google/rpc/error_details_pb";

async function calls(transport) {
  const greet = createClient(GreetService, transport);
  const demo = createClient(DemoService, transport);
  let servedBy = null;
  const unary = await greet.greet({ name: "page" }, { onHeader: (h) => { servedBy = h.get("x-served-by"); } });
  const stream = [];
  for await (const m of demo.count({ count: 3 })) stream.push({ number: m.number, text: m.text });
  let error = null;
  try {
    await demo.fail({ message: "quota" });
  } catch (e) {
    const err = ConnectError.from(e);
    error = {
      code: err.code,
      message: err.rawMessage,
      quota: err.findDetails(QuotaExceededSchema).map((d) => toJson(QuotaExceededSchema, d)),
      info: err.findDetails(ErrorInfoSchema).map((d) => toJson(ErrorInfoSchema, d)),
      header: err.metadata.get("x-quota"),
    };
  }
  return { unary: { greeting: unary.greeting, servedBy }, stream, error };
}

const withCookies = (input, init) => fetch(input, { ...init, credentials: "include" });

window.runCalls = async (baseUrl) => {
  const transports = {
    connectJson: createConnectTransport({ baseUrl }),
    connectBinary: createConnectTransport({ baseUrl, useBinaryFormat: true }),
    grpcWebBinary: createGrpcWebTransport({ baseUrl }),
    grpcWebJson: createGrpcWebTransport({ baseUrl, useBinaryFormat: false }),
    // A page that sends its cookies (credentialed CORS: no wildcards allowed in the answers).
    connectCredentials: createConnectTransport({ baseUrl, fetch: withCookies }),
    grpcWebCredentials: createGrpcWebTransport({ baseUrl, fetch: withCookies }),
  };
  const out = {};
  for (const [name, transport] of Object.entries(transports)) {
    try {
      out[name] = await calls(transport);
    } catch (e) {
      out[name] = { failed: String(e) };
    }
  }
  return out;
};
`;

const expected = {
  unary: { greeting: "Hello, page!", servedBy: "protocall-mock" },
  stream: [
    { number: 1, text: "one" },
    { number: 2, text: "two" },
    { number: 3, text: "three" },
  ],
  error: {
    code: 8, // resource_exhausted
    message: "quota exceeded for quota",
    quota: [{ resource: "calls", limit: "100", retryAfter: "60s" }],
    info: [{ reason: "QUOTA_EXCEEDED", domain: "demo.example" }],
    header: "calls",
  },
};

type CliServer = Awaited<ReturnType<typeof startCliServer>>;
let mock: CliServer;
let page: Server;
let pageOrigin: string;
let browser: Browser;

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), "protocall-mock-browser-"));
  writeFileSync(join(dir, "demo.rpc"), stubs);
  const bundle = await build({
    stdin: { contents: client, resolveDir: repoRoot, loader: "ts" },
    bundle: true,
    write: false,
    platform: "browser",
    format: "esm",
    logLevel: "silent",
  });
  const script = bundle.outputFiles[0].text;
  page = createServer((req, res) => {
    if (req.url === "/client.js") {
      res.writeHead(200, { "content-type": "text/javascript" });
      res.end(script);
    } else {
      res.writeHead(200, { "content-type": "text/html" });
      res.end('<!doctype html><title>mock client</title><script type="module" src="/client.js"></script>');
    }
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  [mock, browser] = await Promise.all([
    startCliServer(["mock", dir, "--schema", "examples", "--no-watch"], {}, 60_000),
    chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, timeout: 60_000 }),
  ]);
});

after(async () => {
  await browser?.close();
  await mock?.stop();
  page?.close();
});

test("connect-web in Chromium, from another origin: Connect and gRPC-Web get the stubs' answers", {
  timeout: 120_000,
}, async () => {
  assert.notEqual(new URL(mock.url).origin, pageOrigin, "the page and the mock must be different origins");
  const tab = await browser.newPage();
  await tab.goto(pageOrigin, { timeout: 60_000 });
  await tab.waitForFunction(() => "runCalls" in window, undefined, { timeout: 60_000 });
  const results = await tab.evaluate(
    (url) => (window as unknown as { runCalls(u: string): Promise<unknown> }).runCalls(url),
    mock.url,
  );
  assert.deepEqual(results, {
    connectJson: expected,
    connectBinary: expected,
    grpcWebBinary: expected,
    grpcWebJson: expected,
    connectCredentials: expected,
    grpcWebCredentials: expected,
  });

  // The calls came from the page's origin (so each rested on the mock's CORS answers), over both
  // protocols.
  const log = (await (await fetch(`${mock.url}/.protocall/mock/calls`)).json()) as {
    calls: { method: string; protocol: string; headers: Record<string, string> }[];
  };
  assert.equal(log.calls.length, 18);
  for (const call of log.calls) assert.equal(call.headers.origin, pageOrigin, call.method);
  assert.deepEqual(new Set(log.calls.map((c) => c.protocol)), new Set(["connect", "grpc-web"]));
});
