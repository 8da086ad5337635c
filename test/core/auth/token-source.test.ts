// The OAuth2 token source against a real OpenID provider (oidc-provider on loopback): every grant,
// discovery and explicit endpoints, the in-memory cache, renewal before expiry (with the refresh
// token when there is one), the opt-in cache file's permissions, the provider's errors as it sent
// them, and the redactor hiding what was fetched.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { bearerToken, forgetTokens, type TokenContext } from "../../../src/core/auth/token-source";
import { parseAuthSpec } from "../../../src/core/auth-spec";
import { ProtocallError } from "../../../src/core/errors";
import { redactSecrets } from "../../../src/core/invoke/redact";
import { signInWithBrowser } from "../../support/oidc-browser";
import {
  clientId,
  clientSecret,
  publicClientId,
  startOidcProvider,
  type TestProvider,
  user,
} from "../../support/oidc-provider";

let op: TestProvider;
const dir = mkdtempSync(join(tmpdir(), "protocall-token-source-"));
const ctx = (more: Partial<TokenContext> = {}): TokenContext => ({ env: {}, cwd: dir, ...more });
const get = (text: string, more: Partial<TokenContext> = {}) =>
  bearerToken(parseAuthSpec(text), text, ctx(more));

before(async () => {
  // Tokens live 3 s: long enough for a step, short enough to outlast.
  op = await startOidcProvider({ accessTokenTtl: 3 });
});
after(async () => {
  await op?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  forgetTokens();
  op.tokenRequests.length = 0;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("OAuth2 token source", { timeout: 120_000 }, () => {
  test("a token given to a store says whose it is (provider, client, grant), never a secret", async () => {
    const spec = `oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret}`;
    const stored: string[] = [];
    const store = {
      get: async () => undefined,
      set: async (_k: string, _t: unknown, about: string) => {
        stored.push(about);
      },
    };
    await get(spec, { store });
    assert.deepEqual(stored, [`${op.issuer} · ${clientId} (client credentials)`]);
  });

  test("client_credentials through discovery: fetched once, kept, renewed before it expires", async () => {
    const spec = `oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret}`;
    const first = await get(spec);
    assert.ok(first.length > 10);
    assert.equal(await get(spec), first, "the second call reuses the token");
    assert.equal(op.tokenRequests.length, 1);
    // Within the last quarter of its 3 s life the token is renewed, before it expires.
    await sleep(2_400);
    const second = await get(spec);
    assert.notEqual(second, first);
    assert.deepEqual(
      op.tokenRequests.map((r) => r.grantType),
      ["client_credentials", "client_credentials"],
    );
  });

  test("explicit token-url without discovery, the client secret in the form or in basic authentication", async () => {
    for (const how of ["basic", "post"]) {
      const token = await get(
        `oauth2 client_credentials token-url=${op.tokenUrl} client-id=${clientId} client-secret=${clientSecret} client-auth=${how}`,
      );
      assert.ok(token.length > 10);
    }
    assert.deepEqual(
      op.tokenRequests.map((r) => r.ok),
      [true, true],
    );
  });

  test("the token endpoint's error is shown as it was sent, without the secret", async () => {
    await assert.rejects(
      get(
        `oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=wrong-secret-123`,
      ),
      (err: Error) => {
        assert.ok(err instanceof ProtocallError);
        assert.equal(
          err.message,
          `OAuth2 token endpoint ${op.issuer}/token: invalid_client: client authentication failed`,
        );
        return true;
      },
    );
    await assert.rejects(
      get(`oauth2 client_credentials issuer=http://127.0.0.1:9 client-id=x client-secret=y`),
      (err: Error) => {
        assert.match(
          err.message,
          /^OAuth2 discovery at http:\/\/127\.0\.0\.1:9: .*ECONNREFUSED.*check issuer=/,
        );
        return true;
      },
    );
  });

  test("password grant, then the refresh token renews it", async () => {
    const spec = `oauth2 password issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret} username=${user.username} password=${user.password}`;
    const first = await get(spec);
    await sleep(2_400);
    const second = await get(spec);
    assert.notEqual(second, first);
    assert.deepEqual(
      op.tokenRequests.map((r) => `${r.grantType}:${r.ok}`),
      ["password:true", "refresh_token:true"],
    );
    await assert.rejects(
      get(
        `oauth2 password issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret} username=alice password=nope-nope`,
      ),
      /: invalid_grant: grant request is invalid|: invalid_grant/,
    );
  });

  test("refresh_token grant from a refresh token given in the settings", async () => {
    // A refresh token as a person would paste it, got here with the password grant.
    const form = new URLSearchParams({ grant_type: "password", ...user });
    const res = await fetch(op.tokenUrl, {
      method: "POST",
      body: form,
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}` },
    });
    const { refresh_token } = (await res.json()) as { refresh_token: string };
    op.tokenRequests.length = 0;
    const token = await get(
      `oauth2 refresh_token issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret} refresh-token=${refresh_token}`,
    );
    assert.ok(token.length > 10);
    assert.deepEqual(
      op.tokenRequests.map((r) => r.grantType),
      ["refresh_token"],
    );
  });

  test("device code: the person is told where to go and which code to enter; the token follows their approval", async () => {
    const told: string[] = [];
    const token = await get(
      `oauth2 device_code issuer=${op.issuer} client-id=${publicClientId} scope=openid`,
      {
        interaction: {
          notify: (line) => {
            told.push(line);
            const code = /enter the code (\S+)/.exec(line)?.[1];
            if (code) setTimeout(() => void op.approveDevice(code), 200);
          },
        },
      },
    );
    assert.ok(token.length > 10);
    assert.match(
      told[0],
      new RegExp(`^To sign in, open ${op.issuer}/device and enter the code [A-Z-]+ \\(or open `),
    );
    assert.ok(op.tokenRequests.some((r) => r.grantType.endsWith("device_code") && r.ok));
    await assert.rejects(
      get(`oauth2 device_code issuer=${op.issuer} client-id=${publicClientId}`),
      /the device_code grant needs a person to sign in/,
    );
  });

  test("authorization code with PKCE: the browser signs in and the loopback redirect takes the code", async () => {
    const opened: string[] = [];
    const token = await get(
      `oauth2 authorization_code issuer=${op.issuer} client-id=${publicClientId} scope=openid`,
      {
        interaction: {
          notify: () => {},
          openUrl: async (url) => {
            opened.push(url);
            void signInWithBrowser(url);
            return true;
          },
        },
      },
    );
    assert.ok(token.length > 10);
    const url = new URL(opened[0]);
    assert.equal(url.searchParams.get("code_challenge_method"), "S256");
    assert.ok(url.searchParams.get("code_challenge"));
    assert.match(url.searchParams.get("redirect_uri") ?? "", /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.deepEqual(
      op.tokenRequests.map((r) => r.grantType),
      ["authorization_code"],
    );
  });

  test("the opt-in cache file is private (0600) and saves the next process a sign-in", async () => {
    const cache = join(dir, "tokens", "cache.json");
    const spec = `oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret} cache=${cache}`;
    const token = await get(spec);
    if (process.platform !== "win32") assert.equal(statSync(cache).mode & 0o777, 0o600);
    const text = readFileSync(cache, "utf8");
    assert.ok(text.includes(token));
    assert.ok(!text.includes(clientSecret), "the client secret is never written");
    forgetTokens();
    assert.equal(await get(spec), token, "a new process reads the cached token");
    assert.equal(op.tokenRequests.length, 1);
  });

  test("tokens and secrets are redacted wherever they appear", async () => {
    const spec = `oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=${clientSecret}`;
    const token = await get(spec);
    assert.equal(redactSecrets(`server said: ${token}.`), "server said: [redacted].");
    assert.equal(
      redactSecrets(`--auth "${spec}"`),
      `--auth "oauth2 client_credentials issuer=${op.issuer} client-id=${clientId} client-secret=[redacted]"`,
    );
  });
});
