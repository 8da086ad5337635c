// The proxy's durable call store: one framed record per completed call in a record log (the
// listener's format and guarantees: a call is acknowledged only once synced, so a crash loses none
// that was printed; damaged bytes are skipped and kept aside), bounded by size (oldest pruned first).
import { frame, RecordLog } from "../webhooks/record-log";

/** One call as observed on the wire (messages kept as bytes, base64, never re-encoded). */
export interface ProxiedCall {
  readonly id: number;
  readonly startedAt: string;
  /** The upstream base URL the call went to. */
  readonly upstream: string;
  readonly method: string;
  readonly protocol: "grpc" | "grpcweb" | "connect";
  readonly httpVersion: string;
  readonly status: string;
  readonly httpStatus: number;
  readonly durationMs: number;
  readonly requestBytes: number;
  readonly responseBytes: number;
  readonly requestHeaders: Record<string, string>;
  readonly responseHeaders: Record<string, string>;
  readonly trailers: Record<string, string>;
  /** Message payloads (base64) in order; `truncated` when more were seen than are kept. */
  readonly requestMessages: string[];
  readonly responseMessages: string[];
  readonly truncated: boolean;
  /** Message bodies decoded with the schema (JSON), when it could decode them. */
  readonly decoded?: { request: unknown[]; response: unknown[] };
  readonly error?: string;
}

const MAGIC = "PCPROXY1";
export const defaultMaxBytes = 64 * 1024 * 1024;

export class CallStore {
  private nextId = 1;
  private constructor(
    private readonly log: RecordLog,
    readonly calls: ProxiedCall[],
  ) {
    for (const c of calls) this.nextId = Math.max(this.nextId, c.id + 1);
  }

  static async open(file: string, maxBytes = defaultMaxBytes): Promise<CallStore> {
    const opened = await RecordLog.open(file, {
      magic: MAGIC,
      notThis: `${file} is not a protocall proxy store; give another --store file`,
      prune: (log) => {
        if (log.size <= maxBytes) return undefined;
        let drop = log.size - Math.floor(maxBytes / 2);
        let i = 0;
        while (i < log.entries.length - 1 && drop > 0) drop -= log.entries[i++].length;
        return i;
      },
    });
    const calls: ProxiedCall[] = [];
    for (const r of opened.records) {
      const call = JSON.parse(r.payload.toString("utf8")) as ProxiedCall;
      calls.push(call);
      opened.log.adopt({ id: call.id, offset: r.offset, length: r.length });
    }
    return new CallStore(opened.log, calls);
  }

  allocateId(): number {
    return this.nextId++;
  }

  /** Writes a call durably; resolves once it is on disk. */
  async add(call: ProxiedCall): Promise<void> {
    await this.log.append(frame(Buffer.from(JSON.stringify(call), "utf8")), call.id);
    this.calls.push(call);
  }

  close(): Promise<void> {
    return this.log.close();
  }
}

/** Reads the calls of a store file without holding it open. */
export async function readCalls(file: string): Promise<ProxiedCall[]> {
  const store = await CallStore.open(file);
  const calls = [...store.calls];
  await store.close();
  return calls;
}
