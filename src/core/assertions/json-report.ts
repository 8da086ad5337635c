// A run of request files as one JSON document, for scripts and dashboards: a summary, then each
// request with its verdict and checks (where, what, the actual value, the message). Locations are
// one-based; a snapshot check that failed carries its differences (`diff`: path, expected, actual).
// The shape is versioned ("version": 1) so readers can tell a future change.
import type { JsonValue } from "@bufbuild/protobuf";
import { type RequestResult, summarize } from "./results";

export interface JsonReportOptions {
  /** When the run started; default now. */
  timestamp?: Date;
}

/** The JSON report of a run, pretty-printed, ending with a newline. */
export function jsonReport(results: readonly RequestResult[], options: JsonReportOptions = {}): string {
  const report = {
    version: 1,
    timestamp: (options.timestamp ?? new Date()).toISOString(),
    summary: summarize(results),
    requests: results.map((r) => {
      const out: { [k: string]: JsonValue | undefined } = {
        file: r.file,
        name: r.name,
        line: r.line,
        verdict: r.verdict,
        durationMs: r.durationMs,
        status: r.status,
        message: r.message,
        checks: r.checks.map((c) => {
          const check: { [k: string]: JsonValue } = {
            kind: c.kind,
            text: c.text,
            line: c.range.start.line + 1,
            column: c.range.start.character + 1,
            passed: c.passed,
            found: c.found,
            message: c.message,
          };
          if (c.found) check.actual = c.actual ?? null;
          if (c.notRun) check.notRun = true;
          if (c.diff) {
            check.diff = c.diff.map((d) => {
              const out: { [k: string]: JsonValue } = { path: d.path };
              if (d.expected !== undefined) out.expected = d.expected;
              if (d.actual !== undefined) out.actual = d.actual;
              return out;
            });
          }
          return check;
        }),
      };
      return out;
    }),
  };
  return `${JSON.stringify(report, null, 2)}\n`;
}
