// The one source of bearer tokens for calls made with `--auth` (`# @auth`, an environment's `$auth`):
// the call's headers and its reflection headers both ask it (credentials.ts), so they carry the same
// token. A token is fetched once per process and settings, kept in memory, and fetched again (with its
// refresh token when it has one) when less than a quarter of its lifetime, at most 30 s, is left: every
// call of a long `protocall run`, a load test or a live stream starts with a token that is still good.
// A stream keeps the token it started with (HTTP sends headers once).
//
// The OAuth2 / OpenID Connect protocol is openid-client's (discovery, client authentication, the
// grants, PKCE, ID token checks); its HTTP goes through token-fetch.ts (the call's proxy and trust).
// The password grant is openid-client's generic grant request with grant_type=password.
import { createHash } from "node:crypto";
import type { AuthSpec } from "../auth-spec";
import { ProtocallError } from "../errors";
import { rememberSecret } from "../invoke/redact";
import { receiveRedirect } from "./loopback-redirect";
import { tokenError } from "./token-errors";
import { type TokenHttpSettings, tokenFetch } from "./token-fetch";

type Client = typeof import("openid-client");
type Configuration = import("openid-client").Configuration;

/** How a grant that needs the user reaches them (device code, authorization code). */
export interface TokenInteraction {
  /** Shows a line to the user (the CLI writes it to stderr, the editor in a notification). */
  notify(text: string): void;
  /** Opens the URL in the user's browser; resolves false when it could not (then the URL is shown). */
  openUrl?(url: string): Promise<boolean>;
}

/** Where tokens outlive the process: the opt-in cache file (token-cache-file.ts), the editor's secrets. */
export interface TokenStore {
  get(key: string): Promise<StoredToken | undefined>;
  /** `about`: whose token it is, for a person (`signInLabel`), e.g. in a list of kept sign-ins. */
  set(key: string, token: StoredToken, about: string): Promise<void>;
}

/** Whose token a spec gets, for a person: the provider, the client and the grant (never a secret). */
export function signInLabel(spec: AuthSpec): string {
  const provider = spec.issuer ?? spec.tokenUrl ?? "the provider";
  const who = spec.username ? `${spec.username} with ${spec.clientId}` : spec.clientId;
  return `${provider} · ${who} (${spec.grant.replaceAll("_", " ")})`;
}

export interface StoredToken {
  accessToken: string;
  refreshToken?: string;
  /** Epoch milliseconds; undefined when the provider gave no lifetime. */
  expiresAt?: number;
  /** Lifetime in milliseconds when it was issued (for the refresh margin). */
  lifetimeMs?: number;
}

export interface TokenContext extends TokenHttpSettings {
  interaction?: TokenInteraction;
  /** A store besides the process memory (the cache file when the spec names one is added to it). */
  store?: TokenStore;
  /** Verbose lines (`* Fetched an OAuth2 token ...`). */
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Epoch milliseconds now (tests). */
  now?: () => number;
}

/** The longest time before expiry at which a token is renewed. */
const MAX_MARGIN_MS = 30_000;

const sources = new Map<string, TokenSource>();

/** The bearer token for `spec` (as written, `text`), fetched or renewed when needed. */
export async function bearerToken(spec: AuthSpec, text: string, ctx: TokenContext): Promise<string> {
  const key = [text, ctx.proxy ?? "", ctx.cacert ?? "", ctx.insecure ? "k" : "", ctx.cwd].join("\u0000");
  let source = sources.get(key);
  if (!source) {
    source = new TokenSource(spec);
    sources.set(key, source);
  }
  return source.token(ctx);
}

/** Forgets every token held in memory (tests; the editor's "Sign out"). */
export function forgetTokens(): void {
  sources.clear();
}

/** The key a spec's token is stored under: the settings that decide whose token it is, hashed. */
export function storeKey(spec: AuthSpec): string {
  const who = [
    spec.grant,
    spec.issuer,
    spec.tokenUrl,
    spec.clientId,
    spec.scope,
    spec.audience,
    spec.resource,
    spec.username,
  ];
  return createHash("sha256").update(JSON.stringify(who)).digest("hex").slice(0, 32);
}

class TokenSource {
  private current?: StoredToken;
  private pending?: Promise<StoredToken>;
  private config?: Promise<Configuration>;
  private lib?: Client;

  constructor(private readonly spec: AuthSpec) {
    for (const s of [spec.clientSecret, spec.refreshToken, spec.password]) if (s) rememberSecret(s);
  }

  async token(ctx: TokenContext): Promise<string> {
    const now = ctx.now ?? Date.now;
    if (this.current && fresh(this.current, now())) return this.current.accessToken;
    if (!this.pending) {
      this.pending = this.renew(ctx).finally(() => {
        this.pending = undefined;
      });
    }
    this.current = await this.pending;
    return this.current.accessToken;
  }

