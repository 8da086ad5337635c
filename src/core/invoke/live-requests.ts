// The request messages of a live client or bidi stream: a queue that a front end feeds one message
// at a time while the call runs (the editor's "Send Next" and its message box), and half-closes when
// the user is done ("Close Send"). The call pipeline reads it instead of the -d data
// (PipelineOptions.requests), so each message is converted and sent as soon as it is queued and the
// responses to earlier messages arrive while the user decides what to send next.
//
// A plain async iterator rather than a stream library: the pipeline pulls one document at a time,
// and a message counts as sent when the call takes it from the queue (it is then being written).
import { ProtocallError } from "../errors";
import type { RequestDocument } from "./request-data";

/** A message the call took from the queue: its place in the stream and when it was taken. */
export interface SentMessage {
  index: number;
  /** Epoch milliseconds. */
  at: number;
}

export interface LiveRequests extends AsyncIterable<RequestDocument> {
  /**
   * Queues one message (a JSON value of the method's input type). Resolves when the call takes it;
   * rejects when the stream was closed or the call ended first.
   */
  send(value: unknown): Promise<SentMessage>;
  /** Half-closes: the call sends what is queued, then tells the server no more messages follow. */
  close(): void;
  /** Whether close() was called or the call ended. */
  readonly closed: boolean;
  /** Messages queued so far. */
  readonly count: number;
  /** The call ended: messages still queued are not sent (their send() rejects with `reason`). */
  end(reason?: string): void;
}

interface Queued {
  doc: RequestDocument;
  taken(sent: SentMessage): void;
  dropped(err: Error): void;
}

export function createLiveRequests(): LiveRequests {
  const queue: Queued[] = [];
  let waiting: ((r: IteratorResult<RequestDocument>) => void) | undefined;
  let closed = false;
  let ended = false;
  let count = 0;

  const take = (q: Queued): IteratorResult<RequestDocument> => {
    q.taken({ index: q.doc.index, at: Date.now() });
    return { done: false, value: q.doc };
  };

  const live: LiveRequests = {
    get closed() {
      return closed || ended;
    },
    get count() {
      return count;
    },
    send(value) {
      if (ended) return Promise.reject(new ProtocallError("the stream has ended: start it again to send"));
      if (closed) {
        return Promise.reject(new ProtocallError("the stream is closed for sending (Close Send was used)"));
      }
      return new Promise<SentMessage>((taken, dropped) => {
        const q: Queued = { doc: { value, line: 1, column: 1, index: count++ }, taken, dropped };
        if (waiting) {
          const w = waiting;
          waiting = undefined;
          w(take(q));
        } else {
          queue.push(q);
        }
      });
    },
    close() {
      closed = true;
      if (waiting && queue.length === 0) {
        const w = waiting;
        waiting = undefined;
        w({ done: true, value: undefined });
      }
    },
    end(reason = "the call ended before the message was sent") {
      ended = true;
      for (const q of queue.splice(0)) q.dropped(new ProtocallError(reason));
      live.close();
    },
    [Symbol.asyncIterator]() {
      return {
        next(): Promise<IteratorResult<RequestDocument>> {
          const q = queue.shift();
          if (q) return Promise.resolve(take(q));
          if (closed || ended) return Promise.resolve({ done: true, value: undefined });
          return new Promise((resolve) => {
            waiting = resolve;
          });
        },
        return(): Promise<IteratorResult<RequestDocument>> {
          live.end();
          return Promise.resolve({ done: true, value: undefined });
        },
      };
    },
  };
  return live;
}
