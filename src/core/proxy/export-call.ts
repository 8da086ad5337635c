// Turns a stored proxied call into something to run again: a `.rpc` request whose `# @assert`
// lines hold what was observed (status or error code, the response messages), or a `protocall curl`
// / `buf curl` command line. Secret header values are redacted by the one redactor.
import { redactHeaderValue } from "../invoke/redact";
import type { ProxiedCall } from "./call-store";

/** Headers the protocol sets itself: not part of what a user asks for. */
const PROTOCOL_HEADER =
  /^(content-type|content-length|content-encoding|accept-encoding|user-agent|te|grpc-(timeout|encoding|accept-encoding)|connect-(protocol-version|timeout-ms|content-encoding|accept-encoding)|x-grpc-web|x-user-agent)$/i;

export function userHeaders(call: ProxiedCall): [string, string][] {
  return Object.entries(call.requestHeaders)
    .filter(([k]) => !PROTOCOL_HEADER.test(k))
    .map(([k, v]) => [k, redactHeaderValue(k, v)]);
}

function hasRaw(value: unknown): boolean {
  return typeof value === "object" && value !== null && ("$raw" in value || "$text" in value);
}

export type ExportFormat = "rpc" | "curl" | "buf-curl";

export function exportCall(call: ProxiedCall, as: ExportFormat): string {
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
