// One load test from start to report, as every front end runs it (`protocall load`, the editor's
// Load Test…): the request checked before anything is sent, one call session per connection, the
// checked sender (checked-send.ts), the generator (generator.ts), then the report and its thresholds.
// Front ends only say how to shape it, show progress and render the report.
import { ProtocallError } from "../errors";
import { type CallIo, type CallSessionOptions, createCallSession } from "../invoke/call-session";
import { checkedSend, checkSource, type RequestSource } from "./checked-send";
import { type LoadProgress, type LoadResult, type LoadRunOptions, runLoad } from "./generator";
import { type LoadReport, loadReport } from "./report";
import type { LoadShape } from "./shape";
import { checkThresholds, type Threshold } from "./thresholds";

export interface LoadTestOptions {
  source: RequestSource;
  /** Names the request in the report. */
  label: string;
  shape: LoadShape;
  thresholds: readonly Threshold[];
  connections: number;
  maxInFlight?: number;
  env: NodeJS.ProcessEnv;
  homedir: string;
  /** Where `--auth` bearer tokens come from (renewed during the run). */
  tokens?: CallIo["tokens"];
  /** Product token, e.g. `protocall/1.0.0`. */
  product: string;
  /** More options of the call sessions (the editor's workspace schemas). */
  session?: Omit<CallSessionOptions, "product">;
  /** Ends the run early: nothing more is sent, the report covers what ran. */
  signal?: AbortSignal;
  onProgress?(p: LoadProgress): void;
  progressMs?: number;
}

/** Runs the load test; throws ProtocallError when the request cannot be prepared. */
export async function runLoadTest(o: LoadTestOptions): Promise<{ report: LoadReport; result: LoadResult }> {
  const startedAt = new Date();
  const { result, lightPath } = await runLoadPart(o);
  return { report: finishReport(result, lightPath, o, startedAt, 1), result };
}

/**
 * The run without its report: what one worker thread of `--workers N` runs (its share of the shape),
 * and what runLoadTest reports on.
 */
export async function runLoadPart(
  o: Omit<LoadTestOptions, "label" | "thresholds"> & { onTick?: LoadRunOptions["onTick"] },
): Promise<{ result: LoadResult; lightPath?: { light: boolean; why?: string } }> {
  const problem = checkSource(o.source);
  if (problem) throw new ProtocallError(problem);
  const sessions = Array.from({ length: o.connections }, () =>
    createCallSession({ ...o.session, product: o.product }),
  );
  const sender = checkedSend(
    o.source,
    sessions,
    { env: o.env, homedir: o.homedir, tokens: o.tokens },
    o.product,
  );
  let result: LoadResult;
  try {
    result = await runLoad({
      shape: o.shape,
      send: sender.send,
      signal: o.signal,
      maxInFlight: o.maxInFlight,
      onProgress: o.onProgress,
      progressMs: o.progressMs,
      onTick: o.onTick,
    });
  } finally {
    sender.close();
    await Promise.all(sessions.map((s) => s.close()));
  }
  return { result, lightPath: sender.lightPath() };
}

/** The report of a run (in-process or merged from worker threads), with its thresholds checked. */
export function finishReport(
  result: LoadResult,
  lightPath: { light: boolean; why?: string } | undefined,
  o: Pick<LoadTestOptions, "label" | "product" | "thresholds">,
  startedAt: Date,
  workers: number,
): LoadReport {
  const report = loadReport(result, { request: o.label, tool: o.product, startedAt });
  report.workers = workers;
  report.thresholds = checkThresholds(report, o.thresholds);
  if (lightPath) report.requestPath = lightPath;
  return report;
}