  private async renew(ctx: TokenContext): Promise<StoredToken> {
    const now = ctx.now ?? Date.now;
    const stores = await this.stores(ctx);
    const key = storeKey(this.spec);
    let held = this.current;
    if (!held) {
      for (const store of stores) {
        held = await store.get(key).catch(() => undefined);
        if (held) break;
      }
      if (held) {
        rememberToken(held);
        if (fresh(held, now())) {
          ctx.log?.("Using the OAuth2 token from the token cache");
          return held;
        }
      }
    }
    let token: StoredToken | undefined;
    const refreshToken =
      held?.refreshToken ?? (this.spec.grant === "refresh_token" ? this.spec.refreshToken : undefined);
    if (refreshToken && held) {
      try {
        token = await this.grant(ctx, "refresh_token", refreshToken);
        // A provider that does not rotate refresh tokens sends none back: the old one still holds.
        token.refreshToken ??= refreshToken;
        ctx.log?.("Renewed the OAuth2 token with its refresh token");
      } catch (err) {
        // A refresh token the provider no longer takes: get a new token as the first time.
        ctx.log?.(`The refresh token was not accepted (${(err as Error).message}); fetching a new token`);
      }
    }
    token ??= await this.grant(ctx, this.spec.grant, refreshToken);
    for (const store of stores) await store.set(key, token, signInLabel(this.spec));
    return token;
  }

  private async stores(ctx: TokenContext): Promise<TokenStore[]> {
    const out: TokenStore[] = [];
    if (ctx.store) out.push(ctx.store);
    if (this.spec.cache) {
      const { fileTokenStore } = await import("./token-cache-file");
      out.push(fileTokenStore(this.spec.cache, ctx.cwd));
    }
    return out;
  }

  private async grant(
    ctx: TokenContext,
    grant: AuthSpec["grant"],
    refreshToken?: string,
  ): Promise<StoredToken> {
    const config = await this.configuration(ctx);
    const lib = this.lib as Client;
    const s = this.spec;
    const params: Record<string, string> = {};
    if (s.scope) params.scope = s.scope;
    if (s.audience) params.audience = s.audience;
    if (s.resource) params.resource = s.resource;
    const started = (ctx.now ?? Date.now)();
    const where = grant === "device_code" ? "device authorization" : "token endpoint";
    try {
      let response: import("openid-client").TokenEndpointResponse;
      switch (grant) {
        case "client_credentials":
          response = await lib.clientCredentialsGrant(config, params);
          break;
        case "refresh_token":
          response = await lib.refreshTokenGrant(
            config,
            refreshToken ?? "",
            pick(params, "scope", "resource"),
          );
          break;
        case "password":
          response = await lib.genericGrantRequest(config, "password", {
            ...params,
            username: s.username ?? "",
            password: s.password ?? "",
          });
          break;
        case "device_code":
          response = await this.deviceCode(config, ctx, params);
          break;
        case "authorization_code":
          response = await this.authorizationCode(config, ctx, params);
          break;
      }
      // A sign-in takes the person's time: the lifetime counts from the token response then.
      const interactive = grant === "device_code" || grant === "authorization_code";
      const token = toStored(response, interactive ? (ctx.now ?? Date.now)() : started);
      ctx.log?.(
        `Fetched an OAuth2 token (${grant} grant${token.lifetimeMs !== undefined ? `, valid for ${Math.round(token.lifetimeMs / 1000)} s` : ""})`,
      );
      return token;
    } catch (err) {
      throw await tokenError(err, where, s, config);
    }
  }

  private async deviceCode(
    config: Configuration,
    ctx: TokenContext,
    params: Record<string, string>,
  ): Promise<import("openid-client").TokenEndpointResponse> {
    const lib = this.lib as Client;
    const notify = needInteraction(ctx, "device_code");
    const started = await lib.initiateDeviceAuthorization(config, params);
    const complete = started.verification_uri_complete;
    notify.notify(
      `To sign in, open ${started.verification_uri} and enter the code ${started.user_code}${complete ? ` (or open ${complete})` : ""}`,
    );
    if (complete && notify.openUrl) await notify.openUrl(complete).catch(() => false);
    return lib.pollDeviceAuthorizationGrant(config, started, undefined, { signal: ctx.signal });
  }

