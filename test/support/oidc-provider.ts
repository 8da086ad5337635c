// A real OpenID provider on loopback for the OAuth2 tests: `oidc-provider` (the certified Node
// implementation) with discovery, client credentials, refresh tokens, the device flow and the
// authorization code grant with PKCE, plus the password grant registered as a custom grant type
// (oidc-provider leaves it out; registerGrantType is its way to add one). Access tokens live
// `accessTokenTtl` seconds, so tests can outlast them. Every token request is recorded.
import * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import Provider, { errors } from "oidc-provider";

// The request context oidc-provider hands to event listeners and grant handlers (untyped here).
// biome-ignore lint/suspicious/noExplicitAny: the module has no types
type KoaContextWithOIDC = any;

export const clientId = "protocall-cli";
export const clientSecret = "s3cr3t-client-value-4711";
export const publicClientId = "protocall-public";
export const user = { username: "alice", password: "alice-pa55word-0815" };

export interface TokenRequest {
  grantType: string;
  ok: boolean;
  error?: string;
}

export interface TestProvider {
  issuer: string;
  tokenUrl: string;
  /** Every token endpoint request, in order. */
  tokenRequests: TokenRequest[];
  /** Whether the provider issued this access token and it has not expired. */
  isActive(token: string): Promise<boolean>;
  /** Approves a pending device code as `alice` would in the browser. */
  approveDevice(userCode: string): Promise<void>;
  close(): Promise<void>;
}

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code";

/**
 * `host`: the issuer's host name (default 127.0.0.1); a name of this machine that resolves to a
 * loopback address keeps the editor's browser from rewriting the URL as a forwarded local port.
 */
export async function startOidcProvider(
  o: { accessTokenTtl?: number; host?: string; tls?: { cert: string; key: string } } = {},
): Promise<TestProvider> {
  const ttl = o.accessTokenTtl ?? 3600;
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = o.tls
    ? https.createServer(o.tls, (req, res) => handler(req, res))
    : http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `${o.tls ? "https" : "http"}://${o.host ?? "127.0.0.1"}:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        grant_types: ["client_credentials", "refresh_token", "password", deviceGrant, "authorization_code"],
        response_types: ["code"],
        redirect_uris: ["http://127.0.0.1/callback"],
        application_type: "native",
        token_endpoint_auth_method: "client_secret_basic",
      },
      {
        client_id: publicClientId,
        grant_types: ["refresh_token", deviceGrant, "authorization_code"],
        response_types: ["code"],
        redirect_uris: ["http://127.0.0.1/callback"],
        application_type: "native",
        token_endpoint_auth_method: "none",
      },
    ],
    features: {
      clientCredentials: { enabled: true },
      deviceFlow: { enabled: true },
      devInteractions: { enabled: true },
    },
    scopes: ["openid", "offline_access", "api"],
    ttl: {
      AccessToken: ttl,
      ClientCredentials: ttl,
      RefreshToken: 3600,
      DeviceCode: 600,
      Grant: 3600,
      Session: 3600,
      Interaction: 600,
    },
    issueRefreshToken: async () => true,
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  });
  provider.registerGrantType("password", passwordGrant(ttl), new Set(["username", "password", "scope"]));
  const tokenRequests: TokenRequest[] = [];
  provider.on("grant.success", (ctx: KoaContextWithOIDC) => {
    tokenRequests.push({ grantType: String(ctx.oidc.params?.grant_type), ok: true });
  });
  provider.on("grant.error", (ctx: KoaContextWithOIDC, err: { error?: string }) => {
    tokenRequests.push({ grantType: String(ctx.oidc.params?.grant_type), ok: false, error: err.error });
  });
  provider.on("server_error", (_ctx: unknown, err: Error) => console.error("provider server_error", err));
  handler = provider.callback() as http.RequestListener;
  return {
    issuer,
    tokenUrl: `${issuer}/token`,
    tokenRequests,
    async isActive(token) {
      const found =
        (await provider.ClientCredentials.find(token)) ?? (await provider.AccessToken.find(token));
      return found !== undefined && !found.isExpired;
    },
    async approveDevice(userCode) {
      // Stored as typed on the verification page: letters and digits, upper case.
      const code = await provider.DeviceCode.findByUserCode(
        userCode.replace(/[^a-z0-9]/gi, "").toUpperCase(),
      );
      if (!code) throw new Error(`no device code for ${userCode}`);
      const grant = new provider.Grant({ accountId: user.username, clientId: code.clientId });
      grant.addOIDCScope(code.scope ?? "openid");
      code.grantId = await grant.save();
      code.accountId = user.username;
      code.authTime = Math.floor(Date.now() / 1000);
      await code.save();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** grant_type=password: alice with her password gets an access token and a refresh token. */
function passwordGrant(ttl: number) {
  return async (ctx: KoaContextWithOIDC) => {
    const params = ctx.oidc.params as Record<string, string | undefined>;
    if (params.username !== user.username || params.password !== user.password) {
      throw new errors.InvalidGrant("wrong username or password");
    }
    const { AccessToken, RefreshToken, Grant } = ctx.oidc.provider;
    const client = ctx.oidc.client as NonNullable<typeof ctx.oidc.client>;
    const scope = "openid offline_access";
    const grant = new Grant({ accountId: user.username, clientId: client.clientId });
    grant.addOIDCScope(scope);
    const grantId = await grant.save();
    const at = new AccessToken({ accountId: user.username, client, grantId, scope, gty: "password" });
    const rt = new RefreshToken({ accountId: user.username, client, grantId, scope, gty: "password" });
    ctx.body = {
      access_token: await at.save(),
      expires_in: ttl,
      token_type: "Bearer",
      refresh_token: await rt.save(),
      scope,
    };
  };
}
