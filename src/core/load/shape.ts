// The shape of a load run: an open model (requests are due at a rate, whether or not earlier ones
// have answered) or a closed model (a number of callers, each sending its next request when the last
// one answered), with stages that ramp the rate or the number of callers linearly from one target to
// the next. The open model's schedule is exact: request k is due at the time the integral of the rate
// reaches k, so a due time never depends on when anything was actually sent (what keeps its latencies
// honest when the server or the generator stalls).
import { ProtocallError } from "../errors";
import { parseDuration } from "../invoke/duration";

export type LoadModel = "open" | "closed";

export interface Stage {
  /** Milliseconds. */
  durationMs: number;
  /** The rate (per second) or number of callers at its end; it ramps from the previous stage's. */
  target: number;
}

export interface LoadShape {
  model: LoadModel;
  /** The rate or number of callers at the start (before the first stage's ramp). */
  start: number;
  stages: Stage[];
  /** Stop after this many requests (the stages still bound the run). */
  requests?: number;
  /** Run at the first stage's start level this long before measuring; its results are not counted. */
  warmupMs: number;
  /**
   * A worker thread's share of an open-model run (worker-split.ts): its rates are the whole run's
   * divided by `of`, and it sends requests `index`, `index + of`, … of the whole run's schedule (with
   * `requests` the whole run's), so the workers' requests add up to the whole run's exactly.
   */
  share?: { index: number; of: number };
}

/** `10s:100,1m:500,10s:0` into stages. */
export function parseStages(text: string): Stage[] {
  const parts = text.split(",").map((p) => p.trim());
  return parts.map((part) => {
    const m = /^([^:]+):\s*(\d+(?:\.\d+)?)$/.exec(part);
    const durationMs = m ? durationMsOf(m[1].trim()) : undefined;
    if (!m || durationMs === undefined || durationMs <= 0) {
      throw new ProtocallError(
        `invalid --stages ${JSON.stringify(text)}: ${JSON.stringify(part)} is not DURATION:TARGET; write e.g. --stages 10s:100,1m:500,10s:0 (ramp to 100 over 10 s, to 500 over a minute, down to 0)`,
      );
    }
    return { durationMs, target: Number(m[2]) };
  });
}

/** `30s`, `1m`, `500ms`, `1m30s` into milliseconds; undefined when not a duration. */
export function durationMsOf(text: string): number | undefined {
  if (/^\d+(\.\d+)?$/.test(text)) return undefined;
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

/** Total length of the measured stages, ms. */
export function shapeDurationMs(shape: LoadShape): number {
  return shape.stages.reduce((n, s) => n + s.durationMs, 0);
}

/** The target (rate or callers) at `t` ms into the measured stages. */
export function targetAt(shape: LoadShape, t: number): number {
  let from = shape.start;
  let at = 0;
  for (const s of shape.stages) {
    if (t < at + s.durationMs) return from + ((s.target - from) * (t - at)) / s.durationMs;
    at += s.durationMs;
    from = s.target;
  }
  return from;
}

/** Which stage `t` ms falls in (the last one for times past the end). */
export function stageAt(shape: LoadShape, t: number): number {
  let at = 0;
  for (let i = 0; i < shape.stages.length; i++) {
    at += shape.stages[i].durationMs;
    if (t <= at) return i;
  }
  return shape.stages.length - 1;
}

/**
 * The open model's schedule: `due(k)` is when request k (from 0) is due, in ms from the start of the
 * stages, or undefined when the stages end first.
 */
export function openSchedule(shape: LoadShape): { due(k: number): number | undefined; total: number } {
  if (shape.share) {
    // The whole run's schedule, of which this worker sends every `of`-th request from `index`.
    const { index, of } = shape.share;
    const scale = (rate: number) => rate * of;
    const whole = openSchedule({
      ...shape,
      share: undefined,
      start: scale(shape.start),
      stages: shape.stages.map((s) => ({ durationMs: s.durationMs, target: scale(s.target) })),
    });
    const total = whole.total > index ? Math.floor((whole.total - 1 - index) / of) + 1 : 0;
    return { total, due: (k) => (k < total ? whole.due(k * of + index) : undefined) };
  }
  // Requests due by the end of each stage (rates are per second, times in ms).
  const segments: { at: number; from: number; to: number; ms: number; before: number }[] = [];
  let from = shape.start;
  let at = 0;
  let before = 0;
  for (const s of shape.stages) {
    segments.push({ at, from: from / 1000, to: s.target / 1000, ms: s.durationMs, before });
    before += ((from + s.target) / 2 / 1000) * s.durationMs;
    at += s.durationMs;
    from = s.target;
  }
  // A request is due when the integral reaches k + 1 (the first one after one interval, not at 0).
  const total = Math.floor(before + 1e-9);
  const limit = shape.requests === undefined ? total : Math.min(total, shape.requests);
  return {
    total: limit,
    due(k: number) {
      if (k >= limit) return undefined;
      const n = k + 1;
      for (const seg of segments) {
        const inSeg = seg.before + ((seg.from + seg.to) / 2) * seg.ms;
        if (n > inSeg + 1e-9) continue;
        const m = n - seg.before;
        const a = seg.from;
        const c = (seg.to - seg.from) / (2 * seg.ms);
        const t = Math.abs(c) < 1e-15 ? m / a : (-a + Math.sqrt(Math.max(0, a * a + 4 * c * m))) / (2 * c);
        return seg.at + Math.min(seg.ms, Math.max(0, t));
      }
      return undefined;
    },
  };
}

/** A flag value that must be a number above 0 (a whole one when `integer`). */
export function positiveNumber(text: string, flag: string, integer: boolean): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new ProtocallError(
      `invalid value ${JSON.stringify(text)} for --${flag}: write a ${integer ? "whole " : ""}number above 0`,
    );
  }
  return n;
}

