// Request headers as `buf curl` sends them. Protocall's protocols come from connect-es, buf's from
// connect-go, and the two libraries differ in headers that servers see (and echo back, so `-v` output
// differs). The transport passes every request's headers through `alignRequestHeaders` before they are
// logged and sent:
//  - gRPC: `Content-Type: application/grpc`, not `application/grpc+proto` (the same codec; connect-go
//    and grpc-go send the short form, and some servers only know that one);
//  - `Accept-Encoding: identity` wherever the protocol does not use that header itself (all but
//    Connect unary calls), as connect-go sends it so that nothing compresses the HTTP body;
//  - gRPC-Web: no `X-Grpc-Web: 1`, and `X-User-Agent` names the protocol library alone (connect-go
//    sends its default user agent there, whatever `User-Agent` says).
// `timeoutHeader` gives the deadline's header in connect-go's format: `Grpc-Timeout` in the finest
// unit whose value fits in 8 digits (`2500000u` for 2.5 s; connect-es always sends milliseconds).
// Header names and values the user gives are never changed (the protocol-owned names above cannot be
// set with -H).
import type { Protocol } from "./options";

/** The protocol library and its version, as it names itself in `User-Agent` and `X-User-Agent`. */
export const CONNECT_ES = "connect-es/2.1.2";

/** Rewrites connect-es's request headers (in place) into what connect-go sends for the same call. */
export function alignRequestHeaders(protocol: Protocol, header: Headers): void {
  if (protocol === "grpc" && header.get("content-type") === "application/grpc+proto") {
    header.set("content-type", "application/grpc");
  }
  if (protocol === "grpcweb") {
    header.delete("x-grpc-web");
    header.set("x-user-agent", CONNECT_ES);
  }
  if (!header.has("accept-encoding")) header.set("accept-encoding", "identity");
}

/** The header that carries a call's timeout (milliseconds, > 0) in the protocol, as connect-go sends it. */
export function timeoutHeader(protocol: Protocol, ms: number): [string, string] {
  return protocol === "connect"
    ? ["connect-timeout-ms", String(Math.floor(ms))]
    : ["grpc-timeout", encodeGrpcTimeout(ms)];
}

/** gRPC timeout units and their sizes in nanoseconds. */
const GRPC_TIMEOUT_UNITS: [string, number][] = [
  ["n", 1],
  ["u", 1e3],
  ["m", 1e6],
  ["S", 1e9],
  ["M", 60e9],
  ["H", 3600e9],
];

/**
 * A gRPC timeout header value for a duration in milliseconds: the finest unit in which the value is
 * below 10^8 (the protocol allows 8 digits), truncated, as connect-go's `grpcEncodeTimeout` does.
 */
export function encodeGrpcTimeout(ms: number): string {
  const ns = Math.round(ms * 1e6);
  if (ns <= 0) return "0n";
  let encoded = "";
  for (const [unit, size] of GRPC_TIMEOUT_UNITS) {
    const value = Math.floor(ns / size);
    encoded = `${value}${unit}`;
    if (value < 1e8) break;
  }
  return encoded;
}
