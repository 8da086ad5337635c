// What the mock did, call by call: kept in memory (the last `limit` calls) for the admin path that
// tests and the editor read, and written as one line per call (method, what answered, status,
// duration) for the terminal.
import type { JsonValue } from "@bufbuild/protobuf";

export interface MockCall {
  /** From 1, in the order calls ended. */
  id: number;
  /** When the call arrived (ISO 8601). */
  time: string;
  /** `package.Service/Method`. */
  method: string;
  /** connect, grpc or grpc-web. */
  protocol: string;
  /** The stub that answered (`file:line "name"`), `generated`, `unimplemented` or `no match`. */
  source: string;
  /** The status code name. */
  status: string;
  /** The error message, when the status is not ok. */
  message?: string;
  durationMs: number;
  /** Request headers (names in lower case). */
  headers: Record<string, string>;
  /** Request messages as proto JSON. */
  requests: JsonValue[];
  /** Response messages sent, as proto JSON. */
  responses: JsonValue[];
}

export class CallLog {
  /** The last `limit` calls, oldest at `start` (a ring, so that keeping the last ones moves nothing). */
  private calls: MockCall[] = [];
  private start = 0;
  private next = 1;

  constructor(
    private readonly limit = 1000,
    private readonly onCall?: (call: MockCall) => void,
  ) {}

  add(call: Omit<MockCall, "id">): MockCall {
    const entry = { id: this.next++, ...call };
    if (this.calls.length < this.limit) this.calls.push(entry);
    else {
      this.calls[this.start] = entry;
      this.start = (this.start + 1) % this.limit;
    }
    this.onCall?.(entry);
    return entry;
  }

  /** The calls kept, oldest first. */
  list(): readonly MockCall[] {
    return this.start === 0
      ? this.calls
      : [...this.calls.slice(this.start), ...this.calls.slice(0, this.start)];
  }

  clear(): void {
    this.calls = [];
    this.start = 0;
  }
}

/** The terminal's line for a call: `Greet  greet.rpc:5 "hi"  ok  3ms`. */
export function callLine(call: MockCall): string {
  const message = call.status === "ok" || !call.message ? "" : `: ${call.message}`;
  return `${call.method} ← ${call.source} ${call.status}${message} ${call.durationMs}ms (${call.protocol})`;
}
