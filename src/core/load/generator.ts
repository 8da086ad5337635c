// The load generator: sends requests in the shape of a run (shape.ts) through a `send` function it
// is given (the CLI's is the checked-request runner) and records what comes back (recorder.ts).
// Open model: request k is due at a fixed time; its latency is measured from that due time, not from
// when it was actually sent, so a stalled server (or a stalled generator) shows in the percentiles
// instead of hiding behind the requests it kept from being sent (coordinated omission, as wrk2
// corrects it). How late the generator itself sent requests is recorded apart; when it could not keep
// the rate the result says so. Closed model: a number of callers, each sending its next request when
// the last answered; latency from the send. A warmup runs before the stages and counts nothing.

import { setMaxListeners } from "node:events";
import type { Histogram } from "./histogram";
import { type Outcome, Recorder, Timeline } from "./recorder";
import { type LoadShape, openSchedule, shapeDurationMs, stageAt, targetAt } from "./shape";

/**
 * Sends request number `k` (from 0, warmup requests included); never rejects. `signal` cancels the
 * requests still in flight when the run ends (after the drain time).
 */
export type Send = (k: number, signal: AbortSignal) => Promise<Outcome>;

export interface LoadRunOptions {
  shape: LoadShape;
  send: Send;
  /** Ends the run early (Ctrl-C): nothing more is sent, requests in flight are awaited. */
  signal?: AbortSignal;
  /** At most this many requests in flight (open model); a request due beyond it is dropped and counted. */
  maxInFlight?: number;
  /** Called about every `progressMs` (default 1000) with the run so far. */
  onProgress?(p: LoadProgress): void;
  progressMs?: number;
  /**
   * How long requests still in flight at the end are awaited before they are canceled (and counted as
   * canceled), ms: default 10 s, 1 s after an interrupt.
   */
  drainMs?: number;
  /** Sees each second of the timeline as it closes, with its latencies (a worker thread's merge). */
  onTick?(tick: Tick, latency: Histogram): void;
}

export interface LoadProgress {
  elapsedMs: number;
  totalMs: number;
  recorder: Recorder;
  inFlight: number;
  /** The whole seconds so far (the editor's live charts). */
  ticks: readonly Tick[];
}

export interface LoadResult {
  shape: LoadShape;
  total: Recorder;
  stages: Recorder[];
  timeline: Tick[];
  /** Measured wall time, ms (from the start of the stages to the last answer). */
  elapsedMs: number;
  /** Requests due in the open model (what the rate asked for), for the time that ran. */
  due: number;
  /** Most requests in flight at once (streams held open, for streaming calls). */
  maxInFlight: number;
  /** The run was interrupted (Ctrl-C) before its end. */
  interrupted: boolean;
  /** Why the generator could not keep the rate, when it could not. */
  behind?: string;
}

type Tick = Timeline["ticks"][number];

/**
 * A request due within this many ms is sent now rather than after one more timer: Node's timers
 * fire a millisecond or so late, which at a fixed rate would add that much to every latency
 * measured from the due time.
 */
const EARLY_MS = 1;

/** Requests sent later than this after they were due count as the generator falling behind. */
const LATE_MS = 10;

