// `--auth` (`# @auth` in .rpc files) end to end: `protocall curl` and `protocall run` get their bearer
// token from a real OpenID provider (oidc-provider on loopback) and send it to a server that checks
// it with the provider, on the call and on server reflection; a `protocall run` that outlasts the
// token's lifetime renews it (the server saw two tokens, and took each only while it was valid); the
// token endpoint's error is printed as the provider sent it; -v shows neither token nor secret; the
// authorization code grant opens $BROWSER and takes the redirect on a loopback port.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { type BearerServer, startBearerServer } from "../support/bearer-server";
import { repoRoot, runCli, runProcess } from "../support/cli";
import {
  clientId,
  clientSecret,
  publicClientId,
  startOidcProvider,
  type TestProvider,
} from "../support/oidc-provider";

let op: TestProvider;
let server: BearerServer;
const dir = mkdtempSync(join(tmpdir(), "protocall-curl-auth-"));

before(async () => {
  op = await startOidcProvider({ accessTokenTtl: 2 });
  server = await startBearerServer((token) => op.isActive(token));
});
after(async () => {
  await server?.close();
  await op?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  server.seen.length = 0;
  op.tokenRequests.length = 0;
});

const clientCredentials = () =>
  `oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret}`;
const tokens = (pathPart: string) =>
  server.seen.filter((s) => s.path.includes(pathPart)).map((s) => s.authorization);

/** $BROWSER: a program that signs in as a person would (tsx by its path: the cwd is elsewhere). */
const browser = () =>
  `${process.execPath} --import ${pathToFileURL(join(repoRoot, "node_modules/tsx/dist/loader.mjs")).href} ${join(repoRoot, "test/support/oidc-browser.ts")}`;

