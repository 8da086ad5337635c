// The listener's event store: accepted deliveries (and what forwarding them gave) in one append-only
// log, made durable with group commit before the listener acknowledges them; rejected requests in a
// second, smaller log beside it (`<file>.rejected`), capped by count and size, holding only the first
// bytes of each body. Rejections are kept apart so that no amount of bad requests can push an accepted
// event out of the store: `maxBytes` prunes accepted deliveries only, and only by their own size.
// The logs (framing, checksums, group commit, pruning, recovery) are in ../serve/record-log.ts.
//
// A record's payload is a JSON head, then a newline and the raw request body (format version 02;
// version 01 stored the body as base64 inside the JSON and is still read, and upgraded on open).
// An accepted binary delivery is stored without its decoded form: the event is decoded from the body
// when the store is read, which keeps the hot path to one protobuf validation and one small JSON.

import { closeSync, openSync, readFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import { fromBinary, type JsonValue, toJson } from "@bufbuild/protobuf";
import { EventRequestSchema } from "../../gen/buf/alpha/webhook/v1alpha1/event_pb";
import { errorMessage, ProtocallError } from "../errors";
import { lockFile, unlockFile } from "../serve/durable-file";
import {
  type AppendDone,
  type DamagedRange,
  type LogEntry,
  RecordLog,
  type ScannedRecord,
  scanLog,
} from "../serve/record-log";

const ACCEPTED_MAGIC = "PCEVT02\n";
const ACCEPTED_LEGACY = ["PCEVT01\n"];
const REJECTED_MAGIC = "PCREJ01\n";
/** Bytes of a rejected request's body that are kept. */
export const REJECTED_BODY_EXCERPT = 1024;
/** Longest reason kept for a rejected request. */
const REASON_LIMIT = 1024;
/** Rejected requests' header values are cut to this length, and at most this many headers kept. */
const REJECTED_HEADER_VALUE = 256;
const REJECTED_HEADERS = 64;
/** The rejection log is pruned when it passes this size, whatever the count. */
const REJECTED_BYTES = 16 * 1024 * 1024;

/** The result of relaying a delivery to the user's backend (`--forward-to`). */
export interface ForwardResult {
  readonly url: string;
  /** 0 when no HTTP response arrived (see `error`). */
  readonly status: number;
  readonly latencyMs: number;
  readonly body: string;
  readonly error?: string;
  readonly time: string;
}

export interface DeliveryRecord {
  readonly kind: "delivery";
  readonly id: number;
  /** ISO time the request was received. */
  readonly receivedAt: string;
  readonly remoteAddress: string;
  readonly method: string;
  readonly path: string;
  /** The URL the listener served this delivery on (the callback URL), the default replay target. */
  readonly listenerUrl: string;
  readonly headers: Record<string, string>;
  /** The raw request body, base64 (of a rejected request: only its first bytes, see `bodySize`). */
  readonly body: string;
  /** Size of the whole body, when `body` holds only its first bytes. */
  readonly bodySize?: number;
  readonly status: "accepted" | "rejected";
  /** Why a rejected delivery was refused (the error message sent back). */
  readonly reason?: string;
  /** HTTP status the listener answered with. */
  readonly httpStatus: number;
  /** The decoded EventRequest as protobuf JSON (accepted deliveries). */
  readonly event?: JsonValue;
}

/** A delivery as the listener appends it: the body as bytes. */
export type DeliveryHead = Omit<DeliveryRecord, "kind" | "body" | "bodySize">;

interface ForwardRecord {
  readonly kind: "forward";
  readonly id: number;
  readonly forward: ForwardResult;
}

type StoreRecord = DeliveryRecord | ForwardRecord;

/** A delivery with its forwarding result, as read back from the store. */
export type StoredDelivery = DeliveryRecord & { readonly forward?: ForwardResult };

export interface EventStoreOptions {
  /** Size limit of the accepted deliveries' file; the oldest are pruned past it (default 256 MiB). */
  readonly maxBytes?: number;
  /** Rejected requests kept (default 1000); the oldest are pruned first. */
  readonly maxRejected?: number;
  /** Longest wait for more appends to join a group before its fdatasync (default 2 ms). */
  readonly groupCommitMs?: number;
  /** Groups written and synced concurrently (default 2); 1 makes each group wait for the previous. */
  readonly syncsInFlight?: number;
}

/** A damaged stretch of the store that was skipped when it was opened or read. */
export interface SkippedRange extends DamagedRange {
  readonly file: string;
  /** The last intact delivery before it and the first after it (ids), when there are any. */
  readonly afterId?: number;
  readonly beforeId?: number;
  /** Ids between those two found nowhere in the store: the deliveries the damage took. */
  readonly lostIds: readonly number[];
}

/** What opening or reading the store had to skip; empty when the store was intact. */
export interface StoreRecovery {
  readonly skipped: readonly SkippedRange[];
  /**
   * Whether the skipped bytes were moved out of the store into `<file>.damaged` beside each damaged
   * file (when it was opened for writing; reading leaves the files as they are).
   */
  readonly moved: boolean;
}

/** One line for a user: what was skipped, and that everything else was kept. */
export function describeRecovery(recovery: StoreRecovery): string | undefined {
  const skipped = recovery.skipped;
  if (skipped.length === 0) return undefined;
  const place = (s: SkippedRange) => {
    const around =
      s.afterId !== undefined && s.beforeId !== undefined
        ? ` (between deliveries ${s.afterId} and ${s.beforeId})`
        : s.afterId !== undefined
          ? ` (after delivery ${s.afterId})`
          : s.beforeId !== undefined
            ? ` (before delivery ${s.beforeId})`
            : "";
    return `${s.length} bytes at offset ${s.offset} of ${s.file}${around}`;
  };
  const what =
    skipped.length === 1
      ? place(skipped[0])
      : `${skipped.reduce((n, s) => n + s.length, 0)} bytes in ${skipped.length} places: ${skipped.map(place).join("; ")}`;
  const lost = skipped.flatMap((s) => s.lostIds);
  const lostText =
    lost.length === 0
      ? "no delivery id is missing"
      : `lost ${lost.length === 1 ? "delivery" : "deliveries"} ${idList(lost)}`;
  const files = [...new Set(skipped.map((s) => `${s.file}.damaged`))];
  const moved = recovery.moved ? `; the damaged bytes were moved to ${files.join(" and ")}` : "";
  return `the event store was damaged: skipped ${what}, kept every intact record, ${lostText}${moved}`;
}

function idList(ids: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++;
    parts.push(j === i ? String(ids[i]) : `${ids[i]}-${ids[j]}`);
    i = j + 1;
  }
  return parts.length > 6 ? `${parts.slice(0, 6).join(", ")}, …` : parts.join(", ");
}

