// How a stored delivery is shown: one line (repository and short commit), a description (time, author,
// tags), a plain-text tooltip, and the JSON document opened for it. Event text comes from whoever sent
// the delivery, so everything here is plain text: control characters and line breaks are flattened,
// long values shortened; front ends must show these strings as text, never as markup.
import type { JsonValue } from "@bufbuild/protobuf";
import type { StoredDelivery } from "./store";

export interface DeliverySummary {
  readonly id: number;
  readonly rejected: boolean;
  /** `owner/repository 1a2b3c4d`, or `Rejected (HTTP 415)`. */
  readonly label: string;
  /** Time, author and tags (accepted), or time and reason (rejected). */
  readonly description: string;
  /** Several plain-text lines. */
  readonly tooltip: string;
  readonly repository?: string;
  /** The commit name, shortened to 8 characters. */
  readonly commit?: string;
  readonly author?: string;
  readonly tags: readonly string[];
  /** The delivery id this one replays (`x-protocall-replay-of`), if any. */
  readonly replayOf?: string;
}

type JsonObject = { readonly [k: string]: JsonValue };

function obj(v: JsonValue | undefined): JsonObject | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as JsonObject) : undefined;
}

function str(v: JsonValue | undefined): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** One line of plain text: control characters and line breaks become spaces; at most `max` characters. */
export function plainText(text: string, max = 120): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** Local time `HH:MM:SS`, preceded by the date `YYYY-MM-DD` unless it is the same day as `now`. */
export function shortTime(iso: string, now = new Date()): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return plainText(iso, 40);
  const time = `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
  const sameDay =
    t.getFullYear() === now.getFullYear() && t.getMonth() === now.getMonth() && t.getDate() === now.getDate();
  return sameDay ? time : `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${time}`;
}

/** What a tree item shows for a delivery. */
export function summarizeDelivery(d: StoredDelivery, now = new Date()): DeliverySummary {
  const time = shortTime(d.receivedAt, now);
  const replayOf = d.headers["x-protocall-replay-of"];
  const replayNote = replayOf ? ` · replay of #${plainText(replayOf, 20)}` : "";
  const lines = [
    `#${d.id} ${d.status} (HTTP ${d.httpStatus}) at ${plainText(d.receivedAt, 40)}`,
    `from ${plainText(d.remoteAddress, 60) || "unknown address"}, ${plainText(d.headers["content-type"] ?? "no content type", 80)}, ${rawSize(d)} bytes`,
  ];
  if (d.status === "rejected" || d.event === undefined) {
    const reason = plainText(d.reason ?? "rejected", 200);
    lines.push(`reason: ${reason}`);
    if (replayOf) lines.push(`replay of delivery #${plainText(replayOf, 20)}`);
    return {
      id: d.id,
      rejected: true,
      label: `Rejected (HTTP ${d.httpStatus})`,
      description: `${time} · ${plainText(reason, 80)}${replayNote}`,
      tooltip: lines.join("\n"),
      tags: [],
      ...(replayOf ? { replayOf } : {}),
    };
  }
  const event = obj(d.event);
  const push = obj(obj(event?.payload)?.repositoryPush);
  const repo = obj(push?.repository);
  const commit = obj(push?.repositoryCommit);
  const owner = str(repo?.ownerName);
  const name = str(repo?.name);
  const repository = name ? plainText(owner ? `${owner}/${name}` : name, 100) : undefined;
  const commitName = str(commit?.name) ?? str(commit?.id);
  const shortCommit = commitName ? plainText(commitName, 200).slice(0, 8) : undefined;
  const author = str(commit?.author) ? plainText(str(commit?.author) as string, 60) : undefined;
  const rawTags = Array.isArray(commit?.tags) ? (commit?.tags as JsonValue[]) : [];
  const tags = rawTags
    .map((t) => str(obj(t)?.name))
    .filter((t): t is string => t !== undefined)
    .map((t) => plainText(t, 40));
  const eventName = str(event?.event) ?? "event";
  const label = repository
    ? `${repository}${shortCommit ? ` ${shortCommit}` : ""}`
    : plainText(eventName.replace(/^WEBHOOK_EVENT_/, "").toLowerCase(), 60);
  const description = [time, author, tags.length ? tags.join(", ") : undefined]
    .filter((s) => s !== undefined)
    .join(" · ");
  lines.push(`event: ${plainText(eventName, 80)}`);
  if (repository) lines.push(`repository: ${repository}`);
  if (commitName) lines.push(`commit: ${plainText(commitName, 80)}`);
  if (author) lines.push(`author: ${author}`);
  if (tags.length) lines.push(`tags: ${tags.join(", ")}`);
  if (replayOf) lines.push(`replay of delivery #${plainText(replayOf, 20)}`);
  if (d.forward) {
    lines.push(
      `forwarded to ${plainText(d.forward.url, 120)}: ${d.forward.status ? `HTTP ${d.forward.status}` : plainText(d.forward.error ?? "no answer", 120)} in ${Math.round(d.forward.latencyMs)} ms`,
    );
  }
  return {
    id: d.id,
    rejected: false,
    label,
    description: description + replayNote,
    tooltip: lines.join("\n"),
    ...(repository ? { repository } : {}),
    ...(shortCommit ? { commit: shortCommit } : {}),
    ...(author ? { author } : {}),
    tags,
    ...(replayOf ? { replayOf } : {}),
  };
}

/** Size in bytes of the raw request body (of a rejected request, its whole size, not the excerpt kept). */
export function rawSize(d: StoredDelivery): number {
  return d.bodySize ?? Buffer.byteLength(d.body, "base64");
}

/** The JSON document opened for a delivery: when and how it arrived, and the decoded EventRequest. */
export function deliveryDocument(d: StoredDelivery): JsonObject {
  return {
    id: d.id,
    received: d.receivedAt,
    remoteAddress: d.remoteAddress,
    method: d.method,
    path: d.path,
    status: d.status,
    httpStatus: d.httpStatus,
    ...(d.reason !== undefined ? { reason: d.reason } : {}),
    rawSize: rawSize(d),
    headers: d.headers,
    event: d.event ?? null,
    ...(d.forward ? { forward: d.forward as unknown as JsonObject } : {}),
  };
}
