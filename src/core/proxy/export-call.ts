// Turns a stored proxied call into something to run again: a `.rpc` request whose `# @assert`
// lines hold what was observed (status or error code, the response messages), a stub of
// `protocall mock`, or a `protocall curl` / `buf curl` command line. Secret header values are
// redacted by the one redactor.
import type { JsonValue } from "@bufbuild/protobuf";
import { ProtocallError } from "../errors";
import { redactHeaderValue } from "../invoke/redact";
import { statusCodeNames } from "../rpcfile/assertion-syntax";
import { stubAnswer, stubFile, stubRequest } from "../rpcfile/stub-writer";
import { answerMetadata } from "./answer-metadata";
import type { ProxiedCall } from "./call-store";

/** Headers the protocol sets itself: not part of what a user asks for. */
const PROTOCOL_HEADER =
  /^(content-type|content-length|content-encoding|accept-encoding|user-agent|te|grpc-(timeout|encoding|accept-encoding)|connect-(protocol-version|timeout-ms|content-encoding|accept-encoding)|x-grpc-web|x-user-agent)$/i;

/** The request headers the client chose (not the protocol's), redacted unless `redact` is false. */
export function userHeaders(call: ProxiedCall, redact = true): [string, string][] {
  return Object.entries(call.requestHeaders)
    .filter(([k]) => !PROTOCOL_HEADER.test(k))
    .map(([k, v]) => [k, redact ? redactHeaderValue(k, v) : v]);
}

function redacted(headers: Headers): Headers {
  const out = new Headers();
  headers.forEach((v, k) => {
    out.append(k, redactHeaderValue(k, v));
  });
  return out;
}

export function hasRaw(value: unknown): boolean {
  return typeof value === "object" && value !== null && ("$raw" in value || "$text" in value);
}

export type ExportFormat = "rpc" | "stub" | "curl" | "buf-curl";

/**
 * The call as a stub of `protocall mock` (the mock's own writer): it matches the request messages
 * as they were sent and answers what the upstream answered (status and message, the application's
 * headers and trailers, error details the schema knew, the response messages).
 */
export function stubOf(call: ProxiedCall): string {
  if (!statusCodeNames.includes(call.status))
    throw new ProtocallError(
      `call ${call.id} ended without an RPC status (${call.status}${call.error ? `: ${call.error}` : ""}): a stub answers with a status code, so export another call, or --as rpc`,
    );
  const decoded = call.decoded ?? { request: [], response: [] };
  const connectUnary =
    call.protocol === "connect" && !/^application\/connect\+/.test(call.requestHeaders["content-type"] ?? "");
  const unary = decoded.kind ? decoded.kind === "unary" : connectUnary;
  // A Connect unary error's body is the error, not a message.
  const responses = call.status !== "ok" && connectUnary ? [] : decoded.response;
  if ([...decoded.request, ...responses].some(hasRaw))
    throw new ProtocallError(
      `call ${call.id} has messages the schema could not decode: a stub needs them as JSON; run the proxy with --schema for ${call.method}`,
    );
  const { headers, trailers } = answerMetadata(call);
  const request = stubRequest(call.method, decoded.request as JsonValue[], decoded.kind === "bidi_streaming");
  const answer = stubAnswer({
    status: call.status,
    message: call.statusMessage,
    headers: redacted(headers),
    trailers: redacted(trailers),
    details: (decoded.details ?? []) as { type: string; json: JsonValue }[],
    responses: responses as JsonValue[],
    streaming: !unary,
  });
  return stubFile(
    [{ request, answers: [answer] }],
    `Exported by protocall proxy from call ${call.id} (${call.startedAt}): what ${call.upstream} answered.`,
    () => `${call.method}, call ${call.id}`,
  );
}

export function exportCall(call: ProxiedCall, as: ExportFormat): string {
  if (as === "stub") return stubOf(call);
  const url = `${call.upstream.replace(/\/$/, "")}/${call.method}`;
  const request = call.decoded?.request ?? [];
  const response = call.decoded?.response ?? [];
  const body = request.map((m) => JSON.stringify(m));
  if (as === "rpc") {
    const lines = [`### ${call.method}, recorded ${call.startedAt} (call ${call.id})`];
    if (call.protocol !== "connect") lines.push(`# @protocol ${call.protocol}`);
    if (call.status === "ok") {
      lines.push("# @assert status == ok");
      if (!response.some(hasRaw)) {
        lines.push(`# @assert messages.length == ${response.length}`);
        if (response.length > 0)
          lines.push(`# @assert message == ${JSON.stringify(response[response.length - 1])}`);
      }
    } else lines.push(`# @assert error.code == ${call.status}`);
    lines.push(url);
    for (const [k, v] of userHeaders(call)) lines.push(`${k}: ${v}`);
    lines.push("");
    lines.push(...(body.length > 0 ? body : ["{}"]));
    return `${lines.join("\n")}\n`;
  }
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`);
  const parts = [as === "curl" ? "protocall curl" : "buf curl", "--protocol", call.protocol];
  if (call.httpVersion === "2" && call.upstream.startsWith("http:")) parts.push("--http2-prior-knowledge");
  for (const [k, v] of userHeaders(call)) parts.push("-H", quote(`${k}: ${v}`));
  if (body.length > 0) parts.push("-d", quote(body.join("\n")));
  parts.push(quote(url));
  return `${parts.join(" ")}\n`;
}
