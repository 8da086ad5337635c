// Relaying accepted events to the user's backend (`--forward-to`), bounded in every direction: at most
// `concurrency` requests in flight, at most `maxQueue` events waiting, and each attempt given up after
// `timeoutMs` (a whole-request deadline, not an idle timer, so a backend that trickles bytes cannot
// stretch it). Every event gets exactly one result in the store: the backend's answer, the error, or
// "not forwarded" when the queue was full or the listener stopped first; those keep the forward URL,
// so `protocall listen replay ID --to-forward` sends them later. Stopping waits a short grace period
// for requests in flight, then abandons them, so a backend that never answers cannot hold a shutdown.
import { errorMessage } from "../errors";
import type { ProxyChoice } from "../invoke/proxy-choice";
import { post } from "./http-post";
import type { ForwardResult } from "./store";

export interface ForwarderOptions {
  readonly url: string;
  /** Extra CA (PEM) trusted when forwarding. */
  readonly ca?: string;
  /** The proxy forwards tunnel through (proxy-choice.ts); undefined = direct. */
  readonly proxy?: ProxyChoice;
  /** Longest wait for the backend's whole answer (default 10 s). */
  readonly timeoutMs?: number;
  /** Most events waiting for a free slot (default 1000); past it, events are recorded as not forwarded. */
  readonly maxQueue?: number;
  /** Requests in flight at once (default 16). */
  readonly concurrency?: number;
}

export const defaultForwarding = { timeoutMs: 10_000, maxQueue: 1000, concurrency: 16 } as const;

interface Job {
  readonly id: number;
  readonly body: Uint8Array;
}

/** Records a forwarding result (in the store) and reports it; resolves once it is recorded. */
export type RecordForward = (id: number, result: ForwardResult) => Promise<void>;

export class Forwarder {
  private readonly queue: Job[] = [];
  private readonly inFlight = new Map<number, AbortController>();
  private readonly recording = new Set<Promise<void>>();
  private stopped = false;
  private readonly timeoutMs: number;
  private readonly maxQueue: number;
  private readonly concurrency: number;

  constructor(
    private readonly options: ForwarderOptions,
    private readonly record: RecordForward,
  ) {
    this.timeoutMs = options.timeoutMs ?? defaultForwarding.timeoutMs;
    this.maxQueue = options.maxQueue ?? defaultForwarding.maxQueue;
    this.concurrency = options.concurrency ?? defaultForwarding.concurrency;
  }

  /** Events waiting, and requests in flight. */
  get pending(): { queued: number; inFlight: number } {
    return { queued: this.queue.length, inFlight: this.inFlight.size };
  }

  /** Forwards event `id` (its binary EventRequest) when a slot is free. */
  enqueue(id: number, body: Uint8Array): void {
    if (this.stopped) {
      this.notForwarded(id, "the listener was stopping");
      return;
    }
    if (this.inFlight.size < this.concurrency) {
      this.start({ id, body });
      return;
    }
    if (this.queue.length >= this.maxQueue) {
      this.notForwarded(id, `${this.maxQueue} events were already waiting to be forwarded`);
      return;
    }
    this.queue.push({ id, body });
  }

  /**
   * Stops: events still queued are recorded as not forwarded at once; requests in flight get `graceMs`
   * to finish, then are abandoned and recorded as not forwarded. Resolves once every result is recorded.
   */
  async stop(graceMs = 2000): Promise<void> {
    this.stopped = true;
    for (const job of this.queue.splice(0)) this.notForwarded(job.id, "the listener stopped first");
    if (this.inFlight.size > 0) {
      const deadline = Date.now() + graceMs;
      while (this.inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const controller of this.inFlight.values()) controller.abort(new Error("stopped"));
    }
    while (this.recording.size > 0 || this.inFlight.size > 0) {
      await Promise.allSettled([...this.recording]);
      if (this.inFlight.size > 0) await new Promise((r) => setTimeout(r, 5));
    }
  }

  private start(job: Job): void {
    const controller = new AbortController();
    this.inFlight.set(job.id, controller);
    const url = this.options.url;
    const time = new Date().toISOString();
    const timer = setTimeout(() => controller.abort(new Error("timeout")), this.timeoutMs);
    post(
      url,
      job.body,
      { "content-type": "application/proto", "connect-protocol-version": "1" },
      {
        ca: this.options.ca,
        proxy: this.options.proxy,
        maxResponseBytes: 1024,
        timeoutMs: this.timeoutMs,
        signal: controller.signal,
      },
    )
      .then(
        (res): ForwardResult => ({
          url,
          status: res.status,
          latencyMs: Math.round(res.latencyMs * 10) / 10,
          body: res.body.toString("utf8"),
          time,
          ...(res.status === 200 ? {} : { error: `HTTP ${res.status}` }),
        }),
        (err): ForwardResult => {
          const reason = controller.signal.aborted ? (controller.signal.reason as Error) : undefined;
          const error =
            reason?.message === "timeout"
              ? `no answer within ${this.timeoutMs} ms`
              : reason?.message === "stopped"
                ? "not forwarded: the listener stopped before the backend answered"
                : errorMessage(err);
          return { url, status: 0, latencyMs: 0, body: "", error, time };
        },
      )
      .then((result) => {
        clearTimeout(timer);
        this.track(this.record(job.id, result));
        this.inFlight.delete(job.id);
        const next = this.stopped ? undefined : this.queue.shift();
        if (next) this.start(next);
      });
  }

  private notForwarded(id: number, why: string): void {
    const result: ForwardResult = {
      url: this.options.url,
      status: 0,
      latencyMs: 0,
      body: "",
      error: `not forwarded: ${why}`,
      time: new Date().toISOString(),
    };
    this.track(this.record(id, result));
  }

  private track(recorded: Promise<void>): void {
    const p = recorded.catch(() => {}).finally(() => this.recording.delete(p));
    this.recording.add(p);
  }
}
