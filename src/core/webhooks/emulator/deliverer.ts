// Delivery of push events, as the registry does it: events wait in a queue; every batch interval the
// next batch (up to batch-size events) is taken and each event is POSTed to its callback URL with the
// Connect protocol (unary, `Content-Type: application/proto`, binary EventRequest).
//
// Choices the registry leaves open, made here and documented in `protocall registry serve --help`:
// - the first batch is taken one interval after an event is queued into an empty queue, then one
//   batch per interval while events remain (batches never overlap);
// - events of one repository are delivered one at a time in push order; repositories in parallel;
// - no retries: a failed attempt is recorded and the event is dropped;
// - an event keeps the callback URL it was queued with, so deleting a webhook does not cancel it.
import { errorMessage } from "../../errors";
import { post } from "../http-post";

export interface QueuedEvent {
  readonly webhookId: string;
  readonly owner: string;
  readonly repository: string;
  readonly callbackUrl: string;
  readonly commitId: string;
  readonly body: Uint8Array;
}

export interface DeliveryAttempt {
  readonly id: number;
  readonly webhookId: string;
  readonly owner: string;
  readonly repository: string;
  readonly callbackUrl: string;
  readonly commitId: string;
  readonly batch: number;
  readonly attemptTime: Date;
  /** 0 when no HTTP response arrived. */
  readonly httpStatus: number;
  readonly latencyMs: number;
  readonly responseBody: string;
  readonly error: string;
  readonly success: boolean;
}

export interface DelivererOptions {
  readonly batchSize: number;
  readonly batchIntervalMs: number;
  /** PEM of a CA trusted in addition to the system roots. */
  readonly trustCa?: string;
  /** Added to the error of an attempt whose callback certificate is not trusted (default: about --trust-ca). */
  readonly untrustedCertificateHint?: string;
  /** Called after each attempt (the --verbose log). */
  readonly onAttempt?: (attempt: DeliveryAttempt) => void;
  /** Attempts kept for ListDeliveries (oldest dropped first); default 10,000. */
  readonly keep?: number;
  readonly timeoutMs?: number;
  /** Schedules the next batch (default: setTimeout); tests pass a clock they control. */
  readonly setTimer?: SetTimer;
}

/** Node's messages for a certificate chain it cannot verify (self-signed, unknown issuer). */
const untrustedCertificate =
  /self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate/i;

const defaultUntrustedHint =
  "the callback URL's certificate is not trusted; start the registry with --trust-ca FILE naming that certificate or its CA (for `protocall listen --tls`, its listener-cert.pem in ~/.config/protocall)";

/** Runs `fn` once after `ms` milliseconds, unless cancelled. */
export type SetTimer = (fn: () => void, ms: number) => { cancel(): void };

const realTimer: SetTimer = (fn, ms) => {
  const t = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(t) };
};

export class Deliverer {
  private readonly queue: QueuedEvent[] = [];
  private readonly attempts: DeliveryAttempt[] = [];
  private timer: { cancel(): void } | undefined;
  private running: Promise<void> | undefined;
  private batchCount = 0;
  private attemptCount = 0;
  private closed = false;

  constructor(private readonly options: DelivererOptions) {}

  enqueue(event: QueuedEvent): void {
    if (this.closed) return;
    this.queue.push(event);
    this.schedule();
  }

  /** Attempts so far, oldest first. */
  list(): readonly DeliveryAttempt[] {
    return this.attempts;
  }

  pending(): number {
    return this.queue.length;
  }

  /** Stops taking batches; waits for the batch in progress. Queued events are dropped. */
  async close(): Promise<void> {
    this.closed = true;
    this.timer?.cancel();
    this.timer = undefined;
    await this.running;
  }

  private schedule(): void {
    if (this.timer || this.running || this.closed || this.queue.length === 0) return;
    this.timer = (this.options.setTimer ?? realTimer)(() => {
      this.timer = undefined;
      this.running = this.runBatch().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.options.batchIntervalMs);
  }

  private async runBatch(): Promise<void> {
    const batch = this.queue.splice(0, this.options.batchSize);
    if (batch.length === 0) return;
    const number = ++this.batchCount;
    const byRepo = new Map<string, QueuedEvent[]>();
    for (const e of batch) {
      const key = `${e.owner}/${e.repository}`;
      const list = byRepo.get(key);
      if (list) list.push(e);
      else byRepo.set(key, [e]);
    }
    await Promise.all(
      [...byRepo.values()].map(async (events) => {
        for (const e of events) await this.deliver(e, number);
      }),
    );
  }

  private async deliver(event: QueuedEvent, batch: number): Promise<void> {
    const attemptTime = new Date();
    const started = performance.now();
    let httpStatus = 0;
    let responseBody = "";
    let error = "";
    try {
      const res = await post(
        event.callbackUrl,
        event.body,
        {
          "content-type": "application/proto",
          "connect-protocol-version": "1",
          "user-agent": "protocall-registry-emulator",
        },
        { ca: this.options.trustCa, timeoutMs: this.options.timeoutMs ?? 10_000, maxResponseBytes: 1024 },
      );
      httpStatus = res.status;
      responseBody = res.body.toString("utf8");
      if (res.status !== 200) error = `HTTP ${res.status}`;
    } catch (err) {
      // Node 24 appends advice about its own --use-system-ca flag to certificate errors: not a flag of
      // the registry's; the hint below says what to do instead.
      error = errorMessage(err).replace(
        /; if the root CA is installed locally, try running Node\.js with --use-system-ca$/,
        "",
      );
      if (untrustedCertificate.test(error)) {
        error += `: ${this.options.untrustedCertificateHint ?? defaultUntrustedHint}`;
      }
    }
    const attempt: DeliveryAttempt = {
      id: ++this.attemptCount,
      webhookId: event.webhookId,
      owner: event.owner,
      repository: event.repository,
      callbackUrl: event.callbackUrl,
      commitId: event.commitId,
      batch,
      attemptTime,
      httpStatus,
      latencyMs: performance.now() - started,
      responseBody,
      error,
      success: error === "",
    };
    this.attempts.push(attempt);
    if (this.attempts.length > (this.options.keep ?? 10_000)) this.attempts.shift();
    this.options.onAttempt?.(attempt);
  }
}
