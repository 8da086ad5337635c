// A load run's report: the result (generator.ts) as a versioned JSON document (what `--reporter
// json=FILE` writes and what thresholds and the text summary read, so all three agree), and the
// text summary the CLI prints. Latencies are in milliseconds; each histogram also travels whole, in
// HdrHistogram's compressed form (hdr-encoding.ts), for merging runs of several machines.
import type { LoadResult } from "./generator";
import { encodeHdr } from "./hdr-encoding";
import type { Histogram } from "./histogram";
import type { Recorder } from "./recorder";

/** Bumped when a field changes meaning or goes away (new fields do not bump it). */
export const LOAD_REPORT_VERSION = 1;

export interface LatencySummary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
  /** HdrHistogram V2 compressed, base64, values in µs. */
  hdr: string;
}

export interface StatsSummary {
  requests: number;
  passed: number;
  failed: number;
  /** Failed requests / requests, 0–1. */
  errorRate: number;
  /** Answered requests per second over the time they took. */
  rps: number;
  latency: LatencySummary;
  /** Streams: time to the first response message. */
  firstMessage?: LatencySummary;
  /** How late the generator sent requests after they were due (open model). */
  sendLag?: LatencySummary;
  statuses: Record<string, number>;
  /** A sample of each kind of error (at most five kinds) and how often it happened. */
  errors: { message: string; count: number }[];
  /** Checks that did not hold, as written, and how often. */
  failedChecks: Record<string, number>;
  bytes: { sent: number; received: number };
  messages: { received: number; perSecond: number };
  /** Requests that were due but not sent (too many in flight). */
  dropped: number;
}

export interface LoadReport {
  version: typeof LOAD_REPORT_VERSION;
  tool: string;
  request: string;
  startedAt: string;
  model: "open" | "closed";
  stages: { durationMs: number; target: number }[];
  warmupMs: number;
  elapsedMs: number;
  interrupted: boolean;
  /** Set when the generator could not keep the rate. */
  behind?: string;
  maxInFlight: number;
  total: StatsSummary;
  perStage: StatsSummary[];
  timeline: {
    second: number;
    requests: number;
    failed: number;
    p50: number;
    p99: number;
    max: number;
    target: number;
  }[];
  thresholds: { text: string; passed: boolean; actual: number }[];
  /**
   * How the requests went out: the light path (unary Connect over h2c, fast-unary.ts) or the call
   * pipeline, and why not the light path. Absent when no request resolved the method.
   */
  requestPath?: { light: boolean; why?: string };
  /** How many worker threads generated the load (`--workers`; 1: the main thread alone). */
  workers?: number;
}

const ms = (us: number) => Math.round(us) / 1000;

function latency(h: Histogram): LatencySummary {
  return {
    count: h.count,
    min: ms(h.count ? h.min : 0),
    mean: ms(h.mean()),
    p50: ms(h.percentile(50)),
    p90: ms(h.percentile(90)),
    p95: ms(h.percentile(95)),
    p99: ms(h.percentile(99)),
    p999: ms(h.percentile(99.9)),
    max: ms(h.max),
    hdr: encodeHdr(h),
  };
}

function stats(r: Recorder, model: "open" | "closed", spanMs: number): StatsSummary {
  const failed = r.requests - r.passed + r.dropped;
  const sent = r.requests + r.dropped;
  const seconds = Math.max(spanMs, 1) / 1000;
  const s: StatsSummary = {
    requests: sent,
    passed: r.passed,
    failed,
    errorRate: sent === 0 ? 0 : failed / sent,
    rps: Math.round((r.requests / seconds) * 10) / 10,
    latency: latency(r.latency),
    statuses: Object.fromEntries(r.statuses),
    errors: [...r.errors.values()].map((e) => ({ message: e.sample, count: e.count })),
    failedChecks: Object.fromEntries(r.checks),
    bytes: { sent: r.bytesSent, received: r.bytesReceived },
    messages: { received: r.messages, perSecond: Math.round((r.messages / seconds) * 10) / 10 },
    dropped: r.dropped,
  };
  if (r.firstMessage.count > 0) s.firstMessage = latency(r.firstMessage);
  if (model === "open") s.sendLag = latency(r.lag);
  return s;
}

