// The `--auth` value (`# @auth` in a .rpc file, `$auth` in an environment): how a call gets its
// bearer token from an OAuth2 / OpenID Connect provider. One line, so it reads like the other
// request options and fits a command line:
//
//   oauth2 client_credentials issuer=https://id.example.com client-id=cli client-secret={{secret}} scope="a b"
//
// The first word is `oauth2`, the second the grant; then `key=value` pairs (a value with spaces in
// double or single quotes). Endpoints come from the issuer's discovery document or are given
// explicitly (token-url, ...). Parsed when the option is read, so a mistake is reported with the
// option, before anything is sent.
import { ProtocallError } from "./errors";

export type Grant =
  | "client_credentials"
  | "refresh_token"
  | "password"
  | "device_code"
  | "authorization_code";

export type ClientAuthMethod = "basic" | "post" | "none";

export interface AuthSpec {
  grant: Grant;
  /** The issuer: its `/.well-known/openid-configuration` names the endpoints. */
  issuer?: string;
  tokenUrl?: string;
  authorizationUrl?: string;
  deviceAuthorizationUrl?: string;
  clientId: string;
  clientSecret?: string;
  /** How the client authenticates at the token endpoint (default basic with a secret, else none). */
  clientAuth: ClientAuthMethod;
  scope?: string;
  audience?: string;
  resource?: string;
  refreshToken?: string;
  username?: string;
  password?: string;
  /** Loopback port of the authorization code grant's redirect (default: any free port). */
  redirectPort?: number;
  /** An opt-in token cache file (written with 0600 permissions). */
  cache?: string;
}

const grants: Record<string, Grant> = {
  client_credentials: "client_credentials",
  refresh_token: "refresh_token",
  password: "password",
  device_code: "device_code",
  device: "device_code",
  authorization_code: "authorization_code",
  code: "authorization_code",
};

type Key = Exclude<keyof AuthSpec, "grant" | "clientAuth" | "redirectPort">;

const keys: Record<string, Key | "client-auth" | "redirect-port"> = {
  issuer: "issuer",
  "token-url": "tokenUrl",
  "authorization-url": "authorizationUrl",
  "device-authorization-url": "deviceAuthorizationUrl",
  "client-id": "clientId",
  "client-secret": "clientSecret",
  "client-auth": "client-auth",
  scope: "scope",
  audience: "audience",
  resource: "resource",
  "refresh-token": "refreshToken",
  username: "username",
  password: "password",
  "redirect-port": "redirect-port",
  cache: "cache",
};

/** The keys whose values are secrets (the redactor hides them; see redact.ts). */
export const secretAuthKeys = ["client-secret", "refresh-token", "password"] as const;

const usage =
  'give "oauth2 GRANT key=value ...", e.g. "oauth2 client_credentials issuer=https://id.example.com client-id=ID client-secret=SECRET"';

/** Parses an `--auth` value. Throws ProtocallError naming the problem and how to fix it. */
export function parseAuthSpec(text: string, from = "--auth"): AuthSpec {
  const words = splitWords(text, from);
  if (words[0]?.toLowerCase() !== "oauth2") {
    throw new ProtocallError(`${from}: unknown scheme "${words[0] ?? ""}"; ${usage}`);
  }
  const grantWord = (words[1] ?? "").toLowerCase().replaceAll("-", "_");
  const grant = grants[grantWord];
  if (!grant) {
    throw new ProtocallError(
      `${from}: unknown grant "${words[1] ?? ""}"; use one of client_credentials, refresh_token, password, device_code, authorization_code`,
    );
  }
  const spec: Partial<AuthSpec> & { grant: Grant } = { grant };
  let clientAuth: ClientAuthMethod | undefined;
  for (const word of words.slice(2)) {
    const eq = word.indexOf("=");
    const name = eq > 0 ? word.slice(0, eq).toLowerCase() : word;
    const key = keys[name];
    if (eq <= 0 || !key) {
      throw new ProtocallError(
        `${from}: unknown setting "${eq > 0 ? name : word}"; settings are key=value with key one of ${Object.keys(keys).join(", ")}`,
      );
    }
    const value = word.slice(eq + 1);
    if (key === "client-auth") {
      if (value !== "basic" && value !== "post" && value !== "none") {
        throw new ProtocallError(`${from}: client-auth=${value}: use basic, post or none`);
      }
      clientAuth = value;
    } else if (key === "redirect-port") {
      const port = Number(value);
      if (!/^\d+$/.test(value) || port < 1 || port > 65535) {
        throw new ProtocallError(`${from}: redirect-port=${value}: give a port number from 1 to 65535`);
      }
      spec.redirectPort = port;
    } else spec[key] = value;
  }
  for (const url of ["issuer", "tokenUrl", "authorizationUrl", "deviceAuthorizationUrl"] as const) {
    const value = spec[url];
    if (value !== undefined && !/^https?:\/\/[^/]/i.test(value)) {
      throw new ProtocallError(`${from}: ${kebab(url)}=${value}: not an http:// or https:// URL`);
    }
  }
  if (!spec.clientId) throw new ProtocallError(`${from}: client-id=... is missing; ${usage}`);
  if (!spec.issuer && !spec.tokenUrl) {
    throw new ProtocallError(
      `${from}: say where the token comes from: issuer=URL (discovery) or token-url=URL`,
    );
  }
  const needs: Partial<Record<Grant, [keyof AuthSpec, string][]>> = {
    refresh_token: [["refreshToken", "refresh-token"]],
    password: [
      ["username", "username"],
      ["password", "password"],
    ],
  };
  for (const [field, name] of needs[grant] ?? []) {
    if (!spec[field]) throw new ProtocallError(`${from}: the ${grant} grant needs ${name}=...`);
  }
  if (grant === "client_credentials" && !spec.clientSecret && clientAuth !== "none") {
    throw new ProtocallError(
      `${from}: the client_credentials grant needs client-secret=... (from a variable, e.g. client-secret={{$env CLIENT_SECRET}})`,
    );
  }
  if (!spec.issuer && grant === "device_code" && !spec.deviceAuthorizationUrl) {
    throw new ProtocallError(
      `${from}: the device_code grant needs issuer=URL or device-authorization-url=URL`,
    );
  }
  if (!spec.issuer && grant === "authorization_code" && !spec.authorizationUrl) {
    throw new ProtocallError(
      `${from}: the authorization_code grant needs issuer=URL or authorization-url=URL`,
    );
  }
  return { ...spec, clientAuth: clientAuth ?? (spec.clientSecret ? "basic" : "none") } as AuthSpec;
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Splits on spaces; double or single quotes keep spaces in a word (`scope="a b"`). */
function splitWords(text: string, from: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote = "";
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = "";
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new ProtocallError(`${from}: a ${quote} quote is not closed`);
  if (inWord) words.push(word);
  return words;
}
