// The positional URL of `protocall curl`: in invoke mode `<base URL>/<package.Service>/<Method>`,
// with the list flags a base URL (optional when the schema does not come from reflection).
import { ProtocallError } from "../errors";
import { reflectionOn } from "../schema/resolution-order";
import type { CurlOptions } from "./options";
import { redactSecrets } from "./redact";

export interface CurlUrl {
  /** The URL without the service and method (and without a trailing slash); "" when no URL. */
  baseUrl: string;
  /** Fully-qualified service name (invoke mode). */
  service?: string;
  /** Method name (invoke mode). */
  method?: string;
  /** The parsed URL, when one was given. */
  url?: URL;
  /** Whether the scheme is https. */
  secure: boolean;
  /**
   * The host as written in the URL, with the port if one was written (`example.com:8443`,
   * `[::1]:80`). netrc entries are looked up by this key.
   */
  host?: string;
  /** The host name without port and without IPv6 brackets (`example.com`, `::1`). */
  hostname?: string;
  /** The port, explicit or the scheme's default. */
  port?: number;
}

/** Whether the options ask for a listing rather than a call. */
export function isListMode(o: CurlOptions): boolean {
  return o.listServices || o.listMethods;
}

/** Whether reflection is on: explicitly, or by default unless --schema is given. */
export function usesReflection(o: CurlOptions): boolean {
  return reflectionOn(o);
}

const example = "http://localhost:8080/acme.v1.GreetService/Greet";

/** Parses and checks the URL. Throws ProtocallError saying what is wrong and how to fix it. */
export function parseCurlUrl(o: CurlOptions): CurlUrl {
  const list = isListMode(o);
  const raw = o.url;
  if (raw === undefined || raw === "") {
    if (list && !usesReflection(o)) return { baseUrl: "", secure: false };
    throw new ProtocallError(
      list
        ? "missing the URL: give the server's base URL, such as http://localhost:8080 (it may be omitted only when the schema comes from --schema)"
        : `missing the URL: give the method's URL, such as ${example}`,
    );
  }
  // Errors show the URL with its password and credential-like query values hidden.
  const shown = redactSecrets(raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    const why = unclosedBracket(raw) ? ' (its host has a "[" with no "]")' : "";
    throw new ProtocallError(`"${shown}" is not a valid URL${why}: write it as ${example}`);
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== "http" && scheme !== "https") {
    throw new ProtocallError(
      `invalid URL "${shown}": scheme "${scheme}" is not supported; use http or https`,
    );
  }
  if (url.hostname === "") {
    throw new ProtocallError(`invalid URL "${shown}": it has no host; write it as ${example}`);
  }
  const secure = scheme === "https";
  const host = writtenHost(raw) ?? url.host;
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port ? Number(url.port) : secure ? 443 : 80;
  const origin = `${scheme}://${url.host}`;
  const common = { url, secure, host, hostname, port };

  if (list) {
    const path = url.pathname.replace(/\/+$/, "");
    return { baseUrl: origin + path, ...common };
  }
  if (url.pathname.endsWith("/")) {
    throw new ProtocallError(
      `invalid URL "${shown}": it should not end with a slash (/); it must end with /<package.Service>/<Method>, as in ${example}`,
    );
  }
  const segments = url.pathname.split("/");
  const method = segments.pop() ?? "";
  const service = segments.pop() ?? "";
  if (segments.length === 0 || method === "" || service === "") {
    throw new ProtocallError(
      `invalid URL "${shown}": it should end with two non-empty path components, the fully-qualified service and the method, as in ${example}`,
    );
  }
  return {
    baseUrl: origin + segments.join("/"),
    service: decodeSegment(service, shown),
    method: decodeSegment(method, shown),
    ...common,
  };
}

/** Whether the authority opens an IPv6 bracket it does not close. */
function unclosedBracket(raw: string): boolean {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(raw);
  const authority = m ? m[1].slice(m[1].lastIndexOf("@") + 1) : "";
  return authority.includes("[") && !authority.includes("]");
}

function decodeSegment(segment: string, shown: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ProtocallError(
      `invalid URL "${shown}": "${segment}" has a malformed percent escape; write the service and method names as they are, as in ${example}`,
    );
  }
}

/** The authority's host[:port] exactly as written (lower-cased), without user info. */
function writtenHost(raw: string): string | undefined {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(raw);
  if (!m) return undefined;
  const authority = m[1].slice(m[1].lastIndexOf("@") + 1);
  return authority.toLowerCase() || undefined;
}
