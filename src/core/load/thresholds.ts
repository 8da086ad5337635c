// `--threshold` conditions for CI (`p99<50ms`, `errors<1%`, `rps>=900`): parsed once, checked against
// the report's totals (report.ts), so what the exit code says and what the report shows agree.
import { ProtocallError } from "../errors";
import type { LoadReport } from "./report";

export interface Threshold {
  text: string;
  metric: string;
  op: "<" | "<=" | ">" | ">=";
  /** In the metric's unit: ms for latencies, 0–1 for errors, per second for rps. */
  value: number;
}

const latencyMetrics = ["min", "mean", "p50", "p90", "p95", "p99", "p99.9", "max"] as const;
const metrics = [...latencyMetrics, "errors", "rps"];

const help =
  "write METRIC OP VALUE, e.g. 'p99<50ms', 'errors<1%', 'rps>=900' (metrics: min mean p50 p90 p95 p99 p99.9 max in ms, s or us; errors in % or a fraction; rps; operators < <= > >=)";

export function parseThreshold(text: string): Threshold {
  const m = /^\s*([a-z0-9.]+)\s*(<=|>=|<|>)\s*([0-9]*\.?[0-9]+)\s*([a-z%]*)\s*$/i.exec(text);
  const bad = (why: string) =>
    new ProtocallError(`invalid --threshold ${JSON.stringify(text)}: ${why}; ${help}`);
  if (!m) throw bad("it is not METRIC OP VALUE");
  const metric = m[1].toLowerCase();
  const op = m[2] as Threshold["op"];
  const n = Number(m[3]);
  const unit = m[4].toLowerCase();
  if (!metrics.includes(metric)) throw bad(`unknown metric ${JSON.stringify(m[1])}`);
  let value: number;
  if (metric === "errors") {
    if (unit === "%") value = n / 100;
    else if (unit === "") value = n;
    else throw bad(`errors take % or a fraction, not ${JSON.stringify(m[4])}`);
  } else if (metric === "rps") {
    if (unit !== "" && unit !== "/s") throw bad(`rps takes a plain number, not ${JSON.stringify(m[4])}`);
    value = n;
  } else {
    const scale: Record<string, number> = { ms: 1, s: 1000, us: 0.001, "": Number.NaN };
    if (!(unit in scale) || unit === "")
      throw bad(`a latency needs a unit (ms, s or us), e.g. ${metric}${op}${m[3]}ms`);
    value = n * scale[unit];
  }
  return { text: text.trim(), metric, op, value };
}

/** The report's value for a threshold's metric. */
export function metricValue(report: LoadReport, metric: string): number {
  const t = report.total;
  if (metric === "errors") return t.errorRate;
  if (metric === "rps") return t.rps;
  const key = metric === "p99.9" ? "p999" : (metric as Exclude<(typeof latencyMetrics)[number], "p99.9">);
  return t.latency[key];
}

/** Checks every threshold; the results go in the report. */
export function checkThresholds(
  report: LoadReport,
  thresholds: readonly Threshold[],
): LoadReport["thresholds"] {
  return thresholds.map((th) => {
    const actual = metricValue(report, th.metric);
    const passed =
      th.op === "<"
        ? actual < th.value
        : th.op === "<="
          ? actual <= th.value
          : th.op === ">"
            ? actual > th.value
            : actual >= th.value;
    return { text: th.text, passed, actual };
  });
}
