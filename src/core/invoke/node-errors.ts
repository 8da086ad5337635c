// The one place where Node's network errors become the errors buf prints, in Go's words: dial
// failures (`dial tcp host:port: connect: connection refused`), certificate failures (`x509: …`),
// TLS alerts after the handshake, an HTTP/2 GOAWAY before the response, and an HTTP/1.1 server reached
// with HTTP/2 prior knowledge.
import { isIP } from "node:net";
import type * as tls from "node:tls";
import { Code, ConnectError } from "@connectrpc/connect";
import { altNames } from "./tls-log";

/**
 * A certificate that Node's verification refused, as Go's x509 package words it (the calls and the
 * registry client both say it so); undefined for other codes.
 */
export function x509Problem(code: string): string | undefined {
  switch (code) {
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "UNABLE_TO_GET_ISSUER_CERT":
    case "UNABLE_TO_GET_ISSUER_CERT_LOCALLY":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
      return "x509: certificate signed by unknown authority";
    case "CERT_HAS_EXPIRED":
    case "CERT_NOT_YET_VALID":
      return "x509: certificate has expired or is not yet valid";
    default:
      return undefined;
  }
}

/** Words a connection failure as Go does, which `buf curl` prints. */
export function dialErrorMessage(
  err: NodeJS.ErrnoException,
  target: string,
  host: string,
  verifyName: string,
): string {
  switch (err.code) {
    case "ECONNREFUSED":
      return `dial ${target}: connect: connection refused`;
    case "ENOENT":
      return `dial ${target}: connect: no such file or directory`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `dial tcp: lookup ${host}: no such host`;
    case "ETIMEDOUT":
      return err.message.startsWith("dial ") ? err.message : `dial ${target}: i/o timeout`;
    case "EHANDSHAKETIMEDOUT":
      return err.message;
    case "ECONNRESET":
      return `dial ${target}: connect: connection reset by peer`;
    case "EHOSTUNREACH":
      return `dial ${target}: connect: no route to host`;
    case "ERR_TLS_CERT_ALTNAME_INVALID": {
      const names = altNames((err as { cert?: tls.PeerCertificate }).cert?.subjectaltname);
      const valid = isIP(verifyName) ? names.ips : names.dns;
      return valid.length > 0
        ? `x509: certificate is valid for ${valid.join(", ")}, not ${verifyName}`
        : `x509: certificate is not valid for any names, but wanted to match ${verifyName}`;
    }
    case "ERR_SSL_WRONG_VERSION_NUMBER":
    case "ERR_SSL_PACKET_LENGTH_TOO_LONG":
      // Usually an https URL for a server that speaks plain http.
      return "tls: first record does not look like a TLS handshake";
    default:
      return x509Problem(err.code ?? "") ?? `dial ${target}: ${err.message}`;
  }
}

export interface GoAway {
  readonly code: number;
  readonly lastStreamID: number;
  readonly debug: string;
}

/** HTTP/2 error codes by number, as Go names them. */
const http2ErrorNames = [
  "NO_ERROR",
  "PROTOCOL_ERROR",
  "INTERNAL_ERROR",
  "FLOW_CONTROL_ERROR",
  "SETTINGS_TIMEOUT",
  "STREAM_CLOSED",
  "FRAME_SIZE_ERROR",
  "REFUSED_STREAM",
  "CANCEL",
  "COMPRESSION_ERROR",
  "CONNECT_ERROR",
  "ENHANCE_YOUR_CALM",
  "INADEQUATE_SECURITY",
  "HTTP_1_1_REQUIRED",
];

/** An HTTP/2 error code as Go names it (`CANCEL`, `unknown error code 0x99`). */
export function http2ErrorName(code: number): string {
  return http2ErrorNames[code] ?? `unknown error code 0x${code.toString(16)}`;
}

/**
 * A call that failed before its response because the server sent GOAWAY: `unavailable`, worded as
 * Go's HTTP/2 client words it (the server refused the first stream with an error code, or went away
 * and closed the connection), never as a protocol mismatch.
 */
export function goAwayError(g: GoAway): ConnectError {
  const name = http2ErrorName(g.code);
  return new ConnectError(
    g.code !== 0 && g.lastStreamID === 0
      ? `http2: Transport received GOAWAY from server ErrCode:${name}`
      : `http2: server sent GOAWAY and closed the connection; LastStreamID=${g.lastStreamID}, ErrCode=${name}, debug=${JSON.stringify(g.debug)}`,
    Code.Unavailable,
  );
}

/**
 * An HTTP/2 protocol error before any response: the server does not speak HTTP/2 (typically an
 * HTTP/1.1-only server reached with prior knowledge). `unavailable`, worded as Go's HTTP/2 client.
 */
export function notHttp2(err: unknown): unknown {
  const text = err instanceof ConnectError ? err.rawMessage : String(err);
  const codes: string[] = [];
  for (let e: unknown = err; e instanceof Error && codes.length < 8; e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string") codes.push(code);
  }
  if (
    codes.includes("ERR_HTTP2_ERROR") ||
    codes.includes("ERR_HTTP2_SESSION_ERROR") ||
    text === "Protocol error"
  ) {
    return new ConnectError(
      "http2: failed reading the frame payload: http2: frame too large, note that the frame header looked like an HTTP/1.1 header",
      Code.Unavailable,
    );
  }
  return err;
}

export function messageOf(err: unknown): string {
  return err instanceof ConnectError ? err.rawMessage : err instanceof Error ? err.message : String(err);
}

/** Whether an error or one of its causes has this Node error code (or says it, as connect-es does). */
export function hasCode(err: unknown, code: string): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if ((e as NodeJS.ErrnoException).code === code) return true;
    if (messageOf(e).includes(`read ${code}`)) return true;
  }
  return false;
}

/**
 * A TLS alert from the server after the handshake (TLS 1.3 servers check a client certificate then)
 * is a connection failure, `unavailable`, however it reaches the call: on the waiting connection, on
 * the HTTP/2 session, or on a stream. Worded as Go words it by the failure description.
 */
export function tlsAlert(err: unknown): ConnectError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    const text = e instanceof ConnectError ? e.rawMessage : e.message;
    if (/^ERR_SSL_.*ALERT/.test(code) || /SSL routines:[^\n]*alert/.test(text)) {
      return new ConnectError(text, Code.Unavailable, undefined, undefined, e);
    }
  }
  return undefined;
}
