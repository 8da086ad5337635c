// One `name: value` header, as given to -H / --reflect-header or read from a header file, and the
// headers the RPC protocols own (which a user may not set).
import { Code, ConnectError } from "@connectrpc/connect";
import { ProtocallError } from "./errors";

const owned = new Set([
  "accept",
  "accept-encoding",
  "content-type",
  "content-encoding",
  "te",
  "transfer-encoding",
  // Not allowed in HTTP/2; buf fails on it when sending.
  "upgrade",
]);

// Headers about the connection and the body length, which the transport sets itself. buf accepts
// them and they never reach the server; protocall accepts them too and leaves them out.
const ignored = new Set(["content-length", "connection", "keep-alive", "proxy-connection"]);

/** Whether the header is accepted but not sent (the transport manages it). */
export function isIgnoredHeader(name: string): boolean {
  return ignored.has(name.toLowerCase());
}

/** Whether the RPC protocol sets this header itself (so the user may not). */
export function isProtocolOwnedHeader(name: string): boolean {
  const n = name.toLowerCase();
  return owned.has(n) || n.startsWith("grpc-") || n.startsWith("connect-") || n.startsWith(":");
}

const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Splits `name: value` at the first colon and trims both sides. `where` says where the text came
 * from (`--header value`, `headers.txt:3`) for the error message. Refuses protocol-owned names.
 */
export function parseHeaderLine(text: string, where: string): [string, string] {
  const colon = text.indexOf(":");
  if (colon < 0 || text.trim() === "") {
    throw new ProtocallError(`${where} is a malformed header (it has no ":"); write it as "name: value"`);
  }
  const name = text.slice(0, colon).trim();
  const value = text.slice(colon + 1).trim();
  if (name === "" || !token.test(name)) {
    throw new ProtocallError(
      `${where} has an invalid header name ${JSON.stringify(name)}: a name is letters, digits and - _ . ! # $ % & ' * + ^ \` | ~, followed by ": value"`,
    );
  }
  if (isProtocolOwnedHeader(name)) {
    throw new ProtocallError(
      `${where}: header "${name}" is set by the RPC protocol and may not be given; remove it (use --protocol to choose the protocol)`,
    );
  }
  return [name, value];
}

/**
 * The header value as Node's HTTP stacks must be given it to put its UTF-8 bytes on the wire, as buf
 * and curl do: Node writes each character of a header string as one byte (latin1), and refuses
 * characters beyond U+00FF.
 */
export function toWireValue(value: string): string {
  return /[^\x20-\x7e\t]/.test(value) ? Buffer.from(value, "utf8").toString("latin1") : value;
}

/**
 * A header value with a control character (CR, LF, NUL, …) cannot be sent: refused as buf refuses it
 * (Go's net/http: `unavailable`, exit 112), naming the header but never echoing the value, which may
 * be a secret.
 */
export class InvalidHeaderValue extends ConnectError {
  constructor(name: string) {
    super(
      `net/http: invalid header field value for ${JSON.stringify(canonicalName(name))}`,
      Code.Unavailable,
    );
  }
}

/** Throws InvalidHeaderValue for the first header whose value has a control character. */
export function checkHeaderValues(headers: readonly (readonly [string, string])[]): void {
  for (const [name, value] of headers) {
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) throw new InvalidHeaderValue(name);
  }
}

function canonicalName(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}
