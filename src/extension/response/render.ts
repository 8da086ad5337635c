// The response panel's content as HTML, built here (no `vscode` needed, so plain tests cover it) and
// shown by the webview. Every piece of text that comes from a server or a file is escaped, so a
// hostile header value or error message is shown as text, never run; the webview's content security
// policy blocks inline scripts and handlers as a second line.
import type { CheckResult } from "../../core/assertions/evaluate";
import type { CallResult, HeaderPairs } from "../../core/invoke/call-session";

/** One response (or one attempt that could not be sent) in the panel's history. */
export interface ResponseEntry {
  id: number;
  /** The request's name, else `request N (line L)`. */
  requestLabel: string;
  url?: string;
  protocol?: string;
  /** Epoch milliseconds when it started. */
  startedAt: number;
  state: "running" | "done" | "not-sent";
  method?: string;
  headers: HeaderPairs;
  /** Messages received so far (formatted JSON). */
  messages: string[];
  /** The outcome, once done. */
  result?: CallResult;
  /** Why it was not sent (`file:line:col: message` lines). */
  problems?: string[];
  /** The response's checks (`# @assert`, `# @capture`, the implicit status check), once done. */
  checks?: CheckResult[];
  /** For a live stream: what was sent and received, and whether sending is closed. */
  live?: LiveState;
  /** For a `# @stream-file` request: the file's bytes sent so far, as the progress line says it. */
  upload?: { sent: number; total: number; line: string };
}

/** One message of a live stream's timeline. */
export interface TimelineEvent {
  dir: "sent" | "received";
  /** Epoch milliseconds: when the call took it to send, or when it arrived. */
  at: number;
  /** 0-based among the messages of its direction. */
  index: number;
  /** The message as JSON. */
  json: string;
}

export interface LiveState {
  timeline: TimelineEvent[];
  /** Close Send was used (or the call ended): nothing more can be sent. */
  closed: boolean;
  /** Why the last message typed in the panel was not sent. */
  error?: string;
}

/** Messages shown in the panel; the rest of a long stream is in Copy, Save and the JSON document. */
export const MAX_SHOWN_MESSAGES = 500;

export interface HistoryPosition {
  /** 0 = the newest. */
  index: number;
  count: number;
}

const escapes: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c]);
}

/** JSON with its tokens in spans (keys, strings, numbers, literals) for theme colours; all escaped. */
export function highlightJson(json: string): string {
  const token = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;
  let out = "";
  let last = 0;
  for (let m = token.exec(json); m; m = token.exec(json)) {
    out += escapeHtml(json.slice(last, m.index));
    if (m[1] !== undefined) {
      const cls = m[2] !== undefined ? "k" : "s";
      out += `<span class="${cls}">${escapeHtml(m[1])}</span>${m[2] !== undefined ? escapeHtml(m[2]) : ""}`;
    } else if (m[3] !== undefined) out += `<span class="n">${escapeHtml(m[3])}</span>`;
    else out += `<span class="l">${escapeHtml(m[4])}</span>`;
    last = m.index + m[0].length;
  }
  return out + escapeHtml(json.slice(last));
}

/** One response message, as appended while a stream runs. */
export function renderMessage(json: string, index: number): string {
  return `<section class="message" data-index="${index}"><h3>Message ${index + 1}</h3><pre class="json">${highlightJson(json)}</pre></section>`;
}

function renderHeaders(title: string, cls: string, headers: HeaderPairs): string {
  if (headers.length === 0) return "";
  const rows = headers
    .map(([n, v]) => `<tr><th>${escapeHtml(n)}</th><td>${escapeHtml(v)}</td></tr>`)
    .join("");
  return `<details class="${cls}" open><summary>${escapeHtml(title)} (${headers.length})</summary><table>${rows}</table></details>`;
}

/** The status line: code name, the CLI's exit code, duration. */
export function statusText(entry: ResponseEntry): string {
  if (entry.state === "not-sent") return "Not sent";
  if (entry.state === "running" || !entry.result) return "Sending…";
  const r = entry.result;
  const code = r.code ?? "error";
  return `${code} · exit ${r.exitCode} · ${formatDuration(r.durationMs)}`;
}

