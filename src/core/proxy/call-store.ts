// The proxy's durable call store: one framed record per completed call (`{"kind":"call",…}`, as
// the record log's framing expects) in a record log (the
// listener's format and guarantees: a call is acknowledged only once synced, so a crash loses none
// that was printed; damaged bytes are skipped and kept aside), bounded by size (oldest pruned first).
import { closeSync, openSync, readFileSync } from "node:fs";
import { ProtocallError } from "../errors";
import { lockFile, unlockFile } from "../serve/durable-file";
import { frame, RecordLog, type ScannedRecord, scanLog } from "../serve/record-log";
import type { RawDetail } from "./call-status";

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
  /** The error's message, for a call that failed with a status. */
  readonly statusMessage?: string;
  readonly httpStatus: number;
  readonly durationMs: number;
  readonly requestBytes: number;
  readonly responseBytes: number;
  readonly requestHeaders: Record<string, string>;
  readonly responseHeaders: Record<string, string>;
  /** The trailers (gRPC-Web's trailer envelope and a Connect stream's end metadata included). */
  readonly trailers: Record<string, string>;
  /** The error's details as they came (type and bytes). */
  readonly details?: RawDetail[];
  /** Message payloads (base64) in order; `truncated` when more were seen than are kept. */
  readonly requestMessages: string[];
  readonly responseMessages: string[];
  /** When each kept message passed, in milliseconds since the call started (absent in older stores). */
  readonly requestTimes?: number[];
  readonly responseTimes?: number[];
  readonly truncated: boolean;
  /** Message bodies decoded with the schema (JSON), when it could decode them. */
  readonly decoded?: DecodedCall;
  readonly error?: string;
}

/** A call's messages (and error details) as JSON, as far as the schema knew them. */
export interface DecodedCall {
  readonly request: unknown[];
  readonly response: unknown[];
  /** The method's streaming shape, when the schema knows the method. */
  readonly kind?: "unary" | "server_streaming" | "client_streaming" | "bidi_streaming";
  /** Error details whose type the schema knows, as JSON. */
  readonly details?: { type: string; json: unknown }[];
}

const MAGIC = "PCPROXY1";
export const defaultMaxBytes = 64 * 1024 * 1024;

export class CallStore {
  private nextId = 1;
  private constructor(
    private readonly log: RecordLog,
    /** The calls of the store, oldest first: the same calls as its file holds (bounded with it). */
    readonly calls: ProxiedCall[],
    /** Damaged stretches skipped when it was opened (their bytes are kept in `<file>.damaged`). */
    readonly damaged: number,
  ) {
    for (const c of calls) this.nextId = Math.max(this.nextId, c.id + 1);
  }

  /** Opens the store for writing (one writer per file: a second proxy on it is refused). */
  static async open(file: string, maxBytes = defaultMaxBytes): Promise<CallStore> {
    closeSync(openSync(file, "a"));
    lockFile(file, {
      what: "call store",
      holder: "another `protocall proxy`?",
      fix: "stop it, or pass another --store",
    });
    const opened = await RecordLog.open(file, {
      magic: MAGIC,
      // Calls pass through while earlier ones are being stored: keep the durable writes off the loop.
      writeOnLoop: false,
      notThis: notAStore(file),
      prune: (log) => {
        if (log.size <= maxBytes) return undefined;
        let drop = log.size - Math.floor(maxBytes / 2);
        let i = 0;
        while (i < log.entries.length - 1 && drop > 0) drop -= log.entries[i++].length;
        return i;
      },
    });
    const calls = parseCalls(opened.records);
    for (const [call, r] of calls) opened.log.adopt({ id: call.id, offset: r.offset, length: r.length });
    return new CallStore(
      opened.log,
      calls.map(([c]) => c),
      opened.damaged.length,
    );
  }

  /** How the store's durable writes ran: all in the thread pool (see `writeOnLoop` above). */
  get writes(): { readonly inline: number; readonly pool: number } {
    return this.log.writes;
  }

  allocateId(): number {
    return this.nextId++;
  }

  /** Writes a call durably; resolves once it is on disk. */
  async add(call: ProxiedCall): Promise<void> {
    await this.log.append(frame(Buffer.from(JSON.stringify({ kind: "call", ...call }), "utf8")), call.id);
    this.calls.push(call);
    // The calls in memory are the calls in the file: those pruned past the size limit go here too.
    const oldest = this.log.entries[0]?.id;
    let drop = 0;
    while (drop < this.calls.length && oldest !== undefined && this.calls[drop].id < oldest) drop++;
    if (drop > 0) this.calls.splice(0, drop);
  }

  async close(): Promise<void> {
    await this.log.close();
    unlockFile(this.file);
  }

  get file(): string {
    return this.log.file;
  }
}

function notAStore(file: string): string {
  return `${file} is not a protocall proxy store: give another --store file`;
}

function parseCalls(records: readonly ScannedRecord[]): [ProxiedCall, ScannedRecord][] {
  const out: [ProxiedCall, ScannedRecord][] = [];
  for (const r of records) {
    try {
      const { kind, ...call } = JSON.parse(r.payload.toString("utf8"));
      if (kind === "call") out.push([call as ProxiedCall, r]);
    } catch {
      // An intact frame that is not a call (written by a newer version): skipped.
    }
  }
  return out;
}

/** Reads the calls of a store file without opening it for writing (a running proxy may hold it). */
export function readCalls(file: string): ProxiedCall[] {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (err) {
    throw new ProtocallError(`cannot read the call store ${file}: ${(err as Error).message}`);
  }
  return parseCalls(scanLog(data, [MAGIC], notAStore(file)).records).map(([c]) => c);
}
