// The result of running one request as a test, as the reporters (junit-report.ts, json-report.ts)
// and front ends take it: where the request is, how it ended, and its checks (evaluate.ts).

import type { CheckResult, Evaluation } from "./evaluate";
import type { CallOutcome } from "./outcome";

/**
 * passed: every check held. failed: a check did not hold. errored: the request could not be checked
 * (it could not be prepared, or the call failed outside the RPC). skipped: it did not run (a run
 * stopped by --bail or interrupted).
 */
export type RequestVerdict = "passed" | "failed" | "errored" | "skipped";

export interface RequestResult {
  /** The .rpc file as shown to the user (usually relative to the working directory). */
  file: string;
  /** The request's name, else `request N (line L)`. */
  name: string;
  /** One-based line of the request (its `###` line, else its first line). */
  line: number;
  verdict: RequestVerdict;
  durationMs: number;
  /** The RPC status code name, when the call got one. */
  status?: string;
  /** The checks in order (evaluate.ts); empty for a request that was not sent. */
  checks: CheckResult[];
  /** For errored and skipped requests: why, in one line. */
  message?: string;
}

export interface RunSummary {
  requests: number;
  passed: number;
  failed: number;
  errored: number;
  skipped: number;
  /** The requests' durations added up. */
  durationMs: number;
  /**
   * Checks that held, that did not, and that were not run because their call failed outside the RPC
   * (implicit status checks and captures included).
   */
  checks: { passed: number; failed: number; notRun: number };
}

/** How a request that ran ended: errored when the call failed outside the RPC, else by its checks. */
export function verdictOf(outcome: CallOutcome, evaluation: Evaluation): RequestVerdict {
  if (outcome.status === undefined && outcome.failure !== undefined) return "errored";
  return evaluation.passed ? "passed" : "failed";
}

export function summarize(results: readonly RequestResult[]): RunSummary {
  const s: RunSummary = {
    requests: results.length,
    passed: 0,
    failed: 0,
    errored: 0,
    skipped: 0,
    durationMs: 0,
    checks: { passed: 0, failed: 0, notRun: 0 },
  };
  for (const r of results) {
    s[r.verdict]++;
    s.durationMs += r.durationMs;
    for (const c of r.checks) {
      if (c.passed) s.checks.passed++;
      else if (c.notRun) s.checks.notRun++;
      else s.checks.failed++;
    }
  }
  return s;
}

/** `file:line:col` of a check, one-based. */
export function checkLocation(file: string, check: CheckResult): string {
  return `${file}:${check.range.start.line + 1}:${check.range.start.character + 1}`;
}
