// A proxied call's protocol (from its Content-Type) and its outcome as the client sees it: the
// gRPC status of gRPC (trailers, or the headers of a trailers-only answer) and gRPC-Web (its
// trailer envelope), the Connect error code of a Connect stream's end message or unary error body.
import { statusCodeNames } from "../rpcfile/assertion-syntax";
import type { EnvelopeReader } from "./envelopes";

export type ProxyProtocol = "grpc" | "grpcweb" | "connect";

export function detectProtocol(contentType: string): ProxyProtocol {
  if (contentType.startsWith("application/grpc-web")) return "grpcweb";
  if (contentType.startsWith("application/grpc")) return "grpc";
  return "connect";
}

function grpcName(code: string | undefined): string | undefined {
  if (code === undefined) return undefined;
  return statusCodeNames[Number(code)] ?? `code ${code}`;
}

export function callStatus(c: {
  protocol: ProxyProtocol;
  httpStatus: number;
  responseHeaders: Record<string, string>;
  trailers: Record<string, string>;
  received: EnvelopeReader;
  error?: string;
}): string {
  if (c.protocol === "grpc") {
    const s = grpcName(c.trailers["grpc-status"] ?? c.responseHeaders["grpc-status"]);
    if (s) return s;
  } else if (c.protocol === "grpcweb") {
    const text = c.received.controls.map((b) => b.toString("latin1")).join("\r\n");
    const m = /^grpc-status:\s*(\d+)/im.exec(text);
    const s = grpcName(m?.[1] ?? c.responseHeaders["grpc-status"]);
    if (s) return s;
  } else if (c.received.controls.length > 0) {
    try {
      const end = JSON.parse(c.received.controls[c.received.controls.length - 1].toString("utf8"));
      return end?.error?.code ?? "ok";
    } catch {}
  } else if (c.httpStatus === 200) {
    return "ok";
  } else if (c.httpStatus > 0) {
    try {
      const body = JSON.parse(Buffer.concat(c.received.messages).toString("utf8"));
      if (typeof body?.code === "string") return body.code;
    } catch {}
    return `http ${c.httpStatus}`;
  }
  // No answer at all: the upstream failed, or the client gave up first (cancelled, or its deadline).
  if (c.httpStatus === 0) return c.error ? "unavailable" : "canceled";
  return c.error ? "error" : `http ${c.httpStatus}`;
}