  private async authorizationCode(
    config: Configuration,
    ctx: TokenContext,
    params: Record<string, string>,
  ): Promise<import("openid-client").TokenEndpointResponse> {
    const lib = this.lib as Client;
    const interaction = needInteraction(ctx, "authorization_code");
    const verifier = lib.randomPKCECodeVerifier();
    const challenge = await lib.calculatePKCECodeChallenge(verifier);
    const state = lib.randomState();
    const redirect = await receiveRedirect({ port: this.spec.redirectPort, signal: ctx.signal });
    try {
      const url = lib.buildAuthorizationUrl(config, {
        redirect_uri: redirect.uri,
        scope: params.scope ?? "openid",
        code_challenge: challenge,
        code_challenge_method: "S256",
        state,
        ...pick(params, "audience", "resource"),
      });
      const opened = interaction.openUrl ? await interaction.openUrl(url.href).catch(() => false) : false;
      interaction.notify(
        opened
          ? `Signing in through the browser (waiting for the redirect to ${redirect.uri})`
          : `To sign in, open ${url.href}`,
      );
      const back = await redirect.received;
      return await lib.authorizationCodeGrant(
        config,
        back,
        { pkceCodeVerifier: verifier, expectedState: state },
        { redirect_uri: redirect.uri },
      );
    } finally {
      redirect.close();
    }
  }

  private configuration(ctx: TokenContext): Promise<Configuration> {
    this.config ??= this.configure(ctx).catch((err) => {
      this.config = undefined;
      throw err;
    });
    return this.config;
  }

  private async configure(ctx: TokenContext): Promise<Configuration> {
    const lib = await import("openid-client");
    this.lib = lib;
    const s = this.spec;
    const auth =
      s.clientAuth === "post"
        ? lib.ClientSecretPost(s.clientSecret)
        : s.clientAuth === "basic"
          ? lib.ClientSecretBasic(s.clientSecret)
          : lib.None();
    const fetch = tokenFetch(ctx);
    const insecureHttp = [s.issuer, s.tokenUrl, s.authorizationUrl, s.deviceAuthorizationUrl].some((u) =>
      u?.toLowerCase().startsWith("http:"),
    );
    let config: Configuration;
    if (s.issuer) {
      try {
        config = await lib.discovery(new URL(s.issuer), s.clientId, undefined, auth, {
          [lib.customFetch]: fetch,
          execute: insecureHttp ? [lib.allowInsecureRequests] : [],
        });
      } catch (err) {
        throw await tokenError(err, "discovery", s);
      }
      // The discovered metadata as plain JSON (serverMetadata() adds methods to it).
      const meta = JSON.parse(
        JSON.stringify(config.serverMetadata()),
      ) as import("openid-client").ServerMetadata;
      // Explicit endpoints win over the discovered ones.
      if (s.tokenUrl || s.authorizationUrl || s.deviceAuthorizationUrl) {
        config = new lib.Configuration(
          {
            ...meta,
            token_endpoint: s.tokenUrl ?? meta.token_endpoint,
            authorization_endpoint: s.authorizationUrl ?? meta.authorization_endpoint,
            device_authorization_endpoint: s.deviceAuthorizationUrl ?? meta.device_authorization_endpoint,
          },
          s.clientId,
          undefined,
          auth,
        );
      }
    } else {
      config = new lib.Configuration(
        {
          issuer: new URL(s.tokenUrl as string).origin,
          token_endpoint: s.tokenUrl,
          authorization_endpoint: s.authorizationUrl,
          device_authorization_endpoint: s.deviceAuthorizationUrl,
        },
        s.clientId,
        undefined,
        auth,
      );
    }
    config[lib.customFetch] = fetch;
    if (insecureHttp) lib.allowInsecureRequests(config);
    return config;
  }
}

function needInteraction(ctx: TokenContext, grant: string): TokenInteraction {
  if (!ctx.interaction) {
    throw new ProtocallError(
      `the ${grant} grant needs a person to sign in, and nobody can be asked here; use it from a terminal or the editor, or use client_credentials`,
    );
  }
  return ctx.interaction;
}

/** Whether a token has more than its margin left. */
function fresh(t: StoredToken, now: number): boolean {
  if (t.expiresAt === undefined) return true;
  const margin = Math.min(MAX_MARGIN_MS, (t.lifetimeMs ?? MAX_MARGIN_MS * 4) / 4);
  return t.expiresAt - now > margin;
}

function toStored(r: import("openid-client").TokenEndpointResponse, started: number): StoredToken {
  const token: StoredToken = { accessToken: r.access_token };
  if (r.refresh_token) token.refreshToken = r.refresh_token;
  if (typeof r.expires_in === "number" && r.expires_in > 0) {
    token.lifetimeMs = r.expires_in * 1000;
    // expires_in is in whole seconds, and providers count them from a whole second of their own
    // clock (`exp` = issued second + lifetime): up to a second of the lifetime may already be gone.
    token.expiresAt = started + token.lifetimeMs - Math.min(1000, token.lifetimeMs / 2);
  }
  rememberToken(token);
  return token;
}

/** Tells the redactor the token's values, so they are hidden wherever they appear. */
function rememberToken(t: StoredToken): void {
  rememberSecret(t.accessToken);
  if (t.refreshToken) rememberSecret(t.refreshToken);
}

function pick(params: Record<string, string>, ...names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) if (params[n] !== undefined) out[n] = params[n];
  return out;
}
