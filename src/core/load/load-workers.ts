// The main thread's side of `protocall load --workers N`: starts N worker threads (each runs its
// share of the run, see worker-split.ts), merges their progress into one live view, forwards a stop
// (Ctrl-C) to every one of them, and merges their results into one (result-transfer.ts). A worker
// that fails stops the others, and its message is the run's error. `--auth` tokens come from the
// main thread's one token source (tokensFromMainThread): one fetch, one renewal and one sign-in for
// the whole run, however many workers share it.
import { type MessagePort, Worker } from "node:worker_threads";
import { errorMessage, ProtocallError } from "../errors";
import type { BearerTokens, TokenRequest } from "../invoke/io";
import type { LoadProgress, LoadResult } from "./generator";
import { Recorder } from "./recorder";
import { addRecorderPart, mergeResults, type RecorderPart, type ResultPart } from "./result-transfer";
import type { LoadShape } from "./shape";

/** What a worker posts to the main thread. */
export type WorkerMessage =
  | { type: "progress"; elapsedMs: number; totalMs: number; inFlight: number; recorder: RecorderPart }
  | { type: "done"; part: ResultPart }
  | { type: "error"; message: string }
  | { type: "token"; id: number; request: TokenRequest; cwd: string };

/** The main thread's answer to a worker's `token` message. */
type TokenAnswer =
  | { type: "token"; id: number; token: string; notes: string[] }
  | { type: "token"; id: number; error: string };

/**
 * The bearer tokens of a worker thread: asked of the main thread's token source, so every worker
 * sends the one token the run has (and a sign-in that needs the person happens once).
 */
export function tokensFromMainThread(port: MessagePort): BearerTokens {
  let next = 0;
  const waiting = new Map<number, (answer: TokenAnswer) => void>();
  port.on("message", (m: TokenAnswer | { type?: string }) => {
    if (m?.type !== "token") return;
    const answer = m as TokenAnswer;
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  });
  return {
    bearer: (request, io) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, (answer) =>
          "error" in answer ? reject(new ProtocallError(answer.error)) : resolve(answer),
        );
        const { auth, proxy, cacert, insecure } = request;
        const message: WorkerMessage = {
          type: "token",
          id,
          request: { auth, proxy, cacert, insecure },
          cwd: io.cwd,
        };
        port.postMessage(message);
      }),
  };
}

/** Answers a worker's `token` message from the main thread's token source. */
async function answerToken(
  worker: Worker,
  m: Extract<WorkerMessage, { type: "token" }>,
  tokens: BearerTokens | undefined,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  let answer: TokenAnswer;
  try {
    if (!tokens) throw new ProtocallError("--auth: no token source in the main thread");
    const { token, notes } = await tokens.bearer(m.request, { env, cwd: m.cwd });
    answer = { type: "token", id: m.id, token, notes };
  } catch (e) {
    answer = { type: "token", id: m.id, error: e instanceof ProtocallError ? e.message : errorMessage(e) };
  }
  worker.postMessage(answer);
}

export interface LoadWorkersOptions {
  /** The script each worker runs (it answers with WorkerMessages). */
  script: string;
  workers: number;
  /** The whole run's shape (the report's); each worker's share is in its workerData. */
  shape: LoadShape;
  workerData(i: number): unknown;
  env: NodeJS.ProcessEnv;
  /** Where the workers' `--auth` tokens come from (one source for all of them). */
  tokens?: BearerTokens;
  signal?: AbortSignal;
  onProgress?(p: LoadProgress): void;
  progressMs?: number;
}

export async function runLoadWorkers(
  o: LoadWorkersOptions,
): Promise<{ result: LoadResult; lightPath?: { light: boolean; why?: string } }> {
  const latest: (Extract<WorkerMessage, { type: "progress" }> | undefined)[] = [];
  const workers: Worker[] = [];
  const stopAll = () => {
    for (const w of workers) w.postMessage({ type: "stop" });
  };
  let failure: string | undefined;
  const runs = Array.from({ length: o.workers }, (_, i) => {
    const worker = new Worker(o.script, {
      workerData: o.workerData(i),
      env: o.env,
      argv: ["--protocall-load-worker"],
    });
    workers.push(worker);
    return new Promise<ResultPart | undefined>((resolve) => {
      let done = false;
      worker.on("message", (m: WorkerMessage) => {
        if (m.type === "progress") latest[i] = m;
        else if (m.type === "token") void answerToken(worker, m, o.tokens, o.env);
        else if (m.type === "done") {
          done = true;
          resolve(m.part);
          void worker.terminate();
        } else {
          done = true;
          failure ??= m.message;
          stopAll();
          resolve(undefined);
          void worker.terminate();
        }
      });
      worker.on("error", (err) => {
        failure ??= `worker thread ${i + 1} failed: ${err.message}`;
        stopAll();
      });
      worker.on("exit", (code) => {
        if (done) return;
        failure ??= `worker thread ${i + 1} ended (exit code ${code}) before it reported`;
        stopAll();
        resolve(undefined);
      });
    });
  });
  const onStop = () => stopAll();
  if (o.signal?.aborted) stopAll();
  else o.signal?.addEventListener("abort", onStop, { once: true });
  let timer: NodeJS.Timeout | undefined;
  if (o.onProgress) {
    timer = setInterval(() => {
      const parts = latest.filter((p) => p !== undefined);
      if (parts.length === 0) return;
      const merged: LoadProgress = {
        elapsedMs: Math.max(...parts.map((p) => p.elapsedMs)),
        totalMs: parts[0].totalMs,
        inFlight: parts.reduce((n, p) => n + p.inFlight, 0),
        recorder: new Recorder(),
        ticks: [],
      };
      for (const p of parts) addRecorderPart(merged.recorder, p.recorder);
      o.onProgress?.(merged);
    }, o.progressMs ?? 1000);
  }
  let parts: (ResultPart | undefined)[];
  try {
    parts = await Promise.all(runs);
  } finally {
    clearInterval(timer);
    o.signal?.removeEventListener("abort", onStop);
  }
  if (failure !== undefined) throw new ProtocallError(failure);
  return mergeResults(
    o.shape,
    parts.filter((p) => p !== undefined),
  );
}