/**
 * The shape of a run from the load flags (`one(name)`: a flag's value, from the command line or a
 * request's `# @load` line), as `protocall load` and the editor's Load Test read them.
 */
export function shapeFromFlags(one: (name: string) => string | undefined): LoadShape {
  const rate = one("rate");
  const concurrency = one("concurrency");
  if (rate !== undefined && concurrency !== undefined) {
    throw new ProtocallError("give --rate (open model) or --concurrency (closed model), not both");
  }
  const model = concurrency !== undefined ? "closed" : "open";
  const start =
    rate !== undefined
      ? positiveNumber(rate, "rate", false)
      : concurrency !== undefined
        ? positiveNumber(concurrency, "concurrency", true)
        : 0;
  const duration = one("duration");
  const requestsText = one("requests");
  const requests = requestsText !== undefined ? positiveNumber(requestsText, "requests", true) : undefined;
  const stagesText = one("stages");
  const durationMs = (text: string, flag: string) => {
    const ms = durationMsOf(text);
    if (ms === undefined || ms <= 0)
      throw new ProtocallError(
        `invalid value ${JSON.stringify(text)} for --${flag}: write a duration such as 30s, 2m or 500ms`,
      );
    return ms;
  };
  const warmupText = one("warmup");
  const warmupMs = warmupText !== undefined ? durationMs(warmupText, "warmup") : 0;
  let stages: LoadShape["stages"];
  if (stagesText !== undefined) {
    if (duration !== undefined)
      throw new ProtocallError(
        "give --stages or --duration, not both: the stages' durations add up to the run's",
      );
    stages = parseStages(stagesText);
  } else {
    if (start === 0) {
      throw new ProtocallError(
        "say how to load: --rate R (requests per second), --concurrency C (callers) or --stages; e.g. --rate 100 --duration 30s",
      );
    }
    let ms = duration !== undefined ? durationMs(duration, "duration") : undefined;
    if (ms === undefined)
      ms =
        requests !== undefined && model === "open"
          ? (requests / start) * 1000
          : requests !== undefined
            ? 24 * 3600_000
            : 10_000;
    stages = [{ durationMs: ms, target: start }];
  }
  return { model, start, stages, requests, warmupMs };
}