const NEWLINE = 0x0a;

/** Frames a record: [length][crc32][JSON head][\n body], in one buffer. */
function encode(head: object, body: Uint8Array | undefined): Buffer {
  return encodeJson(JSON.stringify(head), body);
}

/** Frames a delivery: its head with `kind` first (written into the JSON, not spread into a copy). */
function encodeDelivery(head: DeliveryHead, body: Uint8Array): Buffer {
  return encodeJson(`{"kind":"delivery",${JSON.stringify(head).slice(1)}`, body);
}

function encodeJson(json: string, body: Uint8Array | undefined): Buffer {
  const jsonLength = Buffer.byteLength(json);
  const payloadLength = jsonLength + (body ? 1 + body.byteLength : 0);
  const out = Buffer.allocUnsafe(8 + payloadLength);
  out.writeUInt32LE(payloadLength, 0);
  out.write(json, 8, jsonLength, "utf8");
  if (body) {
    out[8 + jsonLength] = NEWLINE;
    out.set(body, 9 + jsonLength);
  }
  out.writeUInt32LE(crc32(out.subarray(8)), 4);
  return out;
}

/** Parses a payload (version 02: JSON head, newline, body; version 01: JSON only). */
function decode(payload: Buffer): StoreRecord {
  const nl = payload.indexOf(NEWLINE);
  if (nl < 0) return JSON.parse(payload.toString("utf8")) as StoreRecord;
  const head = JSON.parse(payload.toString("utf8", 0, nl)) as StoreRecord;
  if (head.kind !== "delivery") return head;
  const body = payload.subarray(nl + 1);
  const record = { ...head, body: body.toString("base64") } as DeliveryRecord;
  if (record.event === undefined && record.status === "accepted" && isBinary(record)) {
    try {
      return { ...record, event: toJson(EventRequestSchema, fromBinary(EventRequestSchema, body)) };
    } catch {
      return record;
    }
  }
  return record;
}

function isBinary(d: DeliveryRecord): boolean {
  return /^application\/proto\s*(;|$)/i.test(d.headers["content-type"] ?? "");
}

