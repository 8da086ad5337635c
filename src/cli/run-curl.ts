// `protocall curl` (and each request of `protocall run`): the call pipeline (pipeline.ts) rendered to
// stdout and stderr. Response messages go to stdout through one batched sink per stream as they
// arrive (or to the -o file), listings to stdout, the verbose transcript and the failure's text to
// stderr; the exit code is the failure's (0, the gRPC code × 8, or below 8). Output that can no
// longer be written ends the call: a closed pipe quietly exits 141, as a command killed by SIGPIPE.
import type { Writable } from "node:stream";
import { callConnections } from "../core/invoke/connections";
import type { InputIo } from "../core/invoke/io";
import type { CurlOptions } from "../core/invoke/options";
import { sinkFor } from "../core/invoke/output-sink";
import { runPipeline } from "../core/invoke/pipeline";
import { createVerboseLog } from "../core/invoke/verbose";
import { terminalProgress } from "./terminal-progress";

export interface CurlIo extends InputIo {
  stdout: Writable;
  stderr: Writable;
  /** Product token for the default User-Agent, e.g. `protocall/1.0.0`. */
  product?: string;
  /** Ends the call early (Ctrl-C); the call then fails as canceled. */
  signal?: AbortSignal;
}

/** Runs one `protocall curl`; returns the exit code. Never throws. */
export async function runCurl(o: CurlOptions, io: CurlIo): Promise<number> {
  // A --stream-file upload shows its progress on a terminal; anything else written erases it first.
  const progress = terminalProgress(io.stderr, o.streamFile !== undefined);
  const log = createVerboseLog(o.verbose, (text) => {
    progress.clear();
    io.stderr.write(text);
  });
  const stdout = sinkFor(io.stdout);
  // Output that can no longer be written (a closed pipe, a full disk) ends the call.
  const stop = new AbortController();
  const unwatch = stdout.onBroken((err) => stop.abort(err));
  const signal = io.signal ? AbortSignal.any([io.signal, stop.signal]) : stop.signal;
  try {
    const result = await runPipeline(o, io, {
      log,
      connections: callConnections(),
      product: io.product,
      signal,
      onMessage: o.output
        ? undefined
        : (json) => {
            progress.clear();
            return stdout.write(`${json}\n`);
          },
      onStreamProgress: progress.update,
    });
    progress.clear();
    if (result.listing) stdout.write(result.listing.map((line) => `${line}\n`).join(""));
    await stdout.flush();
    const broken = stdout.broken;
    if (broken) {
      // As a command killed by SIGPIPE (`protocall curl ... | head`): quietly, 128 + 13.
      if (broken.code === "EPIPE") return 141;
      await writeAll(io.stderr, `protocall: cannot write the output: ${broken.message}\n`);
      return 1;
    }
    const failure = result.failure;
    if (!failure) return 0;
    const err = failure.error;
    if (io.env.PROTOCALL_DEBUG && failure.code === undefined && err instanceof Error && err.stack) {
      io.stderr.write(`${err.stack}\n`);
    }
    await writeAll(io.stderr, failure.text);
    return failure.exitCode;
  } finally {
    unwatch();
  }
}

function writeAll(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (text === "") return resolve();
    stream.write(text, () => resolve());
  });
}
