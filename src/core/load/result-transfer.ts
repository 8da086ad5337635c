// A worker thread's part of a load run (`--workers N`) as it travels to the main thread, and the
// merge of the parts into one result. Histograms travel in HdrHistogram's compressed form
// (hdr-encoding.ts) with their exact count, min, max and sum beside it; counters, status codes,
// error samples and failed checks add up; each second of the timeline is merged from the workers'
// histograms of that second, so the merged percentiles are those of all requests, not averages.
import { behindReason, type LoadResult } from "./generator";
import { decodeHdr, encodeHdr } from "./hdr-encoding";
import type { Histogram } from "./histogram";
import { Recorder, type Tick } from "./recorder";
import type { LoadShape } from "./shape";

export interface HistogramPart {
  hdr: string;
  count: number;
  min: number;
  max: number;
  sum: number;
}

export interface RecorderPart {
  latency: HistogramPart;
  firstMessage: HistogramPart;
  lag: HistogramPart;
  requests: number;
  passed: number;
  statuses: [string, number][];
  errors: [string, { count: number; sample: string }][];
  checks: [string, number][];
  bytesSent: number;
  bytesReceived: number;
  messages: number;
  dropped: number;
  /** null for none (Infinity does not survive JSON). */
  firstAt: number | null;
  lastAt: number;
}

export interface TickPart {
  tick: Tick;
  latency: HistogramPart;
}

/** What one worker sends back when its run ended. */
export interface ResultPart {
  total: RecorderPart;
  stages: RecorderPart[];
  ticks: TickPart[];
  elapsedMs: number;
  due: number;
  maxInFlight: number;
  interrupted: boolean;
  lightPath?: { light: boolean; why?: string };
}

export function histogramPart(h: Histogram): HistogramPart {
  return { hdr: encodeHdr(h), count: h.count, min: h.count ? h.min : 0, max: h.max, sum: h.sum };
}

export function histogramOf(p: HistogramPart): Histogram {
  const h = decodeHdr(p.hdr);
  if (p.count > 0) {
    h.min = p.min;
    h.max = p.max;
    h.sum = p.sum;
  }
  return h;
}

export function recorderPart(r: Recorder): RecorderPart {
  return {
    latency: histogramPart(r.latency),
    firstMessage: histogramPart(r.firstMessage),
    lag: histogramPart(r.lag),
    requests: r.requests,
    passed: r.passed,
    statuses: [...r.statuses],
    errors: [...r.errors],
    checks: [...r.checks],
    bytesSent: r.bytesSent,
    bytesReceived: r.bytesReceived,
    messages: r.messages,
    dropped: r.dropped,
    firstAt: Number.isFinite(r.firstAt) ? r.firstAt : null,
    lastAt: r.lastAt,
  };
}

/** Adds a worker's recorder into `into`. */
export function addRecorderPart(into: Recorder, p: RecorderPart): void {
  into.latency.add(histogramOf(p.latency));
  into.firstMessage.add(histogramOf(p.firstMessage));
  into.lag.add(histogramOf(p.lag));
  into.requests += p.requests;
  into.passed += p.passed;
  for (const [k, n] of p.statuses) into.statuses.set(k, (into.statuses.get(k) ?? 0) + n);
  for (const [k, n] of p.checks) into.checks.set(k, (into.checks.get(k) ?? 0) + n);
  for (const [k, e] of p.errors) {
    const had = into.errors.get(k);
    if (had) had.count += e.count;
    else into.errors.set(k, { ...e });
  }
  into.bytesSent += p.bytesSent;
  into.bytesReceived += p.bytesReceived;
  into.messages += p.messages;
  into.dropped += p.dropped;
  if (p.firstAt !== null && p.firstAt < into.firstAt) into.firstAt = p.firstAt;
  if (p.lastAt > into.lastAt) into.lastAt = p.lastAt;
}

export function resultPart(
  r: LoadResult,
  ticks: TickPart[],
  lightPath: { light: boolean; why?: string } | undefined,
): ResultPart {
  return {
    total: recorderPart(r.total),
    stages: r.stages.map(recorderPart),
    ticks,
    elapsedMs: r.elapsedMs,
    due: r.due,
    maxInFlight: r.maxInFlight,
    interrupted: r.interrupted,
    lightPath,
  };
}

/**
 * One result of the workers' parts, for the whole run's shape. Its most requests in flight is the
 * sum of each worker's most (an upper bound: their peaks need not coincide).
 */
export function mergeResults(
  shape: LoadShape,
  parts: readonly ResultPart[],
): { result: LoadResult; lightPath?: { light: boolean; why?: string } } {
  const total = new Recorder();
  const stages = shape.stages.map(() => new Recorder());
  const seconds = new Map<number, { tick: Tick; latency: Histogram }>();
  for (const p of parts) {
    addRecorderPart(total, p.total);
    for (const [i, s] of p.stages.entries()) addRecorderPart(stages[i], s);
    for (const t of p.ticks) {
      const had = seconds.get(t.tick.second);
      if (!had) {
        seconds.set(t.tick.second, { tick: { ...t.tick }, latency: histogramOf(t.latency) });
        continue;
      }
      had.tick.requests += t.tick.requests;
      had.tick.failed += t.tick.failed;
      had.tick.target += t.tick.target;
      had.latency.add(histogramOf(t.latency));
    }
  }
  const timeline = [...seconds.values()]
    .sort((a, b) => a.tick.second - b.tick.second)
    .map(({ tick, latency }) => ({
      ...tick,
      p50: latency.percentile(50) / 1000,
      p99: latency.percentile(99) / 1000,
      max: latency.max / 1000,
    }));
  const result: LoadResult = {
    shape,
    total,
    stages,
    timeline,
    elapsedMs: Math.max(0, ...parts.map((p) => p.elapsedMs)),
    due: parts.reduce((n, p) => n + p.due, 0),
    maxInFlight: parts.reduce((n, p) => n + p.maxInFlight, 0),
    interrupted: parts.some((p) => p.interrupted),
  };
  result.behind = behindReason(result);
  const paths = parts.map((p) => p.lightPath).filter((p) => p !== undefined);
  return { result, lightPath: paths.find((p) => !p.light) ?? paths[0] };
}
