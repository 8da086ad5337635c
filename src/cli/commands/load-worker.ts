// One worker thread of `protocall load --workers N` (main.ts runs the CLI bundle in this mode when
// its workerData says so): it reads the request as the main thread did, takes its round-robin share
// of the `--data` rows, runs its share of the shape (load-workers.ts gives it) and posts its progress
// and its result to the main thread, which merges them into one report; its `--auth` tokens are the
// main thread's. A stop message (Ctrl-C in the main thread) ends its run early, as Ctrl-C ends an
// in-process one.
import { parentPort } from "node:worker_threads";
import { errorMessage, ProtocallError } from "../../core/errors";
import { runLoadPart } from "../../core/load/load-test";
import { tokensFromMainThread, type WorkerMessage } from "../../core/load/load-workers";
import { histogramPart, recorderPart, resultPart, type TickPart } from "../../core/load/result-transfer";
import { workerRows } from "../../core/load/worker-split";
import type { CliContext } from "../context";
import { homeDirectory } from "../io";
import { version } from "../version";
import { type LoadWorkerData, requestSource, splitArgs } from "./load";

export async function runLoadWorker(data: LoadWorkerData): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const post = (m: WorkerMessage) => port.postMessage(m);
  const stop = new AbortController();
  port.on("message", (m: { type?: string }) => {
    if (m?.type === "stop") stop.abort();
  });
  const never = new AbortController().signal;
  const ctx: CliContext = {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    stdinIsTTY: false,
    env: process.env,
    cwd: data.cwd,
    interrupted: () => never,
  };
  try {
    (await import("../../core/invoke/light-headers")).installLightHeaders();
    const a = splitArgs(data.args);
    const one = (name: string) => a.values.get(name)?.[0];
    const many = (name: string) => a.values.get(name) ?? [];
    const { source } = await requestSource(a, one, many, ctx);
    if (source.kind === "file" && source.rows)
      source.rows = workerRows(source.rows, data.workers, data.index);
    const ticks: TickPart[] = [];
    const { result, lightPath } = await runLoadPart({
      source,
      shape: data.shape,
      connections: data.connections,
      maxInFlight: data.maxInFlight,
      env: ctx.env,
      homedir: homeDirectory(ctx),
      tokens: tokensFromMainThread(port),
      product: `protocall/${version}`,
      signal: stop.signal,
      onTick: (tick, latency) => ticks.push({ tick: { ...tick }, latency: histogramPart(latency) }),
      onProgress: data.progress
        ? (p) =>
            post({
              type: "progress",
              elapsedMs: p.elapsedMs,
              totalMs: p.totalMs,
              inFlight: p.inFlight,
              recorder: recorderPart(p.recorder),
            })
        : undefined,
    });
    post({ type: "done", part: resultPart(result, ticks, lightPath) });
  } catch (err) {
    post({ type: "error", message: err instanceof ProtocallError ? err.message : errorMessage(err) });
  }
}
