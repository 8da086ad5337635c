// Verbose output of `protocall curl -v` on stderr, in the line kinds of `buf curl -v`:
//   `* `            information (dialing, TLS, reflection steps, "Invoking RPC ...")
//   `> (#N) `       request line and sorted request headers
//   `} (#N) [k bytes data]`  request body bytes sent
//   `< (#N) `       status line, sorted response headers, and after the body the trailers
//   `< (#N) [*] `   trailers carried in the body (Connect end-of-stream, gRPC-Web trailer frame)
//   `{ (#N) [k bytes data]`  response body bytes received
// N counts HTTP requests from 1. Secret header values are redacted (redact.ts, the one redactor).
import type { HeaderSplitter } from "./repeated-headers";

export { redactHeaderValue } from "./redact";

import { redactHeaderValue } from "./redact";

export interface VerboseLog {
  readonly enabled: boolean;
  /** An information line (`* ...`). */
  info(text: string): void;
  /** A raw line after the prefix, for the other kinds. */
  line(text: string): void;
  /** Allocates the next request number. */
  nextRequest(): number;
}

/** Creates the log; when disabled every call is a no-op (and cheap). */
export function createVerboseLog(
  enabled: boolean,
  write: (text: string) => void,
  prefix = "protocall",
): VerboseLog {
  let n = 0;
  if (!enabled) {
    return {
      enabled: false,
      info() {},
      line() {},
      nextRequest: () => ++n,
    };
  }
  return {
    enabled: true,
    info(text) {
      write(`${prefix}: * ${text}\n`);
    },
    line(text) {
      write(`${prefix}: ${text}\n`);
    },
    nextRequest: () => ++n,
  };
}

/** `content-type` → `Content-Type`, as Go prints header names. */
export function canonicalHeaderName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

/** Writes headers as sorted `<marker> (#N) Name: value` lines. */
export function logHeaders(
  log: VerboseLog,
  marker: string,
  n: number,
  headers: Headers,
  star = false,
  split?: HeaderSplitter,
): void {
  if (!log.enabled) return;
  const lines: [string, string][] = [];
  headers.forEach((value, name) => {
    if (name === "set-cookie") {
      for (const v of headers.getSetCookie()) lines.push([name, v]);
    } else {
      const values = split?.(name, value);
      if (values) for (const v of values) lines.push([name, v]);
      else lines.push([name, value]);
    }
  });
  lines.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const tag = star ? `${marker} (#${n}) [*]` : `${marker} (#${n})`;
  // An empty value leaves no space after the colon, as in buf's transcript (`Grpc-Message:`).
  for (const [name, value] of lines)
    log.line(
      `${tag} ${canonicalHeaderName(name)}:${value === "" ? "" : ` ${redactHeaderValue(name, value)}`}`,
    );
}
