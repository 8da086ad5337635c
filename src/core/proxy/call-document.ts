// A proxied call as a document to read (the editor opens it from the Traffic view): what was asked
// and answered, in order: the call's line, its request headers, each message with its time since the
// call began (→ sent, ← received, as the live-stream panel's timeline shows them), the response
// headers, the trailers and the end. Secret header values are redacted by the one redactor.
import { redactHeaderValue } from "../invoke/redact";
import type { ProxiedCall } from "./call-store";

function headerBlock(title: string, headers: Record<string, string>): string[] {
  const entries = Object.entries(headers);
  if (entries.length === 0) return [`${title}: none`];
  return [`${title}:`, ...entries.map(([k, v]) => `  ${k}: ${redactHeaderValue(k, v)}`)];
}

function at(ms: number | undefined): string {
  return ms === undefined ? "" : `+${ms.toFixed(1)} ms `;
}

export function callDocument(call: ProxiedCall): string {
  const request = call.decoded?.request ?? call.requestMessages;
  const response = call.decoded?.response ?? call.responseMessages;
  const timeline: { t: number; line: string }[] = [];
  for (const [i, m] of request.entries())
    timeline.push({
      t: call.requestTimes?.[i] ?? 0,
      line: `→ ${at(call.requestTimes?.[i])}${JSON.stringify(m)}`,
    });
  for (const [i, m] of response.entries())
    timeline.push({
      t: call.responseTimes?.[i] ?? call.durationMs,
      line: `← ${at(call.responseTimes?.[i])}${JSON.stringify(m)}`,
    });
  // Sent and received interleaved as they passed (a stable sort keeps each side's order).
  timeline.sort((a, b) => a.t - b.t);
  const end =
    call.status === "ok" ? "ok" : `${call.status}${call.statusMessage ? `: ${call.statusMessage}` : ""}`;
  const lines = [
    `#${call.id} ${call.method}`,
    `${call.protocol} over HTTP/${call.httpVersion} to ${call.upstream}, ${call.startedAt}`,
    `${end} in ${call.durationMs.toFixed(1)} ms, ${call.requestBytes} bytes sent, ${call.responseBytes} received`,
    "",
    ...headerBlock("Request headers", call.requestHeaders),
    "",
    "Messages:",
    ...(timeline.length > 0 ? timeline.map((e) => `  ${e.line}`) : ["  none"]),
    ...(call.truncated ? ["  (more messages passed than are kept)"] : []),
    "",
    ...headerBlock("Response headers", call.responseHeaders),
    "",
    ...headerBlock("Trailers", call.trailers),
  ];
  if (call.decoded?.details?.length)
    lines.push(
      "",
      "Error details:",
      ...call.decoded.details.map((d) => `  ${d.type} ${JSON.stringify(d.json)}`),
    );
  if (call.error) lines.push("", `Error: ${call.error}`);
  return `${lines.join("\n")}\n`;
}