describe("--auth", { timeout: 180_000 }, () => {
  test("curl: the token is fetched once and sent on reflection and on the call; -v hides it and the secret", async () => {
    const r = await runCli([
      "curl",
      "-v",
      "--http2-prior-knowledge",
      "--auth",
      clientCredentials(),
      "-d",
      '{"text":"hi"}',
      `${server.url}/demo.v1.DemoService/Echo`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /"text": "hi"/);
    const reflection = tokens("ServerReflection");
    const call = tokens("DemoService/Echo");
    assert.ok(reflection.length > 0, "reflection was asked with the token");
    assert.equal(call.length, 1);
    assert.match(call[0], /^Bearer \S{10,}$/);
    assert.ok(
      reflection.every((a) => a === call[0]),
      "reflection and the call carry the same token",
    );
    assert.equal(op.tokenRequests.length, 1);
    const token = call[0].slice("Bearer ".length);
    assert.ok(!r.stderr.includes(token), "the token is not in the verbose output");
    assert.ok(!r.stderr.includes(clientSecret), "the secret is not in the verbose output");
    assert.match(r.stderr, /Authorization: Bearer \[redacted\]/);
    assert.match(r.stderr, /Fetched an OAuth2 token \(client_credentials grant, valid for 2 s\)/);
  });

  test("bin/protocall curl (the curl bundle) loads the OAuth2 client from dist/openid-client.js", async () => {
    assert.ok(
      !readFileSync(join(repoRoot, "dist/curl.js"), "latin1").includes("oauth4webapi"),
      "dist/curl.js holds the OAuth2 client",
    );
    const r = await runProcess(
      process.execPath,
      [
        join(repoRoot, "bin/protocall.js"),
        "curl",
        "--http2-prior-knowledge",
        "--auth",
        clientCredentials(),
        "-d",
        '{"text":"bundle"}',
        `${server.url}/demo.v1.DemoService/Echo`,
      ],
      { env: { PROTOCALL_CACHE_DIR: dir } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /"text": "bundle"/);
    assert.match(tokens("DemoService/Echo")[0], /^Bearer \S{10,}$/);
  });

  test("curl: the token endpoint's error is printed as sent, without the secret", async () => {
    const wrong = "wrong-secret-0123456789";
    const r = await runCli([
      "curl",
      "--http2-prior-knowledge",
      "--auth",
      `oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=${wrong}`,
      "-d",
      "{}",
      `${server.url}/demo.v1.DemoService/Echo`,
    ]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      `protocall: OAuth2 token endpoint ${op.issuer}/token: invalid_client: client authentication failed`,
    );
    assert.equal(server.seen.length, 0, "nothing was sent to the server");
  });

  test("curl: a bad --auth value is a clear error before anything is sent", async () => {
    const r = await runCli([
      "curl",
      "--auth",
      `oauth2 client_credentials client-id=x client-secret=y`,
      `${server.url}/demo.v1.DemoService/Echo`,
    ]);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /--auth: say where the token comes from: issuer=URL \(discovery\) or token-url=URL/,
    );
    assert.ok(!r.stderr.includes("    at "), "no stack trace");
  });

  test("run: requests that outlast the token's 2 s lifetime each get a token that is still valid", async () => {
    // Each Count call takes 1.5 s (two messages 1.5 s apart), so the third starts after the first
    // token has expired; the server asks the provider, which takes only tokens still valid.
    const count = (n: number) => `### Count ${n}
# @auth ${clientCredentials()}
# @http2-prior-knowledge
${server.url}/demo.v1.DemoService/Count

{"count": 2, "delay_ms": 1500}
`;
    writeFileSync(join(dir, "long.rpc"), [1, 2, 3].map(count).join("\n"));
    const r = await runCli(["run", "long.rpc"], { cwd: dir, timeoutMs: 90_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const calls = tokens("DemoService/Count");
    assert.equal(calls.length, 3);
    assert.ok(new Set(calls).size >= 2, `the token was renewed during the run: ${calls.length} calls`);
    const seenAt = server.seen.filter((s) => s.path.includes("Count")).map((s) => s.at);
    assert.ok(seenAt[2] - seenAt[0] > 2_000, "the run outlasted the first token");
    assert.ok(op.tokenRequests.every((t) => t.ok && t.grantType === "client_credentials"));
  });

  test("load: a load test that outlasts the token renews it; every call is accepted", async () => {
    writeFileSync(
      join(dir, "load.rpc"),
      `### Echo\n# @auth ${clientCredentials()}\n# @http2-prior-knowledge\n${server.url}/demo.v1.DemoService/Echo\n\n{"text": "x"}\n`,
    );
    const r = await runCli(["load", "load.rpc", "--rate", "10", "--duration", "5s"], {
      cwd: dir,
      timeoutMs: 90_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const calls = server.seen.filter((s) => s.path.endsWith("/Echo"));
    assert.ok(calls.length >= 40, `${calls.length} calls`);
    assert.deepEqual(
      calls.filter((c) => !c.accepted).map((c) => c.at - calls[0].at),
      [],
      "calls whose token was not valid (ms into the run)",
    );
    assert.ok(new Set(calls.map((c) => c.authorization)).size >= 2, "the token was renewed during the run");
  });

  test("load --workers: every worker thread sends the main thread's one token (one fetch for the run)", async () => {
    // A provider of its own whose tokens outlive the run, so any second fetch is a worker's own.
    const longLived = await startOidcProvider({ accessTokenTtl: 3600 });
    const checked = await startBearerServer((token) => longLived.isActive(token));
    try {
      const auth = `oauth2 client_credentials issuer=${longLived.issuer} client-id=${clientId} client-secret=${clientSecret}`;
      writeFileSync(
        join(dir, "workers.rpc"),
        `### Echo\n# @auth ${auth}\n# @http2-prior-knowledge\n${checked.url}/demo.v1.DemoService/Echo\n\n{"text": "w"}\n`,
      );
      const report = join(dir, "workers.json");
      const r = await runCli(
        [
          "load",
          "workers.rpc",
          "--rate",
          "20",
          "--duration",
          "2s",
          "--workers",
          "2",
          "--reporter",
          `json=${report}`,
        ],
        { cwd: dir, timeoutMs: 90_000 },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(readFileSync(report, "utf8")).workers, 2);
      const calls = checked.seen.filter((s) => s.path.endsWith("/Echo"));
      assert.equal(calls.length, 40);
      assert.ok(
        calls.every((c) => c.accepted),
        "every call's token was valid",
      );
      assert.equal(new Set(calls.map((c) => c.authorization)).size, 1, "one token for both workers");
      assert.deepEqual(
        longLived.tokenRequests.map((t) => t.grantType),
        ["client_credentials"],
      );
    } finally {
      await checked.close();
      await longLived.close();
    }
  });

  test("load --workers: the main thread's token error is each call's error, in the provider's words", async () => {
    writeFileSync(
      join(dir, "workers-wrong.rpc"),
      `### Echo\n# @auth oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=wrong-secret-0123456789\n# @http2-prior-knowledge\n${server.url}/demo.v1.DemoService/Echo\n\n{"text": "w"}\n`,
    );
    const report = join(dir, "workers-wrong.json");
    const r = await runCli(
      [
        "load",
        "workers-wrong.rpc",
        "--requests",
        "4",
        "--concurrency",
        "2",
        "--workers",
        "2",
        "--reporter",
        `json=${report}`,
      ],
      { cwd: dir, timeoutMs: 90_000 },
    );
    const total = JSON.parse(readFileSync(report, "utf8")).total;
    assert.equal(total.requests, 4, r.stderr);
    assert.equal(total.passed, 0);
    assert.match(
      r.stderr,
      /error: OAuth2 token endpoint \S+\/token: invalid_client: client authentication failed \(4 times\)/,
    );
    assert.ok(!r.stderr.includes("wrong-secret-0123456789"), "the secret is not printed");
    assert.equal(server.seen.length, 0, "nothing was sent to the server");
  });

  test("run --env: the environment's $auth signs in every request, the secret from the private file", async () => {
    const ws = join(dir, "env-ws");
    mkdirSync(join(ws, ".git"), { recursive: true });
    writeFileSync(
      join(ws, "protocall.env.json"),
      JSON.stringify({
        dev: {
          $auth: `oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret={{clientSecret}}`,
        },
      }),
    );
    writeFileSync(join(ws, "protocall.env.private.json"), JSON.stringify({ dev: { clientSecret } }));
    writeFileSync(
      join(ws, "echo.rpc"),
      `# @http2-prior-knowledge\n${server.url}/demo.v1.DemoService/Echo\n\n{"text": "env"}\n`,
    );
    const r = await runCli(["run", "echo.rpc", "--env", "dev"], { cwd: ws, timeoutMs: 60_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(tokens("DemoService/Echo")[0], /^Bearer \S{10,}$/);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(clientSecret));
  });

  test("curl: the device code grant prints where to sign in and which code to enter, then calls", async () => {
    const r = await runCli(
      [
        "curl",
        "--http2-prior-knowledge",
        "--auth",
        `oauth2 device_code issuer=${op.issuer} client-id=${publicClientId} scope=openid`,
        "-d",
        '{"text":"device"}',
        `${server.url}/demo.v1.DemoService/Echo`,
      ],
      { timeoutMs: 60_000, env: { BROWSER: browser() } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `^protocall: To sign in, open ${op.issuer}/device and enter the code [A-Z]{4}-[A-Z]{4} \\(or open ${op.issuer}/device\\?user_code=`,
      ),
    );
    assert.match(r.stdout, /"text": "device"/);
    assert.ok(tokens("DemoService/Echo")[0]?.startsWith("Bearer "));
  });

  test("run: authorization code with PKCE opens $BROWSER and takes the redirect on a loopback port", async () => {
    writeFileSync(
      join(dir, "signin.rpc"),
      `@issuer = ${op.issuer}
### Echo
# @auth oauth2 authorization_code issuer={{issuer}} client-id=${publicClientId} scope=openid
# @http2-prior-knowledge
${server.url}/demo.v1.DemoService/Echo

{"text": "signed in"}
`,
    );
    const r = await runCli(["run", "signin.rpc"], {
      cwd: dir,
      timeoutMs: 60_000,
      env: { BROWSER: browser() },
    });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(
      r.stderr,
      /Signing in through the browser \(waiting for the redirect to http:\/\/127\.0\.0\.1:\d+\/callback\)/,
    );
    assert.deepEqual(
      op.tokenRequests.map((t) => t.grantType),
      ["authorization_code"],
    );
    assert.match(tokens("DemoService/Echo")[0], /^Bearer /);
  });
});
