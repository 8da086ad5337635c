// What a load run counts, for the whole run and for each stage: latencies (a histogram, never a list
// of samples, so memory stays flat), status codes, a few error samples, failed checks by assertion,
// bytes, stream messages, time to first message, and the generator's own lateness. Plus a timeline of
// one small record per second (count, errors, p50, p99) for live progress and the report's charts.
import { Histogram } from "./histogram";

/** One finished request as the generator records it. */
export interface Outcome {
  /** The RPC status code name (`ok`, `unavailable`, …), or `error` for a failure outside the RPC. */
  status: string;
  /** Whether the request passed (its status and every check). */
  passed: boolean;
  /** The checks that did not hold, as written (`message.greeting == "Hi"`, `status == ok`). */
  failedChecks?: readonly string[];
  /** What went wrong, one line (kept for the first few of each kind). */
  error?: string;
  /** Bytes of the request messages sent and of the response messages received (as JSON text). */
  bytesSent: number;
  bytesReceived: number;
  /** Response messages (one for a unary call). */
  messages: number;
  /** From the request's start to its first response message, µs (streams). */
  firstMessageUs?: number;
}

const ERROR_SAMPLES = 5;

export class Recorder {
  readonly latency = new Histogram();
  readonly firstMessage = new Histogram();
  /** How late the generator sent requests after they were due, µs (open model). */
  readonly lag = new Histogram();
  requests = 0;
  passed = 0;
  statuses = new Map<string, number>();
  errors = new Map<string, { count: number; sample: string }>();
  checks = new Map<string, number>();
  bytesSent = 0;
  bytesReceived = 0;
  messages = 0;
  /** Requests that were due but not sent (too many in flight). */
  dropped = 0;
  /** ms from the start of the measured stages. */
  firstAt = Number.POSITIVE_INFINITY;
  lastAt = 0;

  record(o: Outcome, latencyUs: number, at: number): void {
    this.requests++;
    if (o.passed) this.passed++;
    this.latency.record(latencyUs);
    if (o.firstMessageUs !== undefined) this.firstMessage.record(o.firstMessageUs);
    this.statuses.set(o.status, (this.statuses.get(o.status) ?? 0) + 1);
    if (o.error !== undefined) {
      const key = `${o.status}: ${o.error}`.slice(0, 300);
      const e = this.errors.get(key);
      if (e) e.count++;
      else if (this.errors.size < ERROR_SAMPLES) this.errors.set(key, { count: 1, sample: key });
      else
        this.errors.set("(other errors)", {
          count: (this.errors.get("(other errors)")?.count ?? 0) + 1,
          sample: "(other errors)",
        });
    }
    for (const c of o.failedChecks ?? []) this.checks.set(c, (this.checks.get(c) ?? 0) + 1);
    this.bytesSent += o.bytesSent;
    this.bytesReceived += o.bytesReceived;
    this.messages += o.messages;
    if (at < this.firstAt) this.firstAt = at;
    if (at > this.lastAt) this.lastAt = at;
  }
}

/** One second of the run. */
export interface Tick {
  /** Seconds from the start of the measured stages (the end of this second). */
  second: number;
  requests: number;
  failed: number;
  /** Latency percentiles of the requests that finished in this second, ms. */
  p50: number;
  p99: number;
  max: number;
  /** The target at this second (rate or callers). */
  target: number;
}

/** The per-second timeline: one histogram reused, one small record kept per second. */
export class Timeline {
  readonly ticks: Tick[] = [];
  private readonly current = new Histogram();
  private requests = 0;
  private failed = 0;
  private second = 1;

  /** `onClose` sees each second's latencies as it closes (a worker sends them to be merged). */
  constructor(private readonly onClose?: (tick: Tick, latency: Histogram) => void) {}

  record(latencyUs: number, passed: boolean, atMs: number, targetAt: (ms: number) => number): void {
    this.advance(atMs, targetAt);
    this.current.record(latencyUs);
    this.requests++;
    if (!passed) this.failed++;
  }

  /** Closes the seconds up to `atMs`, and the partial one after them when anything finished in it. */
  finish(atMs: number, targetAt: (ms: number) => number): void {
    this.advance(atMs, targetAt);
    if (this.requests > 0) this.advance(this.second * 1000, targetAt);
  }

  /** Closes every whole second before `atMs`. */
  advance(atMs: number, targetAt: (ms: number) => number): void {
    while (atMs >= this.second * 1000) {
      const tick = {
        second: this.second,
        requests: this.requests,
        failed: this.failed,
        p50: this.current.percentile(50) / 1000,
        p99: this.current.percentile(99) / 1000,
        max: this.current.max / 1000,
        target: targetAt(this.second * 1000 - 1),
      };
      this.ticks.push(tick);
      this.onClose?.(tick, this.current);
      this.current.reset();
      this.requests = 0;
      this.failed = 0;
      this.second++;
    }
  }
}
