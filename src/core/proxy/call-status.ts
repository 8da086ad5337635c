// A proxied call's protocol (from its Content-Type) and its end as the client sees it: the gRPC
// status, message, trailers and error details of gRPC (trailers, or the headers of a trailers-only
// answer) and gRPC-Web (its trailer envelope), the Connect error of a Connect stream's end message
// (with its metadata as trailers) or of a unary error body.
import { fromBinary } from "@bufbuild/protobuf";
import { StatusSchema } from "../../gen/google/rpc/status_pb";
import { statusCodeNames } from "../rpcfile/assertion-syntax";

export type ProxyProtocol = "grpc" | "grpcweb" | "connect";

export function detectProtocol(contentType: string): ProxyProtocol {
  if (contentType.startsWith("application/grpc-web")) return "grpcweb";
  if (contentType.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/** An error detail as it came: its type's full name and its bytes (base64). */
export interface RawDetail {
  readonly type: string;
  readonly value: string;
}

/** How a call ended for its client. */
export interface CallEnd {
  /** `ok`, a status code name, `http N`, `canceled` or `unavailable` (no answer). */
  readonly status: string;
  /** The error's message. */
  readonly message?: string;
  /** The trailers (gRPC-Web's trailer envelope and a Connect stream's end metadata included). */
  readonly trailers: Record<string, string>;
  readonly details: RawDetail[];
}

function grpcName(code: string | undefined): string | undefined {
  if (code === undefined) return undefined;
  return statusCodeNames[Number(code)] ?? `code ${code}`;
}

function percentDecoded(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The details of a `grpc-status-details-bin` value (a google.rpc.Status), or none if unreadable. */
function grpcDetails(bin: string | undefined): RawDetail[] {
  if (!bin) return [];
  try {
    const status = fromBinary(StatusSchema, Buffer.from(bin, "base64"));
    return status.details.map((d) => ({
      type: d.typeUrl.slice(d.typeUrl.lastIndexOf("/") + 1),
      value: Buffer.from(d.value).toString("base64"),
    }));
  } catch {
    return [];
  }
}

/** The end of a gRPC or gRPC-Web call from its trailers. */
function grpcEnd(trailers: Record<string, string>): CallEnd | undefined {
  const status = grpcName(trailers["grpc-status"]);
  if (!status) return undefined;
  return {
    status,
    ...(status !== "ok" ? { message: percentDecoded(trailers["grpc-message"]) ?? "" } : {}),
    trailers,
    details: grpcDetails(trailers["grpc-status-details-bin"]),
  };
}

/** A Connect error object (`{code, message, details}`) as this call's end. */
function connectError(error: unknown, trailers: Record<string, string>): CallEnd | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as { code?: unknown; message?: unknown; details?: unknown };
  if (typeof e.code !== "string") return undefined;
  const details = Array.isArray(e.details)
    ? e.details
        .filter((d) => typeof d?.type === "string" && typeof d?.value === "string")
        .map((d) => ({ type: d.type as string, value: d.value as string }))
    : [];
  return {
    status: e.code,
    message: typeof e.message === "string" ? e.message : "",
    trailers,
    details,
  };
}

/** The `name: value` lines of a gRPC-Web trailer envelope. */
function trailerLines(controls: readonly Buffer[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of controls
    .map((b) => b.toString("latin1"))
    .join("\r\n")
    .split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    out[name] = name in out ? `${out[name]}, ${value}` : value;
  }
  return out;
}

/**
 * The status of a call whose stream was reset before it ended with one: the caller's reset is its
 * cancel, or its deadline when the call ran (about) as long as its timeout header (`grpc-timeout`,
 * `connect-timeout-ms`) allowed; the upstream's is mapped from the HTTP/2 error code as gRPC maps it
 * (CANCEL → canceled, REFUSED_STREAM → unavailable, ENHANCE_YOUR_CALM → resource_exhausted,
 * INADEQUATE_SECURITY → permission_denied, anything else → internal).
 */
export function resetStatus(reset: CallReset): string {
  if (reset.by === "client") {
    // The caller's clock started before the proxy saw the call (and counts its connecting): a reset in
    // the timeout's last tenth (at least its last 50 ms) is the deadline.
    const t = reset.timeoutMs;
    const past = t !== undefined && (reset.elapsedMs ?? 0) >= t - Math.max(50, t / 10);
    return past ? "deadline_exceeded" : "canceled";
  }
  switch (reset.code) {
    case 0x7:
      return "unavailable";
    case 0x8:
      return "canceled";
    case 0xb:
      return "resource_exhausted";
    case 0xc:
      return "permission_denied";
    default:
      return "internal";
  }
}

/** A stream reset before its status: by whom, with which HTTP/2 code, and (the caller's) against its timeout. */
export interface CallReset {
  by: "client" | "upstream";
  code: number;
  /** The call's timeout from its request headers, if it had one. */
  timeoutMs?: number;
  /** How long the call had run when it was reset. */
  elapsedMs?: number;
}

const grpcTimeoutUnits: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/** The timeout a call's request headers give (`grpc-timeout` as gRPC writes it, `connect-timeout-ms`). */
export function requestTimeoutMs(headers: Record<string, string | string[] | undefined>): number | undefined {
  const grpc = /^(\d{1,8})([HMSmun])$/.exec(String(headers["grpc-timeout"] ?? ""));
  if (grpc) return Number(grpc[1]) * grpcTimeoutUnits[grpc[2]];
  const connect = /^\d{1,10}$/.exec(String(headers["connect-timeout-ms"] ?? ""));
  return connect ? Number(connect[0]) : undefined;
}

export function callEnd(c: {
  protocol: ProxyProtocol;
  httpStatus: number;
  responseHeaders: Record<string, string>;
  trailers: Record<string, string>;
  /** Control envelopes of the response (gRPC-Web trailers, Connect end-of-stream). */
  controls: readonly Buffer[];
  /** The response messages (a Connect unary error body is the one message). */
  messages: readonly Buffer[];
  error?: string;
  /** The stream was reset (by the caller or the upstream) before the answer ended. */
  reset?: CallReset;
}): CallEnd {
  const plain = (status: string): CallEnd => ({ status, trailers: c.trailers, details: [] });
  if (c.protocol === "grpc") {
    // A trailers-only answer (most errors) carries the status in its headers.
    const end = grpcEnd(c.trailers["grpc-status"] !== undefined ? c.trailers : c.responseHeaders);
    if (end) return end;
  } else if (c.protocol === "grpcweb") {
    const end = grpcEnd(
      c.controls.length > 0 ? { ...c.trailers, ...trailerLines(c.controls) } : c.responseHeaders,
    );
    if (end) return end;
  } else if (c.controls.length > 0) {
    try {
      const end = JSON.parse(c.controls[c.controls.length - 1].toString("utf8"));
      const trailers: Record<string, string> = { ...c.trailers };
      for (const [k, v] of Object.entries((end?.metadata ?? {}) as Record<string, unknown>))
        trailers[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : String(v);
      return connectError(end?.error, trailers) ?? { status: "ok", trailers, details: [] };
    } catch {}
  }
  // Cut off before its status came: by whom, and how.
  if (c.reset) return plain(resetStatus(c.reset));
  if (c.protocol === "connect" && c.controls.length === 0) {
    if (c.httpStatus === 200) return plain("ok");
    if (c.httpStatus > 0) {
      try {
        const found = connectError(JSON.parse(Buffer.concat(c.messages).toString("utf8")), c.trailers);
        if (found) return found;
      } catch {}
      return plain(`http ${c.httpStatus}`);
    }
  }
  // No answer at all: the upstream failed, or the client gave up first (cancelled, or its deadline).
  if (c.httpStatus === 0) return plain(c.error ? "unavailable" : "canceled");
  return plain(c.error ? "error" : `http ${c.httpStatus}`);
}
