// A live client stream (the editor's live requests) that stays open longer than its token lives, then
// the next call on the same --auth: the stream started with a valid token (HTTP sends headers once,
// so it keeps it), and the next call gets a renewed one, which the server checks with the provider.
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { bearerTokens } from "../../../src/core/auth/bearer-tokens";
import { forgetTokens } from "../../../src/core/auth/token-source";
import { callConnections } from "../../../src/core/invoke/connections";
import { parseCurlArgs } from "../../../src/core/invoke/curl-args";
import type { InputIo } from "../../../src/core/invoke/io";
import { createLiveRequests } from "../../../src/core/invoke/live-requests";
import { runPipeline } from "../../../src/core/invoke/pipeline";
import { createVerboseLog } from "../../../src/core/invoke/verbose";
import { type BearerServer, startBearerServer } from "../../support/bearer-server";
import { clientId, clientSecret, startOidcProvider, type TestProvider } from "../../support/oidc-provider";

let op: TestProvider;
let server: BearerServer;

before(async () => {
  forgetTokens();
  op = await startOidcProvider({ accessTokenTtl: 2 });
  server = await startBearerServer((token) => op.isActive(token));
});
after(async () => {
  await server?.close();
  await op?.close();
});

const io = (): InputIo => ({
  cwd: process.cwd(),
  env: {},
  stdin: Readable.from([]),
  stdinIsTTY: false,
  homedir: "/nonexistent",
  tokens: bearerTokens(),
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("--auth with a long client stream", { timeout: 60_000 }, () => {
  test("the stream outlives its token; the call after it gets a renewed token the server accepts", async () => {
    const auth = `oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret}`;
    const options = () =>
      parseCurlArgs(["--http2-prior-knowledge", "--auth", auth, `${server.url}/demo.v1.DemoService/Sum`])
        .options;
    const live = createLiveRequests();
    const messages: string[] = [];
    const streaming = runPipeline(options(), io(), {
      log: createVerboseLog(false, () => {}),
      connections: callConnections(),
      requests: live,
      onMessage: (json) => {
        messages.push(json);
      },
    });
    // Six numbers, 0.5 s apart: the stream is open for 3 s, past the token's 2 s.
    // (A call that fails ends the stream: the sends then reject, and the result says why.)
    streaming.then((r) => live.end(r.failure?.text));
    for (let n = 1; n <= 6 && !live.closed; n++) {
      await live.send({ number: n }).catch(() => {});
      await sleep(500);
    }
    live.close();
    const first = await streaming;
    assert.equal(first.ok, true, first.failure?.text);
    assert.match(messages[0], /"sum": "21"/);
    const next = await runPipeline(
      parseCurlArgs([
        "--http2-prior-knowledge",
        "--auth",
        auth,
        "-d",
        "{}",
        `${server.url}/demo.v1.DemoService/Echo`,
      ]).options,
      io(),
      { log: createVerboseLog(false, () => {}), connections: callConnections() },
    );
    assert.equal(next.ok, true, next.failure?.text);
    const sum = server.seen.find((s) => s.path.endsWith("/Sum"));
    const echo = server.seen.find((s) => s.path.endsWith("/Echo"));
    assert.ok(sum && echo);
    assert.ok(echo.at - sum.at > 2_000, "the second call started after the first token expired");
    assert.notEqual(echo.authorization, sum.authorization, "the second call carries a renewed token");
    assert.equal(op.tokenRequests.filter((t) => t.ok).length, 2);
  });
});