export function loadReport(r: LoadResult, o: { request: string; tool: string; startedAt: Date }): LoadReport {
  let at = 0;
  const perStage = r.stages.map((rec, i) => {
    const span = Math.min(r.shape.stages[i].durationMs, Math.max(0, r.elapsedMs - at));
    at += r.shape.stages[i].durationMs;
    return stats(rec, r.shape.model, span);
  });
  const report: LoadReport = {
    version: LOAD_REPORT_VERSION,
    tool: o.tool,
    request: o.request,
    startedAt: o.startedAt.toISOString(),
    model: r.shape.model,
    stages: r.shape.stages.map((s) => ({ durationMs: s.durationMs, target: s.target })),
    warmupMs: r.shape.warmupMs,
    elapsedMs: Math.round(r.elapsedMs),
    interrupted: r.interrupted,
    maxInFlight: r.maxInFlight,
    total: stats(r.total, r.shape.model, r.elapsedMs),
    perStage,
    timeline: r.timeline.map((t) => ({ ...t })),
    thresholds: [],
  };
  if (r.behind) report.behind = r.behind;
  return report;
}

function fmtMs(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(2)} s` : n >= 10 ? `${n.toFixed(1)} ms` : `${n.toFixed(2)} ms`;
}

function fmtBytes(n: number): string {
  return n >= 1 << 20
    ? `${(n / (1 << 20)).toFixed(1)} MiB`
    : n >= 1024
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${n} B`;
}

function latencyLine(l: LatencySummary): string {
  return `min ${fmtMs(l.min)}  p50 ${fmtMs(l.p50)}  p90 ${fmtMs(l.p90)}  p95 ${fmtMs(l.p95)}  p99 ${fmtMs(l.p99)}  p99.9 ${fmtMs(l.p999)}  max ${fmtMs(l.max)}`;
}

function statsLines(s: StatsSummary, indent: string): string[] {
  const out = [
    `${indent}requests   ${s.requests} (${s.passed} passed, ${s.failed} failed, ${(s.errorRate * 100).toFixed(2)}% errors), ${s.rps} per second`,
    `${indent}latency    ${latencyLine(s.latency)}`,
  ];
  if (s.firstMessage) out.push(`${indent}first msg  ${latencyLine(s.firstMessage)}`);
  if (s.messages.received !== s.latency.count) {
    out.push(`${indent}messages   ${s.messages.received} received, ${s.messages.perSecond} per second`);
  }
  return out;
}

/** The text summary (stderr of `protocall load`). */
export function loadSummaryText(r: LoadReport): string {
  const t = r.total;
  const lines = [
    `${r.request}: ${r.model === "open" ? "open model (rate)" : "closed model (concurrency)"}, ${(r.elapsedMs / 1000).toFixed(1)} s${r.interrupted ? " (interrupted: the report covers what ran)" : ""}`,
    ...statsLines(t, "  "),
    `  statuses   ${
      Object.entries(t.statuses)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ") || "none"
    }`,
    `  bytes      ${fmtBytes(t.bytes.sent)} sent, ${fmtBytes(t.bytes.received)} received (messages as JSON)`,
  ];
  if ((r.workers ?? 1) > 1)
    lines.push(`  workers    ${r.workers} threads generated the load (their results merged)`);
  if (r.maxInFlight > 1) lines.push(`  in flight  at most ${r.maxInFlight} requests (streams held open)`);
  if (t.sendLag)
    lines.push(
      `  send lag   p50 ${fmtMs(t.sendLag.p50)}  p99 ${fmtMs(t.sendLag.p99)} (how late the generator sent requests after they were due)`,
    );
  for (const [check, n] of Object.entries(t.failedChecks)) lines.push(`  failed     ${check}: ${n} times`);
  for (const e of t.errors) lines.push(`  error      ${e.message} (${e.count} times)`);
  if (r.perStage.length > 1) {
    r.perStage.forEach((s, i) => {
      const st = r.stages[i];
      lines.push(`  stage ${i + 1} (${(st.durationMs / 1000).toFixed(1)} s to ${st.target}):`);
      lines.push(...statsLines(s, "    "));
    });
  }
  if (r.requestPath) {
    lines.push(
      r.requestPath.light
        ? "  sent by    the light path (unary Connect over h2c: one HTTP/2 stream a request)"
        : `  sent by    the call pipeline${r.requestPath.why ? ` (not the light path: ${r.requestPath.why})` : ""}`,
    );
  }
  if (r.behind) lines.push(`  warning: ${r.behind}`);
  for (const th of r.thresholds) {
    lines.push(
      `  threshold ${th.text}: ${th.passed ? "held" : "FAILED"} (actual ${Math.round(th.actual * 1000) / 1000})`,
    );
  }
  return `${lines.join("\n")}\n`;
}