export async function runLoad(o: LoadRunOptions): Promise<LoadResult> {
  const shape = o.shape;
  const total = new Recorder();
  const stages = shape.stages.map(() => new Recorder());
  const timeline = new Timeline(o.onTick);
  const measuredMs = shapeDurationMs(shape);
  const target = (ms: number) => targetAt(shape, ms);
  let inFlight = 0;
  let maxInFlight = 0;
  let k = 0;
  const pending = new Set<Promise<void>>();
  const cancel = new AbortController();
  setMaxListeners(0, cancel.signal); // every request in flight listens: thousands, not a leak
  const aborted = () => o.signal?.aborted === true;

  // The warmup: the first level, counted nowhere.
  if (shape.warmupMs > 0 && !aborted()) {
    const warm: LoadShape = {
      model: shape.model,
      start: shape.start,
      stages: [{ durationMs: shape.warmupMs, target: shape.start || shape.stages[0].target }],
      warmupMs: 0,
    };
    await drive(
      warm,
      () => {},
      () => {},
    );
  }

  const t0 = performance.now();
  const now = () => performance.now() - t0;
  let stopProgress = () => {};
  if (o.onProgress) {
    const timer = setInterval(() => {
      const at = now();
      timeline.advance(at, target);
      o.onProgress?.({
        elapsedMs: at,
        totalMs: measuredMs,
        recorder: total,
        inFlight,
        ticks: timeline.ticks,
      });
    }, o.progressMs ?? 1000);
    stopProgress = () => clearInterval(timer);
  }
  let due = 0;
  try {
    due = await drive(
      shape,
      (outcome, latencyUs, dueAt) => {
        const at = now();
        total.record(outcome, latencyUs, at);
        stages[stageAt(shape, dueAt)].record(outcome, latencyUs, at);
        timeline.record(latencyUs, outcome.passed, at, target);
      },
      (lagUs, dueAt) => {
        total.lag.record(lagUs);
        stages[stageAt(shape, dueAt)].lag.record(lagUs);
      },
      (dueAt) => {
        total.dropped++;
        stages[stageAt(shape, dueAt)].dropped++;
      },
    );
  } finally {
    stopProgress();
  }
  const elapsedMs = now();
  timeline.finish(elapsedMs, target);
  const result: LoadResult = {
    shape,
    total,
    stages,
    timeline: timeline.ticks,
    elapsedMs,
    due,
    maxInFlight,
    interrupted: aborted(),
  };
  result.behind = behindReason(result);
  return result;

  /** Runs one shape to its end (or the signal); returns the number of requests that were due. */
  async function drive(
    s: LoadShape,
    done: (outcome: Outcome, latencyUs: number, dueAt: number) => void,
    late: (lagUs: number, dueAt: number) => void,
    dropped: (dueAt: number) => void = () => {},
  ): Promise<number> {
    const start = performance.now();
    const clock = () => performance.now() - start;
    const fire = (dueAt: number, from: number) => {
      const index = k++;
      inFlight++;
      if (inFlight > maxInFlight) maxInFlight = inFlight;
      const p = o.send(index, cancel.signal).then((outcome) => {
        inFlight--;
        done(outcome, (clock() - from) * 1000, dueAt);
      });
      pending.add(p);
      void p.finally(() => pending.delete(p));
    };
    let count = 0;
    if (s.model === "open") {
      const schedule = openSchedule(s);
      const cap = o.maxInFlight ?? 10_000;
      for (;;) {
        if (aborted()) break;
        const next = schedule.due(count);
        if (next === undefined) break;
        const t = clock();
        if (next > t + EARLY_MS) {
          await sleepUntil(next - t - EARLY_MS, o.signal);
          continue;
        }
        count++;
        late(Math.max(0, t - next) * 1000, next);
        // Sent early (within EARLY_MS), its latency counts from the send: never less than it took.
        if (inFlight >= cap) dropped(next);
        else fire(next, Math.min(next, t));
      }
    } else {
      const end = shapeDurationMs(s);
      const callers = Math.ceil(Math.max(s.start, ...s.stages.map((x) => x.target)));
      const caller = async (i: number) => {
        for (;;) {
          const t = clock();
          if (aborted() || t >= end) return;
          if (s.requests !== undefined && count >= s.requests) return;
          if (i >= Math.round(targetAt(s, t))) {
            await sleepUntil(Math.min(50, end - t), o.signal);
            continue;
          }
          count++;
          const index = k++;
          inFlight++;
          if (inFlight > maxInFlight) maxInFlight = inFlight;
          const outcome = await o.send(index, cancel.signal);
          inFlight--;
          done(outcome, (clock() - t) * 1000, t);
        }
      };
      await Promise.all(Array.from({ length: callers }, (_, i) => caller(i)));
    }
    await drainPending(pending, aborted() ? 1000 : (o.drainMs ?? 10_000), cancel);
    return count;
  }
}

/** Waits up to `ms` for the requests still in flight, then cancels those left and waits for them to end. */
async function drainPending(pending: Set<Promise<void>>, ms: number, cancel: AbortController): Promise<void> {
  if (pending.size === 0) return;
  const waited = Promise.all([...pending]);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([waited, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
  if (pending.size > 0) cancel.abort();
  while (pending.size > 0) await Promise.all([...pending]);
}

/** Why the generator could not keep the rate (open model), or undefined when it kept it. */
export function behindReason(r: LoadResult): string | undefined {
  if (r.shape.model !== "open" || r.due === 0) return undefined;
  const lag = r.total.lag;
  const lateP90 = lag.percentile(90) / 1000;
  if (lateP90 > LATE_MS) {
    return `the generator could not keep the rate: 1 request in 10 was sent more than ${Math.round(lateP90)} ms after it was due (the machine is too busy, or the rate too high for one process); latencies are still measured from when each request was due`;
  }
  if (r.total.dropped > 0) {
    return `the generator could not keep the rate: ${r.total.dropped} requests were due while too many were already waiting for an answer, and were not sent`;
  }
  return undefined;
}

function sleepUntil(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    // Timers fire late by up to a millisecond or so; a request due within one is sent now.
    const timer = setTimeout(done, ms < 1 ? 0 : ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