interface Parsed {
  readonly record: StoreRecord;
  readonly offset: number;
  readonly length: number;
  /** Its place among the scanned records. */
  readonly index: number;
}

/** Parses scanned records; a payload that is framed and checksummed yet not a record is skipped too. */
function parseAll(records: readonly ScannedRecord[], file: string, skipped: SkippedRange[]): Parsed[] {
  const out: Parsed[] = [];
  for (let index = 0; index < records.length; index++) {
    const r = records[index];
    try {
      out.push({ record: decode(r.payload), offset: r.offset, length: r.length, index });
    } catch {
      skipped.push({ file, offset: r.offset, length: r.length, recordsBefore: index, lostIds: [] });
    }
  }
  return out;
}

/** Fills in, for each damaged range, the ids around it and the ids that are missing. */
function explain(
  ranges: readonly DamagedRange[],
  file: string,
  records: readonly Parsed[],
  allIds: ReadonlySet<number>,
): SkippedRange[] {
  return ranges.map((range) => {
    let afterId: number | undefined;
    let beforeId: number | undefined;
    for (const p of records) {
      if (p.record.kind !== "delivery") continue;
      if (p.index < range.recordsBefore) afterId = p.record.id;
      else if (beforeId === undefined) beforeId = p.record.id;
    }
    const lostIds: number[] = [];
    if (afterId !== undefined && beforeId !== undefined) {
      for (let id = afterId + 1; id < beforeId && lostIds.length < 10_000; id++) {
        if (!allIds.has(id)) lostIds.push(id);
      }
    }
    return {
      file,
      offset: range.offset,
      length: range.length,
      recordsBefore: range.recordsBefore,
      lostIds,
      ...(afterId !== undefined ? { afterId } : {}),
      ...(beforeId !== undefined ? { beforeId } : {}),
    };
  });
}

function merge(accepted: readonly StoreRecord[], rejected: readonly StoreRecord[]): StoredDelivery[] {
  const out: StoredDelivery[] = [];
  const byId = new Map<number, number>();
  for (const r of accepted) {
    if (r.kind === "delivery") {
      byId.set(r.id, out.length);
      out.push(r);
    } else if (r.kind === "forward") {
      const i = byId.get(r.id);
      if (i !== undefined) out[i] = { ...out[i], forward: r.forward };
    }
  }
  if (rejected.length === 0) return out;
  for (const r of rejected) if (r.kind === "delivery") out.push(r);
  return out.sort((a, b) => a.id - b.id);
}

function notAStore(file: string): string {
  return `${file} is not a protocall event store (wrong header): pass another --store, or move the file away`;
}

export function rejectedFile(file: string): string {
  return `${file}.rejected`;
}

/** Every delivery of a store file and what had to be skipped, read without opening it for writing. */
export interface StoreContents {
  readonly deliveries: StoredDelivery[];
  readonly recovery: StoreRecovery;
}

/** Reads a store without opening it for writing (e.g. while a listener runs in another process). */
export function readStore(file: string): StoreContents {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (err) {
    throw new ProtocallError(`cannot read event store ${file}: ${errorMessage(err)}`);
  }
  let rejectedData: Buffer;
  try {
    rejectedData = readFileSync(rejectedFile(file));
  } catch {
    rejectedData = Buffer.alloc(0);
  }
  const skipped: SkippedRange[] = [];
  const main = scanLog(data, [ACCEPTED_MAGIC, ...ACCEPTED_LEGACY], notAStore(file));
  const rej = scanLog(rejectedData, [REJECTED_MAGIC], notAStore(rejectedFile(file)));
  const accepted = parseAll(main.records, file, skipped);
  const rejected = parseAll(rej.records, rejectedFile(file), skipped);
  const ids = new Set<number>();
  for (const p of accepted) ids.add(p.record.id);
  for (const p of rejected) ids.add(p.record.id);
  skipped.push(...explain(main.damaged, file, accepted, ids));
  skipped.push(...explain(rej.damaged, rejectedFile(file), rejected, ids));
  return {
    deliveries: merge(
      accepted.map((p) => p.record),
      rejected.map((p) => p.record),
    ),
    recovery: { skipped, moved: false },
  };
}

/** Reads a store file's deliveries without opening it for writing. */
export function readStoreFile(file: string): StoredDelivery[] {
  return readStore(file).deliveries;
}

