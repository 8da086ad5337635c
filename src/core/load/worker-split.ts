// How a load run is split over worker threads (`protocall load --workers N`): each worker runs the
// same request with its share of the run. Open model: each sends rate/N, taking every N-th request of
// the whole run's schedule (worker i requests i, i+N, …: due on the same clock, so the shares add up
// to the whole run's count exactly, and latency still counts from each request's due time). Closed
// model: the callers, and `--requests`, are split as evenly as whole numbers allow. `--connections`
// is split the same way (each worker opens at least one connection);
// `--data` rows are dealt round-robin, worker i taking rows i, i+N, i+2N, … (so with as many requests
// as rows, every row is used once).
import { ProtocallError } from "../errors";
import type { LoadShape } from "./shape";

/** Worker i's part of n things split over `parts` (the first ones take one more when it does not divide). */
export function splitEvenly(n: number, parts: number, i: number): number {
  return Math.floor(n / parts) + (i < n % parts ? 1 : 0);
}

/** The shape worker `i` of `workers` runs. */
export function workerShape(shape: LoadShape, workers: number, i: number): LoadShape {
  if (workers === 1) return shape;
  const scale = (target: number) =>
    shape.model === "open" ? target / workers : splitEvenly(Math.round(target), workers, i);
  const open = shape.model === "open";
  return {
    model: shape.model,
    start: scale(shape.start),
    stages: shape.stages.map((s) => ({ durationMs: s.durationMs, target: scale(s.target) })),
    warmupMs: shape.warmupMs,
    requests: shape.requests === undefined || open ? shape.requests : splitEvenly(shape.requests, workers, i),
    ...(open ? { share: { index: i, of: workers } } : {}),
  };
}

/** The rows worker `i` of `workers` takes (round-robin). */
export function workerRows<T>(rows: readonly T[], workers: number, i: number): T[] {
  return rows.filter((_, j) => j % workers === i);
}

/**
 * The number of workers: a whole number, or `auto` (one per core, at most one per connection, since
 * a worker holds connections of its own). Throws ProtocallError for anything else.
 */
export function workerCount(text: string | undefined, connections: number, cores: number): number {
  if (text === undefined) return 1;
  if (text === "auto") return Math.max(1, Math.min(cores, connections));
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    throw new ProtocallError(
      `invalid --workers ${JSON.stringify(text)}: write a whole number above 0, or auto`,
    );
  }
  return n;
}

/** The connections worker `i` opens: its share of `--connections`, at least one. */
export function workerConnections(connections: number, workers: number, i: number): number {
  return Math.max(1, splitEvenly(connections, workers, i));
}