export function formatDuration(ms: number): string {
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 10_000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The checks of a response: each passed or failed, as written, with the value found (or what was
 * expected and found, for a failure). Values come from the server: escaped. The title counts the
 * written checks (`# @assert`, `# @capture`); the implicit `status == ok` check of a request with no
 * assertion on status or error is shown as such, never counted as an assertion. Checks of a call
 * that failed outside the RPC did not run, and say so.
 */
export function renderChecks(checks: readonly CheckResult[]): string {
  if (checks.length === 0) return "";
  const title = checksTitle(checks);
  const failed = checks.some((c) => !c.passed);
  const rows = checks
    .map((c) => {
      const state = c.notRun ? "not-run" : c.passed ? "passed" : "failed";
      const mark = c.notRun ? "–" : c.passed ? "✓" : "✗";
      const actual = c.found ? (JSON.stringify(c.actual) ?? "") : "";
      const detail = c.passed ? (actual ? `actual: ${actual}` : "") : c.message;
      const implicit =
        c.kind === "status"
          ? ` <span class="implicit">(implicit: no # @assert on status or error)</span>`
          : "";
      return (
        `<li class="check ${state}" data-line="${c.range.start.line + 1}">` +
        `<span class="mark">${mark}</span> <code class="text">${escapeHtml(c.text)}</code>${implicit}` +
        (detail ? ` <span class="actual">${escapeHtml(detail)}</span>` : "") +
        `</li>`
      );
    })
    .join("");
  return `<section class="checks ${failed ? "failed" : "passed"}"><h3>${escapeHtml(title)}</h3><ul>${rows}</ul></section>`;
}

/** `Assertions: all 2 passed`, `Assertions: 1 of 3 failed`, `Implicit check: status == ok passed`, … */
export function checksTitle(checks: readonly CheckResult[]): string {
  if (checks.some((c) => c.notRun)) return `Checks not run (${checks.length}): the call failed`;
  const written = checks.filter((c) => c.kind !== "status");
  const implicit = checks.find((c) => c.kind === "status");
  const implicitText = implicit ? `implicit check status == ok ${implicit.passed ? "passed" : "failed"}` : "";
  if (written.length === 0) return implicitText.replace(/^i/, "I");
  const failed = written.filter((c) => !c.passed).length;
  const title =
    failed === 0
      ? `Assertions: all ${written.length} passed`
      : `Assertions: ${failed} of ${written.length} failed`;
  return implicit && !implicit.passed ? `${title}; ${implicitText}` : title;
}

function clock(at: number): string {
  const d = new Date(at);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/**
 * A live stream: the timeline of messages sent (→) and received (←) with their times, and while
 * sending is open, a box to type another message with Send and Close Send; Save Session as Request.
 */
export function renderLive(entry: ResponseEntry): string {
  const live = entry.live;
  if (!live) return "";
  const rows = live.timeline
    .map((e) => {
      const arrow = e.dir === "sent" ? "→ sent" : "← received";
      const compact = e.json.replace(/\s*\n\s*/g, " ");
      return (
        `<li class="event ${e.dir}" data-dir="${e.dir}" data-index="${e.index}">` +
        `<span class="time">${clock(e.at)}</span> <span class="dir">${arrow} #${e.index + 1}</span> ` +
        `<code>${escapeHtml(compact)}</code></li>`
      );
    })
    .join("");
  const open = !live.closed && entry.state === "running";
  const box = open
    ? `<div class="live-send"><textarea id="live-input" rows="3" placeholder="Another message as JSON, checked against the method's input type"></textarea>` +
      `<div class="live-buttons"><button data-action="liveSend" data-input="live-input">Send</button>` +
      `<button data-action="liveClose">Close Send</button></div>` +
      (live.error ? `<p class="live-error">${escapeHtml(live.error)}</p>` : "") +
      `</div>`
    : `<p class="live-closed">${entry.state === "running" ? "Sending closed: waiting for the server to finish" : "Stream ended"}</p>`;
  const save = `<button data-action="liveSave">Save Session as Request</button>`;
  return `<section class="live"><h3>Live stream</h3><ol class="timeline" id="timeline">${rows}</ol>${box}${save}</section>`;
}

/** The whole panel body for one entry, with the history navigation. */
export function renderEntry(entry: ResponseEntry, position: HistoryPosition): string {
  const r = entry.result;
  const state = entry.state === "running" ? "running" : r?.ok ? "ok" : "failed";
  const when = new Date(entry.startedAt).toLocaleTimeString();
  const parts: string[] = [];
  parts.push(
    `<header class="bar"><div class="status ${state}" id="status">${escapeHtml(statusText(entry))}</div>` +
      `<div class="actions">` +
      (entry.state === "running" ? `<button data-action="cancel">Cancel</button>` : "") +
      `<button data-action="older" ${position.index + 1 >= position.count ? "disabled" : ""} title="Older response">◀</button>` +
      `<span class="position">${position.count - position.index} / ${position.count}</span>` +
      `<button data-action="newer" ${position.index === 0 ? "disabled" : ""} title="Newer response">▶</button>` +
      `<button data-action="copy">Copy</button><button data-action="save">Save</button>` +
      `<button data-action="open">Open as JSON document</button></div></header>`,
  );
  parts.push(
    `<div class="request"><span class="label">${escapeHtml(entry.requestLabel)}</span>` +
      (entry.method ? ` <span class="method">${escapeHtml(entry.method)}</span>` : "") +
      (entry.protocol ? ` <span class="protocol">${escapeHtml(entry.protocol)}</span>` : "") +
      (entry.url ? ` <span class="url">${escapeHtml(entry.url)}</span>` : "") +
      ` <span class="time">${escapeHtml(when)}</span></div>`,
  );
  if (entry.problems && entry.problems.length > 0) {
    parts.push(
      `<section class="problems"><h3>Not sent: fix the request</h3><ul>${entry.problems.map((p) => `<li>${escapeHtml(p)}</li>`).join("")}</ul></section>`,
    );
  }
  if (entry.checks) parts.push(renderChecks(entry.checks));
  if (entry.live) parts.push(renderLive(entry));
  if (entry.upload) parts.push(`<p class="upload">Uploaded ${escapeHtml(entry.upload.line)}</p>`);
  if (r?.error) {
    const details = r.error.details
      .map(
        (d) =>
          `<div class="detail"><div class="type">${escapeHtml(d.type)}</div>` +
          (d.json !== undefined
            ? `<pre class="json">${highlightJson(d.json)}</pre>`
            : `<pre class="bytes">${escapeHtml(d.value)}</pre>`) +
          `</div>`,
      )
      .join("");
    parts.push(
      `<section class="error"><h3>${escapeHtml(r.code ? `Error: ${r.code}` : "Error")}</h3>` +
        `<pre class="error-message">${escapeHtml(r.error.message)}</pre>` +
        (details ? `<h4>Details (${r.error.details.length})</h4>${details}` : "") +
        `</section>`,
    );
  }
  parts.push(renderHeaders("Response headers", "headers", entry.headers));
  if (r?.listing) {
    parts.push(`<section class="listing"><pre>${escapeHtml(r.listing.join("\n"))}</pre></section>`);
  }
  const shown = entry.messages.slice(0, MAX_SHOWN_MESSAGES);
  parts.push(`<div id="messages">${shown.map((m, i) => renderMessage(m, i)).join("")}</div>`);
  if (entry.messages.length > shown.length) {
    parts.push(
      `<p class="more">${entry.messages.length - shown.length} more messages: use Open as JSON document, Copy or Save to see all ${entry.messages.length}.</p>`,
    );
  }
  if (r) parts.push(renderHeaders("Trailers", "trailers", r.trailers));
  return parts.join("");
}

/**
 * The entry as one document for Copy, Save and "Open as JSON document": one message as it is,
 * several as a JSON array, an error as the error JSON that `protocall curl` prints, a listing as
 * its lines.
 */
export function responseDocument(entry: ResponseEntry): { text: string; language: "json" | "plaintext" } {
  const r = entry.result;
  if (r?.listing) return { text: `${r.listing.join("\n")}\n`, language: "plaintext" };
  if (entry.problems && entry.problems.length > 0) {
    return { text: `${entry.problems.join("\n")}\n`, language: "plaintext" };
  }
  if (r?.error && entry.messages.length === 0) {
    return r.code ? { text: r.error.text, language: "json" } : { text: r.error.text, language: "plaintext" };
  }
  if (entry.messages.length === 1) return { text: `${entry.messages[0]}\n`, language: "json" };
  const indented = entry.messages.map((m) => `  ${m.replace(/\n/g, "\n  ")}`);
  return { text: `[\n${indented.join(",\n")}\n]\n`, language: "json" };
}
