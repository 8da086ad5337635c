// Where response messages are written: stdout, or the file of `-o`. Text is batched into few large
// writes (a 100,000-message stream must not cost a write per message) and backpressure is respected
// (a full stream makes the caller wait, so a fast server stream never piles up in memory). Output
// that waits is flushed on the next turn of the event loop, so interactive streams print at once.
//
// A stream has at most one sink (`sinkFor`), which adds one error listener to it, and all writers
// that wait for a drain share one wait: `protocall run` writes many calls to one stdout, and a fast
// stream waits on the same full file many times, without piling listeners onto the stream.
import { createWriteStream } from "node:fs";
import { resolve } from "node:path";
import type { Writable } from "node:stream";
import { ProtocallError } from "../errors";

/** Flush once this many characters are queued. */
const BATCH = 65536;

export class OutputSink {
  private parts: string[] = [];
  private size = 0;
  private scheduled = false;
  private drained: Promise<void> | undefined;
  private readonly onError = (err: NodeJS.ErrnoException) => {
    if (this.broken) return;
    this.broken = err;
    this.parts = [];
    this.size = 0;
    for (const listener of this.brokenListeners) listener(err);
  };
  private readonly brokenListeners = new Set<(err: Error) => void>();

  /** The write error, once the output is broken (a closed pipe, a full disk). */
  broken: NodeJS.ErrnoException | undefined;

  /** `owned`: the sink ends the stream when closed (a file); otherwise it only flushes (stdout). */
  constructor(
    private readonly stream: Writable,
    private readonly owned: boolean,
  ) {
    stream.on("error", this.onError);
  }

  /** Calls `listener` when the output breaks; returns a function that removes it. */
  onBroken(listener: (err: Error) => void): () => void {
    this.brokenListeners.add(listener);
    return () => this.brokenListeners.delete(listener);
  }

  /** Queues text; returns a promise only when the caller must wait for the stream to drain. */
  write(text: string): Promise<void> | undefined {
    this.parts.push(text);
    this.size += text.length;
    if (this.drained) return this.drained;
    if (this.size >= BATCH) {
      if (!this.flushNow()) return this.waitDrain();
    } else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        if (!this.drained) this.flushNow();
      });
    }
    return undefined;
  }

  /** Writes out what is queued; resolves when the stream has taken it. */
  async flush(): Promise<void> {
    if (this.drained) await this.drained;
    this.flushNow();
    if (this.broken || this.owned) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off("error", done);
        resolve();
      };
      this.stream.once("error", done);
      this.stream.write("", done);
    });
  }

  /** Flushes, then ends the stream when the sink owns it (a stream it does not own stays open). */
  async close(): Promise<void> {
    await this.flush();
    if (this.broken || !this.owned) return;
    await new Promise<void>((resolve, reject) => {
      this.stream.once("error", reject);
      this.stream.end(() => {
        this.stream.off("error", reject);
        resolve();
      });
    });
  }

  private flushNow(): boolean {
    if (this.broken) {
      this.parts = [];
      this.size = 0;
      return true;
    }
    if (this.size === 0) return true;
    const text = this.parts.length === 1 ? this.parts[0] : this.parts.join("");
    this.parts = [];
    this.size = 0;
    return this.stream.write(text);
  }

  /** One wait for every writer: resolves on drain, close or error, then writes what queued meanwhile. */
  private waitDrain(): Promise<void> {
    this.drained ??= new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off("drain", done);
        this.stream.off("close", done);
        this.stream.off("error", done);
        this.drained = undefined;
        resolve();
      };
      this.stream.once("drain", done);
      this.stream.once("close", done);
      this.stream.once("error", done);
    }).then(() => {
      if (this.size > 0 && !this.flushNow()) return this.waitDrain();
    });
    return this.drained;
  }
}

const sinks = new WeakMap<Writable, OutputSink>();

/** The sink of a stream the caller keeps (stdout): one per stream, however many calls write to it. */
export function sinkFor(stream: Writable): OutputSink {
  let sink = sinks.get(stream);
  if (!sink) {
    sink = new OutputSink(stream, false);
    sinks.set(stream, sink);
  }
  return sink;
}

/** Opens the file of `-o` (before the call, so a path that cannot be written fails before anything is sent). */
export async function openOutputFile(path: string, cwd: string): Promise<OutputSink> {
  const full = resolve(cwd, path);
  const stream = createWriteStream(full);
  await new Promise<void>((ok, fail) => {
    stream.once("open", () => ok());
    stream.once("error", (err: NodeJS.ErrnoException) =>
      fail(
        new ProtocallError(
          `--output ${path}: cannot write ${full}: ${err.code ?? err.message}; check the path`,
        ),
      ),
    );
  });
  return new OutputSink(stream, true);
}
