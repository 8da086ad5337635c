// The application's response headers and trailers of a proxied call, wherever its protocol put
// them: a trailers-only gRPC answer carries its trailers in its headers, a Connect unary answer its
// trailers as `trailer-` headers. The stub export writes them and replay compares them, so both read
// them here.
import { passedHeaders } from "../invoke/protocol-headers";
import type { ProxiedCall } from "./call-store";

export function answerMetadata(call: ProxiedCall): { headers: Headers; trailers: Headers } {
  const headers = new Headers();
  const trailers = new Headers();
  const trailersOnly = call.protocol === "grpc" && call.trailers["grpc-status"] === undefined;
  const connectUnary =
    call.protocol === "connect" && !/^application\/connect\+/.test(call.requestHeaders["content-type"] ?? "");
  for (const [k, v] of Object.entries(call.responseHeaders)) {
    if (trailersOnly) trailers.append(k, v);
    else if (connectUnary && /^trailer-/i.test(k)) trailers.append(k.slice("trailer-".length), v);
    else headers.append(k, v);
  }
  for (const [k, v] of Object.entries(call.trailers)) trailers.append(k, v);
  return { headers: passedHeaders(headers), trailers: passedHeaders(trailers) };
}
