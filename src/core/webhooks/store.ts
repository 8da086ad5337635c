// The listener's event store: an append-only file with one record per delivery, made durable with
// group commit. Concurrent appends are written together with one writev and one fdatasync, and each
// caller's promise resolves only after the fdatasync that covers its record (so a listener acknowledges
// an event only once it is on disk). One fsync per event would cap throughput at the disk's fsync rate;
// batching is what lets thousands of events per second through on an ordinary disk.
//
// File layout: the 8-byte magic "PCEVT01\n", then records of [u32 LE length][u32 LE crc32][JSON].
// A torn last record (a crash during a write) fails its length or checksum test and is cut off when
// the store is opened. When the file grows past `maxBytes`, the oldest records are pruned by copying
// the newest ones (up to half the limit) into a new file that atomically replaces the old one.
import { closeSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { type FileHandle, open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { crc32 } from "node:zlib";
import type { JsonValue } from "@bufbuild/protobuf";
import { errorMessage, ProtocallError } from "../errors";

const MAGIC = Buffer.from("PCEVT01\n", "latin1");
const HEADER = 8;

/** The result of relaying a delivery to the user's backend (`--forward-to`). */
export interface ForwardResult {
  readonly url: string;
  /** 0 when no HTTP response arrived. */
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
  /** The raw request body, base64. */
  readonly body: string;
  readonly status: "accepted" | "rejected";
  /** Why a rejected delivery was refused (the error message sent back). */
  readonly reason?: string;
  /** HTTP status the listener answered with. */
  readonly httpStatus: number;
  /** The decoded EventRequest as protobuf JSON (accepted deliveries). */
  readonly event?: JsonValue;
}

interface ForwardRecord {
  readonly kind: "forward";
  readonly id: number;
  readonly forward: ForwardResult;
}

type StoreRecord = DeliveryRecord | ForwardRecord;

/** A delivery with its forwarding result, as read back from the store. */
export type StoredDelivery = DeliveryRecord & { readonly forward?: ForwardResult };

export interface EventStoreOptions {
  /** Size limit of the file in bytes; oldest records are pruned past it (default 256 MiB). */
  readonly maxBytes?: number;
  /** Longest wait for more appends to join a group before its fdatasync (default 2 ms). */
  readonly groupCommitMs?: number;
  /** Groups written and synced concurrently (default 2); 1 makes each group wait for the previous. */
  readonly syncsInFlight?: number;
}

interface IndexEntry {
  readonly id: number;
  offset: number;
  readonly length: number;
}

interface Pending {
  readonly bytes: Buffer;
  readonly record: StoreRecord;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

function encode(record: StoreRecord): Buffer {
  const json = Buffer.from(JSON.stringify(record), "utf8");
  const out = Buffer.allocUnsafe(HEADER + json.length);
  out.writeUInt32LE(json.length, 0);
  out.writeUInt32LE(crc32(json), 4);
  json.copy(out, HEADER);
  return out;
}

interface Scan {
  readonly records: { record: StoreRecord; offset: number; length: number }[];
  /** Where the valid part of the file ends. */
  readonly validEnd: number;
}

/** Reads every intact record of a store file's contents, stopping at the first torn or corrupt one. */
function scan(data: Buffer, file: string): Scan {
  if (data.length === 0) return { records: [], validEnd: 0 };
  if (data.length < MAGIC.length || !data.subarray(0, MAGIC.length).equals(MAGIC)) {
    if (MAGIC.subarray(0, data.length).equals(data.subarray(0, MAGIC.length))) {
      return { records: [], validEnd: 0 }; // torn while writing the magic itself
    }
    throw new ProtocallError(
      `${file} is not a protocall event store (wrong header): pass another --store, or move the file away`,
    );
  }
  const records: Scan["records"] = [];
  let pos = MAGIC.length;
  while (pos + HEADER <= data.length) {
    const len = data.readUInt32LE(pos);
    const sum = data.readUInt32LE(pos + 4);
    if (pos + HEADER + len > data.length) break;
    const json = data.subarray(pos + HEADER, pos + HEADER + len);
    if (crc32(json) !== sum) break;
    let record: StoreRecord;
    try {
      record = JSON.parse(json.toString("utf8")) as StoreRecord;
    } catch {
      break;
    }
    records.push({ record, offset: pos, length: HEADER + len });
    pos += HEADER + len;
  }
  return { records, validEnd: pos };
}

function merge(records: readonly StoreRecord[]): StoredDelivery[] {
  const out: StoredDelivery[] = [];
  const byId = new Map<number, number>();
  for (const r of records) {
    if (r.kind === "delivery") {
      byId.set(r.id, out.length);
      out.push(r);
    } else if (r.kind === "forward") {
      const i = byId.get(r.id);
      if (i !== undefined) out[i] = { ...out[i], forward: r.forward };
    }
  }
  return out;
}

/** Reads a store file without opening it for writing (e.g. while a listener runs in another process). */
export function readStoreFile(file: string): StoredDelivery[] {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (err) {
    throw new ProtocallError(`cannot read event store ${file}: ${errorMessage(err)}`);
  }
  return merge(scan(data, file).records.map((r) => r.record));
}

export class EventStore {
  private index: IndexEntry[] = [];
  private pending: Pending[] = [];
  private running: Promise<void> | undefined;
  private inFlight = 0;
  private wake: (() => void) | undefined;
  /** Resolves to whether every group started so far reached the disk. */
  private tail: Promise<boolean> = Promise.resolve(true);
  private failedAt: number | undefined;
  private compactRetryAt = 0;
  /** Set while `clear()` runs: no new group starts until it is done. */
  private clearing: Promise<void> | undefined;
  /** Appends made while `clear()` runs, written after it. */
  private held: Pending[] = [];
  private size: number;
  private nextId: number;
  private closed = false;
  /** Number of fdatasync calls so far (each covers one group of appends). */
  syncCount = 0;

  private constructor(
    readonly file: string,
    private fh: FileHandle,
    size: number,
    nextId: number,
    private readonly maxBytes: number,
    private readonly lingerMs: number,
    private readonly depth: number,
  ) {
    this.size = size;
    this.nextId = nextId;
  }

  /** Opens (or creates) the store, cutting off a torn last record left by a crash. */
  static async open(file: string, options: EventStoreOptions = {}): Promise<EventStore> {
    let fh: FileHandle;
    try {
      fh = await open(file, "a+");
      await fh.close();
      fh = await open(file, "r+");
    } catch (err) {
      throw new ProtocallError(`cannot open event store ${file}: ${errorMessage(err)}`);
    }
    try {
      lock(file);
    } catch (err) {
      await fh.close();
      throw err;
    }
    try {
      const data = await fh.readFile();
      const { records, validEnd } = scan(data, file);
      let size = validEnd;
      if (size === 0) {
        await fh.truncate(0);
        await fh.write(MAGIC, 0, MAGIC.length, 0);
        size = MAGIC.length;
        await fh.sync();
      } else if (validEnd < data.length) {
        await fh.truncate(validEnd);
        await fh.sync();
      }
      const store = new EventStore(
        file,
        fh,
        size,
        1,
        options.maxBytes ?? 256 * 1024 * 1024,
        options.groupCommitMs ?? 2,
        options.syncsInFlight ?? 2,
      );
      for (const r of records) {
        if (r.record.kind === "delivery")
          store.index.push({ id: r.record.id, offset: r.offset, length: r.length });
        store.nextId = Math.max(store.nextId, r.record.id + 1);
      }
      return store;
    } catch (err) {
      await fh.close();
      unlock(file);
      throw err;
    }
  }

  /** The id the next delivery will get. */
  allocateId(): number {
    return this.nextId++;
  }

  /** Appends a delivery; resolves once it is on disk. */
  append(record: Omit<DeliveryRecord, "kind">): Promise<void> {
    return this.enqueue({ kind: "delivery", ...record });
  }

  /** Appends the result of forwarding delivery `id`; resolves once it is on disk. */
  appendForward(id: number, forward: ForwardResult): Promise<void> {
    return this.enqueue({ kind: "forward", id, forward });
  }

  /** Number of deliveries in the store. */
  count(): number {
    return this.index.length;
  }

  /** Current file size in bytes. */
  byteSize(): number {
    return this.size;
  }

  /** Every delivery, oldest first, with forwarding results. */
  async list(): Promise<StoredDelivery[]> {
    while (this.clearing) await this.clearing;
    while (this.running) await this.running;
    const data = Buffer.allocUnsafe(this.size);
    await this.fh.read(data, 0, this.size, 0);
    return merge(scan(data, this.file).records.map((r) => r.record));
  }

  async get(id: number): Promise<StoredDelivery | undefined> {
    return (await this.list()).find((d) => d.id === id);
  }

  /**
   * Removes every delivery: waits for the groups being written, then cuts the file back to its header
   * (synced). Appends made while it runs wait for it and land in the emptied store. Ids keep counting.
   */
  async clear(): Promise<void> {
    if (this.closed) throw new Error("the event store is closed");
    while (this.clearing) await this.clearing;
    const task = (async () => {
      while (this.running) await this.running;
      await this.fh.truncate(MAGIC.length);
      await this.fh.sync();
      this.size = MAGIC.length;
      this.index = [];
      this.failedAt = undefined;
      this.compactRetryAt = 0;
      this.tail = Promise.resolve(true);
    })();
    this.clearing = task;
    try {
      await task;
    } finally {
      this.clearing = undefined;
      this.pending.push(...this.held);
      this.held = [];
      if (this.pending.length > 0 && !this.running) this.running = this.dispatch();
    }
  }

  /** Waits for pending appends, then closes the file. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.clearing) await this.clearing;
    while (this.running) await this.running;
    await this.fh.close();
    unlock(this.file);
  }

  private enqueue(record: StoreRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the event store is closed"));
    return new Promise<void>((resolve, reject) => {
      const entry = { bytes: encode(record), record, resolve, reject };
      if (this.clearing) {
        this.held.push(entry);
        return;
      }
      this.pending.push(entry);
      if (!this.running) this.running = this.dispatch();
    });
  }

  /**
   * Starts groups of appends: each group is one positional writev plus one fdatasync. Up to `depth`
   * groups are in flight at once, because a second fdatasync issued while one is running usually
   * completes with it (the file system commits both in one journal transaction), so throughput is not
   * capped at one group per sync latency. Groups are acknowledged strictly in file order: a group is
   * resolved only once it and every group before it are on disk, so a crash can never keep a later
   * acknowledged record behind a torn earlier one (recovery cuts the file at the first bad record).
   */
  private async dispatch(): Promise<void> {
    for (;;) {
      if (this.inFlight === 0 && this.failedAt !== undefined) await this.recover();
      if (this.size > this.maxBytes && this.size >= this.compactRetryAt) {
        // Pruning rewrites offsets, so it waits until the groups in flight are on disk.
        if (this.inFlight > 0) {
          await this.slotFreed();
          continue;
        }
        try {
          await this.compact();
          this.compactRetryAt = 0;
        } catch {
          // Appends go on in the current file; pruning is tried again after a quarter more growth.
          this.compactRetryAt = this.size + Math.floor(this.maxBytes / 4);
        }
      }
      if (this.pending.length === 0) {
        if (this.inFlight === 0) break;
        await this.slotFreed();
        continue;
      }
      if (this.inFlight >= this.depth) {
        await this.slotFreed();
        continue;
      }
      await this.gather();
      this.startGroup();
    }
    this.running = undefined;
  }

  private slotFreed(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
    });
  }

  private startGroup(): void {
    const group = this.pending;
    this.pending = [];
    if (group.length === 0) return;
    const position = this.size;
    let offset = position;
    for (const p of group) {
      if (p.record.kind === "delivery") this.index.push({ id: p.record.id, offset, length: p.bytes.length });
      offset += p.bytes.length;
    }
    this.size = offset;
    this.inFlight++;
    const previous = this.tail;
    const durable = (async () => {
      await this.writeAll(
        group.map((p) => p.bytes),
        position,
      );
      await this.fh.datasync();
      this.syncCount++;
      if (!(await previous)) throw new Error("an earlier write to the event store failed");
    })();
    this.tail = durable.then(
      () => true,
      () => false,
    );
    durable
      .then(
        () => {
          for (const p of group) p.resolve();
        },
        (err: unknown) => {
          this.failedAt = Math.min(this.failedAt ?? Number.POSITIVE_INFINITY, position);
          for (const p of group) p.reject(err);
        },
      )
      .finally(() => {
        this.inFlight--;
        const wake = this.wake;
        this.wake = undefined;
        wake?.();
      });
  }

  private async writeAll(buffers: Buffer[], position: number): Promise<void> {
    const total = buffers.reduce((n, b) => n + b.length, 0);
    let written = 0;
    while (written < total) {
      const { bytesWritten } = await this.fh.writev(sliceFrom(buffers, written), position + written);
      written += bytesWritten;
    }
  }

  /** After a failed write: cut the file back to before the first failed group. */
  private async recover(): Promise<void> {
    const at = this.failedAt!;
    try {
      await this.fh.truncate(at);
    } catch {
      // The next group fails again and reports it.
    }
    this.size = at;
    this.index = this.index.filter((e) => e.offset < at);
    this.failedAt = undefined;
    this.tail = Promise.resolve(true);
  }

  /**
   * Waits briefly so that appends from requests still in flight join this group: an fdatasync costs
   * milliseconds, so committing 50 records with one sync instead of 5 multiplies throughput. The wait
   * ends as soon as no new append arrived during one turn of the event loop, or after `lingerMs` in all.
   */
  private async gather(): Promise<void> {
    const deadline = performance.now() + this.lingerMs;
    let seen = -1;
    while (this.pending.length !== seen && this.pending.length < 256 && performance.now() < deadline) {
      seen = this.pending.length;
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  /** Keeps the newest records that fit in half the limit (at least one), in a new file. */
  private async compact(): Promise<void> {
    const target = Math.floor(this.maxBytes / 2);
    let keepFrom = this.index.length - 1;
    while (keepFrom > 0 && this.size - this.index[keepFrom - 1].offset <= target) keepFrom--;
    if (keepFrom <= 0) return;
    const start = this.index[keepFrom].offset;
    const tail = Buffer.allocUnsafe(this.size - start);
    await this.fh.read(tail, 0, tail.length, start);
    const tmp = `${this.file}.compact`;
    const out = await open(tmp, "w");
    try {
      await out.writev([MAGIC, tail], 0);
      await out.sync();
    } finally {
      await out.close();
    }
    await rename(tmp, this.file);
    try {
      const dir = openSync(dirname(this.file), "r");
      fsyncSync(dir);
      closeSync(dir);
    } catch {
      // Directory fsync is not available everywhere; the rename is atomic regardless.
    }
    await this.fh.close();
    this.fh = await open(this.file, "r+");
    const shift = start - MAGIC.length;
    this.index.splice(0, keepFrom);
    for (const e of this.index) e.offset -= shift;
    this.size -= shift;
  }
}

/**
 * One writer per store: `<file>.lock` holds the writer's process id. A lock left by a process that no
 * longer runs (killed) is taken over.
 */
function lock(file: string): void {
  const path = `${file}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new ProtocallError(`cannot lock event store ${file}: ${errorMessage(err)}`);
      }
    }
    const pid = Number(readFileSync(path, "utf8").trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isRunning(pid)) {
      throw new ProtocallError(
        `event store ${file} is in use by process ${pid} (another \`protocall listen\`?): stop it, or pass another --store`,
      );
    }
    if (pid === process.pid) {
      throw new ProtocallError(`event store ${file} is already open in this process`);
    }
    rmSync(path, { force: true });
  }
  throw new ProtocallError(`cannot lock event store ${file}: another process keeps taking the lock`);
}

function unlock(file: string): void {
  try {
    if (readFileSync(`${file}.lock`, "utf8").trim() === String(process.pid))
      rmSync(`${file}.lock`, { force: true });
  } catch {
    // Already gone.
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function sliceFrom(buffers: Buffer[], skip: number): Buffer[] {
  if (skip === 0) return buffers;
  const out: Buffer[] = [];
  for (const b of buffers) {
    if (skip >= b.length) {
      skip -= b.length;
      continue;
    }
    out.push(skip ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
}