/** Cuts a rejected request down to what is kept: a body excerpt, short header values, a short reason. */
function trimRejected(head: DeliveryHead, body: Uint8Array): { head: object; body: Uint8Array } {
  const headers: Record<string, string> = {};
  let n = 0;
  for (const [k, v] of Object.entries(head.headers)) {
    if (n++ >= REJECTED_HEADERS) break;
    headers[k.slice(0, REJECTED_HEADER_VALUE)] =
      v.length > REJECTED_HEADER_VALUE ? `${v.slice(0, REJECTED_HEADER_VALUE)}…` : v;
  }
  const reason =
    head.reason && head.reason.length > REASON_LIMIT ? `${head.reason.slice(0, REASON_LIMIT)}…` : head.reason;
  const path = head.path.length > 2048 ? `${head.path.slice(0, 2048)}…` : head.path;
  const cut = body.byteLength > REJECTED_BODY_EXCERPT;
  return {
    head: {
      kind: "delivery",
      ...head,
      path,
      headers,
      ...(reason !== undefined ? { reason } : {}),
      ...(cut ? { bodySize: body.byteLength } : {}),
    },
    body: cut ? body.subarray(0, REJECTED_BODY_EXCERPT) : body,
  };
}

/** A delivery as the store keeps it (a rejected one cut down), to report it as it was stored. */
export function storedForm(head: DeliveryHead, body: Uint8Array): StoredDelivery {
  if (head.status === "accepted") {
    return { kind: "delivery", ...head, body: base64(body) };
  }
  const trimmed = trimRejected(head, body);
  return { ...(trimmed.head as DeliveryRecord), body: base64(trimmed.body) };
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

export class EventStore {
  private nextId: number;
  private closed = false;

  private constructor(
    readonly file: string,
    private readonly accepted: RecordLog,
    private readonly rejected: RecordLog,
    nextId: number,
    /** What opening the store had to skip (empty when it was intact). */
    readonly recovery: StoreRecovery,
  ) {
    this.nextId = nextId;
  }

  /**
   * Opens (or creates) the store. A torn last record left by a crash is cut off; a damaged record
   * elsewhere is skipped, its bytes moved to `<file>.damaged`, and reported in `recovery`.
   */
  static async open(file: string, options: EventStoreOptions = {}): Promise<EventStore> {
    try {
      closeSync(openSync(file, "a"));
    } catch (err) {
      throw new ProtocallError(`cannot open event store ${file}: ${errorMessage(err)}`);
    }
    lockFile(file, {
      what: "event store",
      holder: "another `protocall listen`?",
      fix: "stop it, or pass another --store",
    });
    let acceptedLog: RecordLog | undefined;
    try {
      const maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
      const maxRejected = options.maxRejected ?? 1000;
      const common = { lingerMs: options.groupCommitMs ?? 2, depth: options.syncsInFlight ?? 2 };
      const opened = await RecordLog.open(file, {
        ...common,
        magic: ACCEPTED_MAGIC,
        legacyMagics: ACCEPTED_LEGACY,
        notThis: notAStore(file),
        prune: (log) => (log.size > maxBytes ? keepNewest(log, Math.floor(maxBytes / 2)) : undefined),
      }).catch((err) => {
        if (err instanceof ProtocallError) throw err;
        throw new ProtocallError(`cannot open event store ${file}: ${errorMessage(err)}`);
      });
      acceptedLog = opened.log;
      const openedRejected = await RecordLog.open(rejectedFile(file), {
        ...common,
        magic: REJECTED_MAGIC,
        notThis: notAStore(rejectedFile(file)),
        // Written, not synced: a rejection is a diagnostic, not something a sender was promised.
        sync: false,
        preallocateBytes: 0,
        prune: (log) => {
          const slack = Math.max(1, Math.floor(maxRejected / 4));
          if (log.entries.length <= maxRejected + slack && log.size <= REJECTED_BYTES) return undefined;
          const from = keepNewest(log, REJECTED_BYTES / 2);
          return Math.max(from, log.entries.length - maxRejected);
        },
      }).catch(async (err) => {
        if (err instanceof ProtocallError) throw err;
        throw new ProtocallError(`cannot open event store ${rejectedFile(file)}: ${errorMessage(err)}`);
      });
      const skipped: SkippedRange[] = [];
      const accepted = parseAll(opened.records, file, skipped);
      const rejected = parseAll(openedRejected.records, rejectedFile(file), skipped);
      let nextId = 1;
      const ids = new Set<number>();
      for (const [log, parsed] of [
        [opened.log, accepted],
        [openedRejected.log, rejected],
      ] as const) {
        for (const p of parsed) {
          ids.add(p.record.id);
          nextId = Math.max(nextId, p.record.id + 1);
          if (p.record.kind === "delivery")
            log.adopt({ id: p.record.id, offset: p.offset, length: p.length });
        }
      }
      skipped.push(...explain(opened.damaged, file, accepted, ids));
      skipped.push(...explain(openedRejected.damaged, rejectedFile(file), rejected, ids));
      const recovery: StoreRecovery = {
        skipped,
        moved: opened.damaged.length + openedRejected.damaged.length > 0,
      };
      return new EventStore(file, opened.log, openedRejected.log, nextId, recovery);
    } catch (err) {
      await acceptedLog?.close().catch(() => {});
      unlockFile(file);
      throw err;
    }
  }

  /** The id the next delivery will get. */
  allocateId(): number {
    return this.nextId++;
  }

  /** Appends a delivery (body base64); resolves once it is stored (accepted ones: on disk). */
  append(record: Omit<DeliveryRecord, "kind">): Promise<void> {
    const { body, bodySize: _, ...head } = record;
    return this.appendRaw(head, Buffer.from(body, "base64"));
  }

  /**
   * Appends a delivery with its body as bytes. An accepted one resolves once it is on disk; a rejected
   * one is cut down (body excerpt, short headers) and goes to the rejection log.
   */
  appendRaw(head: DeliveryHead, body: Uint8Array): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.appendRawThen(head, body, (err) => (err === undefined ? resolve() : reject(err)));
    });
  }

  /** `appendRaw` with a callback instead of a promise (the listener's hot path). */
  appendRawThen(head: DeliveryHead, body: Uint8Array, done: AppendDone): void {
    if (this.closed) {
      done(new Error("the event store is closed"));
      return;
    }
    if (head.status === "accepted") {
      this.accepted.appendThen(encodeDelivery(head, body), head.id, done);
      return;
    }
    const trimmed = trimRejected(head, body);
    this.rejected.appendThen(encode(trimmed.head, trimmed.body), head.id, done);
  }

  /** Appends the result of forwarding delivery `id`; resolves once it is on disk. */
  appendForward(id: number, forward: ForwardResult): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the event store is closed"));
    return this.accepted.append(encode({ kind: "forward", id, forward }, undefined), undefined);
  }

  /** Number of deliveries in the store (accepted and rejected). */
  count(): number {
    return this.accepted.entries.length + this.rejected.entries.length;
  }

  /** Current size of the accepted deliveries' file in bytes (what `maxBytes` limits). */
  byteSize(): number {
    return this.accepted.size;
  }

  /** Number of fdatasync calls so far (each covers one group of appends). */
  get syncCount(): number {
    return this.accepted.syncCount;
  }

  /** Every delivery, oldest first, with forwarding results. */
  async list(): Promise<StoredDelivery[]> {
    await Promise.all([this.accepted.settle(), this.rejected.settle()]);
    const [a, r] = await Promise.all([this.accepted.read(), this.rejected.read()]);
    const ignored: SkippedRange[] = [];
    return merge(
      parseAll(scanLog(a, [ACCEPTED_MAGIC], notAStore(this.file)).records, this.file, ignored).map(
        (p) => p.record,
      ),
      parseAll(scanLog(r, [REJECTED_MAGIC], notAStore(this.file)).records, this.file, ignored).map(
        (p) => p.record,
      ),
    );
  }

  async get(id: number): Promise<StoredDelivery | undefined> {
    return (await this.list()).find((d) => d.id === id);
  }

  /**
   * Removes every delivery: waits for the groups being written, then cuts the files back to their
   * headers (synced). Appends made while it runs wait for it and land in the emptied store. Ids keep
   * counting.
   */
  async clear(): Promise<void> {
    if (this.closed) throw new Error("the event store is closed");
    await Promise.all([this.accepted.clear(), this.rejected.clear()]);
  }

  /** Waits for pending appends, then closes the files. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await Promise.all([this.accepted.close(), this.rejected.close()]);
    } finally {
      unlockFile(this.file);
    }
  }
}

/** The first entry of the newest ones whose records fit in `target` bytes (at least the last one). */
function keepNewest(log: RecordLog, target: number): number {
  const entries: readonly LogEntry[] = log.entries;
  let keepFrom = entries.length - 1;
  while (keepFrom > 0 && log.size - entries[keepFrom - 1].offset <= target) keepFrom--;
  return Math.max(keepFrom, 0);
}
