// An append-only file of checksummed records with group commit: the storage engine under the event
// store (src/core/webhooks/store.ts), which keeps accepted deliveries in one log and rejected requests
// in another. Hand-written rather than a database library: the listener's durable-throughput target
// (thousands of acknowledged events per second on two cores) needs exactly one writev and one
// fdatasync per group of appends, and recovery that is specific to this framing.
//
// File layout: an 8-byte magic (its last two characters are the format version), then records of
// [u32 LE payload length][u32 LE crc32 of the payload][payload]. Every payload starts with the bytes
// `{"kind":"` (a JSON head, see store.ts), which is how recovery finds the next record after damage.
//
// Group commit: concurrent appends are written together with one positional write (through an
// O_DSYNC descriptor for a synced log, or a write and an fdatasync), and each caller's promise resolves
// only after the write (and sync) that covers its record and every record before it. One fsync per
// record would cap throughput at the disk's fsync rate; batching is what lets thousands of records per
// second through on an ordinary disk. The write runs on the event loop while it is fast, in the thread
// pool after a slow one (see writeInline), and a synced log keeps zeros written ahead of its end (see
// `preallocateBytes`): readers stop at them as at a torn tail.
//
// Recovery on open: a record whose length runs past the end of the file or whose checksum fails is
// damaged. The scan then looks for the next intact record (a `{"kind":"` whose 8-byte header frames a
// payload with a matching checksum) and carries on from there. Damage followed by intact records is
// reported and repaired (the damaged bytes are appended to `<file>.damaged`, the file is rewritten
// without them); damage at the very end is a torn last write and is cut off silently.

import {
  appendFileSync,
  closeSync,
  fdatasync,
  constants as fsConstants,
  write as fsWrite,
  openSync,
  writeSync,
} from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { ProtocallError } from "../errors";
import { renameDurably } from "./durable-file";

export const MAGIC_LENGTH = 8;
const HEADER = 8;
/** Every payload starts with these bytes (JSON of an object whose first key is `kind`). */
const PAYLOAD_START = Buffer.from('{"kind":"', "latin1");

/** A stretch of a log file that held no intact record and was skipped. */
export interface DamagedRange {
  /** Byte offset in the file as it was found. */
  readonly offset: number;
  readonly length: number;
  /** How many intact records come before it. */
  readonly recordsBefore: number;
}

export interface ScannedRecord {
  readonly payload: Buffer;
  readonly offset: number;
  /** Header plus payload. */
  readonly length: number;
}

export interface LogScan {
  readonly records: ScannedRecord[];
  /** Damaged stretches followed by intact records (reported). */
  readonly damaged: DamagedRange[];
  /** Where the last intact record ends: bytes after it (a torn last write) are cut off. */
  readonly validEnd: number;
  /** The file's magic, or undefined for an empty file. */
  readonly magic?: string;
}

/** Frames one payload: header (length, checksum) and payload in one buffer. */
export function frame(payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER + payload.length);
  out.writeUInt32LE(payload.length, 0);
  out.writeUInt32LE(crc32(payload), 4);
  payload.copy(out, HEADER);
  return out;
}

/** Whether an intact record starts at `pos`; returns its payload length, or -1. */
function intactAt(data: Buffer, pos: number): number {
  if (pos + HEADER > data.length) return -1;
  const len = data.readUInt32LE(pos);
  if (len < PAYLOAD_START.length || pos + HEADER + len > data.length) return -1;
  const payload = data.subarray(pos + HEADER, pos + HEADER + len);
  if (payload.compare(PAYLOAD_START, 0, PAYLOAD_START.length, 0, PAYLOAD_START.length) !== 0) return -1;
  if (crc32(payload) !== data.readUInt32LE(pos + 4)) return -1;
  return len;
}

/** The start of the next intact record after `from`, or -1. */
function resync(data: Buffer, from: number): number {
  let j = data.indexOf(PAYLOAD_START, from + HEADER);
  while (j >= 0) {
    const candidate = j - HEADER;
    if (candidate > from && intactAt(data, candidate) >= 0) return candidate;
    j = data.indexOf(PAYLOAD_START, j + 1);
  }
  return -1;
}

/**
 * Reads the intact records of a log file's contents. `magics` are the accepted file headers (the
 * current version first); a file with another header is refused with `notThis`.
 */
export function scanLog(data: Buffer, magics: readonly string[], notThis: string): LogScan {
  if (data.length === 0) return { records: [], damaged: [], validEnd: 0 };
  const head = data.subarray(0, MAGIC_LENGTH).toString("latin1");
  const magic = magics.find((m) => m === head);
  if (!magic || data.length < MAGIC_LENGTH) {
    if (data.length < MAGIC_LENGTH && magics[0].startsWith(head)) {
      return { records: [], damaged: [], validEnd: 0 }; // torn while writing the magic itself
    }
    throw new ProtocallError(notThis);
  }
  const records: ScannedRecord[] = [];
  const damaged: DamagedRange[] = [];
  let pos = MAGIC_LENGTH;
  while (pos < data.length) {
    const len = intactAt(data, pos);
    if (len >= 0) {
      records.push({
        payload: data.subarray(pos + HEADER, pos + HEADER + len),
        offset: pos,
        length: HEADER + len,
      });
      pos += HEADER + len;
      continue;
    }
    const next = resync(data, pos);
    if (next < 0) break; // a torn tail: nothing intact follows
    damaged.push({ offset: pos, length: next - pos, recordsBefore: records.length });
    pos = next;
  }
  return { records, damaged, validEnd: pos, magic };
}

/**
 * A record of an open log that pruning may start from (the owner indexes the records that matter for
 * pruning, e.g. deliveries but not the notes added to them later).
 */
export interface LogEntry {
  readonly id: number;
  offset: number;
  readonly length: number;
}

export interface RecordLogOptions {
  /** The current file header (8 bytes); `legacyMagics` are older versions read and upgraded. */
  readonly magic: string;
  readonly legacyMagics?: readonly string[];
  /** The message for a file with another header. */
  readonly notThis: string;
  /** fdatasync each group before resolving its appends (default true). */
  readonly sync?: boolean;
  /** Longest wait for more appends to join a group (default 2 ms). */
  readonly lingerMs?: number;
  /** Groups written (and synced) concurrently (default 2); applies to groups sent to the thread pool. */
  readonly depth?: number;
  /**
   * A group write that took longer than this (ms, default 10) sends the following groups to the
   * thread pool for `poolForMs` (default 5,000) before writing on the event loop is tried again.
   */
  readonly inlineSlowMs?: number;
  readonly poolForMs?: number;
  /**
   * Whether groups may be written on the event loop at all (default true). A server that answers
   * calls while it logs them (the proxy) sets false: every group then goes to the thread pool, which
   * costs a little CPU but never holds up the calls in flight for a durable write (a few hundred
   * microseconds each on a local disk, milliseconds on a slow one).
   */
  readonly writeOnLoop?: boolean;
  /**
   * Most bytes of zeros written past the end whenever a group reaches it (a quarter of the file, from
   * 4 KiB up to this; default 256 KiB; 0 turns it off). A durable write inside the file's existing
   * size is much cheaper than one that grows the file: the file system then has no size or block
   * allocation to commit with it (on ext4, about half the CPU and the wait). Readers stop at the zeros
   * like at a torn tail; `close` cuts them off.
   */
  readonly preallocateBytes?: number;
  /**
   * Called before each group while no group is in flight: returns the index (into `entries`) of the
   * first entry to keep, pruning everything before it, or undefined to keep all.
   */
  readonly prune?: (log: RecordLog) => number | undefined;
}

/** Called once a record is written (and synced), or with the error that stopped it. */
export type AppendDone = (err?: unknown) => void;

interface Pending {
  readonly bytes: Buffer;
  /** The id to index the record under, or undefined to leave it out of `entries`. */
  readonly id: number | undefined;
  readonly done: AppendDone;
}

export interface OpenedLog {
  readonly log: RecordLog;
  /** The intact records, oldest first (their entries must be added by the owner with `adopt`). */
  readonly records: ScannedRecord[];
  /** Damaged stretches skipped (and removed from the file); the bytes are kept in `<file>.damaged`. */
  readonly damaged: DamagedRange[];
}

export class RecordLog {
  /** The records appended or found, oldest first, with their place in the file. */
  entries: LogEntry[] = [];
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
  private closed = false;
  /**
   * A second descriptor on the file opened with O_DSYNC, for the groups of a synced log: each group is
   * then one write that returns once it is durable, instead of a write and an fdatasync (two trips
   * through the thread pool). Undefined until first used, and where O_DSYNC does not exist.
   */
  private dsyncFd: number | undefined;
  /** Number of groups made durable so far (each one write with O_DSYNC, or one fdatasync). */
  syncCount = 0;
  /** Groups written on the event loop, and in the thread pool. */
  readonly writes = { inline: 0, pool: 0 };
  /** Until when (performance.now()) groups go to the thread pool after a slow inline write. */
  private poolUntil = 0;
  /** The file's size on disk: `size` plus the zeros written ahead of it. */
  private allocated: number;
  /** Set while a group that also writes zeros ahead is in flight: no other group may run beside it. */
  private extending = false;
  /** Set while `dispatch` waits with nothing pending (a new append wakes it). */
  private idle = false;

  private constructor(
    readonly file: string,
    private fh: FileHandle,
    /** Current file size in bytes (including groups being written). */
    public size: number,
    private readonly options: RecordLogOptions,
  ) {
    this.allocated = size;
  }

  /**
   * Opens (or creates) a log: cuts off a torn tail, skips and removes damaged records, and upgrades a
   * legacy header in place (the framing of every version is the same).
   */
  static async open(file: string, options: RecordLogOptions): Promise<OpenedLog> {
    let fh: FileHandle;
    fh = await open(file, "a+");
    await fh.close();
    fh = await open(file, "r+");
    try {
      const data = await fh.readFile();
      const magics = [options.magic, ...(options.legacyMagics ?? [])];
      const scan = scanLog(data, magics, options.notThis);
      let size = scan.validEnd;
      if (scan.damaged.length > 0) {
        // Keep the damaged bytes beside the store, then rewrite the file without them.
        for (const d of scan.damaged) {
          appendFileSync(`${file}.damaged`, data.subarray(d.offset, d.offset + d.length));
        }
        await fh.close();
        const parts = [Buffer.from(options.magic, "latin1")];
        let offset = MAGIC_LENGTH;
        const moved: ScannedRecord[] = [];
        for (const r of scan.records) {
          parts.push(data.subarray(r.offset, r.offset + r.length));
          moved.push({ ...r, offset });
          offset += r.length;
        }
        await replaceFile(file, parts);
        fh = await open(file, "r+");
        const log = new RecordLog(file, fh, offset, options);
        return { log, records: moved, damaged: scan.damaged };
      }
      if (size === 0) {
        await fh.truncate(0);
        await fh.write(Buffer.from(options.magic, "latin1"), 0, MAGIC_LENGTH, 0);
        size = MAGIC_LENGTH;
        await fh.sync();
      } else {
        if (scan.validEnd < data.length) await fh.truncate(scan.validEnd);
        if (scan.magic !== options.magic) {
          await fh.write(Buffer.from(options.magic, "latin1"), 0, MAGIC_LENGTH, 0);
        }
        if (scan.validEnd < data.length || scan.magic !== options.magic) await fh.sync();
      }
      return { log: new RecordLog(file, fh, size, options), records: scan.records, damaged: [] };
    } catch (err) {
      await fh.close().catch(() => {});
      throw err;
    }
  }

  /** Records an entry found by `open` (in file order). */
  adopt(entry: LogEntry): void {
    this.entries.push(entry);
  }

  /**
   * Appends one framed record (indexed in `entries` under `id` when given); resolves once it is
   * written (and synced, for a synced log).
   */
  append(bytes: Buffer, id: number | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.appendThen(bytes, id, (err) => (err === undefined ? resolve() : reject(err)));
    });
  }

  /** `append` with a callback instead of a promise (the listener's hot path makes no promise). */
  appendThen(bytes: Buffer, id: number | undefined, done: AppendDone): void {
    if (this.closed) {
      done(new Error("the event store is closed"));
      return;
    }
    const p = { bytes, id, done };
    if (this.clearing) {
      this.held.push(p);
      return;
    }
    this.pending.push(p);
    if (!this.running) this.running = this.dispatch();
    else if (this.idle) this.wakeDispatch();
  }

  /** Waits until every append made so far is written. */
  async settle(): Promise<void> {
    while (this.clearing) await this.clearing;
    while (this.running) await this.running;
  }

  /** Reads the whole file as it is now (after `settle`). */
  async read(): Promise<Buffer> {
    const data = Buffer.allocUnsafe(this.size);
    await this.fh.read(data, 0, this.size, 0);
    return data;
  }

  /** Removes every record (the file keeps its header); appends made meanwhile land after it. */
  async clear(): Promise<void> {
    if (this.closed) throw new Error("the event store is closed");
    while (this.clearing) await this.clearing;
    const task = (async () => {
      while (this.running) await this.running;
      await this.fh.truncate(MAGIC_LENGTH);
      await this.fh.sync();
      this.size = MAGIC_LENGTH;
      this.allocated = MAGIC_LENGTH;
      this.entries = [];
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
    await this.settle();
    this.closeDsync();
    if (this.allocated > this.size) {
      // Cut off the zeros written ahead (after a crash, the next open does it).
      await this.fh.truncate(this.failedAt ?? this.size).catch(() => {});
    }
    await this.fh.close();
  }

  private closeDsync(): void {
    if (this.dsyncFd === undefined) return;
    try {
      closeSync(this.dsyncFd);
    } catch {
      // Already closed.
    }
    this.dsyncFd = undefined;
  }

  /** The O_DSYNC descriptor for group writes, or undefined to write and fdatasync instead. */
  private durableFd(): number | undefined {
    if (this.dsyncFd === undefined && fsConstants.O_DSYNC !== undefined) {
      try {
        this.dsyncFd = openSync(this.file, fsConstants.O_WRONLY | fsConstants.O_DSYNC);
      } catch {
        return undefined;
      }
    }
    return this.dsyncFd;
  }

  /**
   * Starts groups of appends: each group is one positional writev plus (when synced) one fdatasync.
   * Up to `depth` groups are in flight at once, because a second fdatasync issued while one is running
   * usually completes with it (the file system commits both in one journal transaction), so throughput
   * is not capped at one group per sync latency. Groups are acknowledged strictly in file order: a
   * group is resolved only once it and every group before it are on disk, so a crash can never keep a
   * later acknowledged record behind a torn earlier one.
   */
  private async dispatch(): Promise<void> {
    const depth = this.options.depth ?? 2;
    for (;;) {
      if (this.inFlight === 0 && this.failedAt !== undefined) await this.recover();
      if (this.options.prune && this.size >= this.compactRetryAt) {
        const keepFrom = this.options.prune(this);
        if (keepFrom !== undefined && keepFrom > 0) {
          // Pruning rewrites offsets, so it waits until the groups in flight are on disk.
          if (this.inFlight > 0) {
            await this.slotFreed();
            continue;
          }
          try {
            await this.compact(keepFrom);
            this.compactRetryAt = 0;
          } catch {
            // Appends go on in the current file; pruning is tried again after more growth.
            this.compactRetryAt = this.size + Math.max(4096, Math.floor(this.size / 4));
          }
        }
      }
      if (this.pending.length === 0) {
        if (this.inFlight === 0) break;
        // Woken by a group finishing, or by a new append (which may start a group beside this one).
        this.idle = true;
        await this.slotFreed();
        this.idle = false;
        continue;
      }
      if (this.inFlight >= depth || (this.extending && this.inFlight > 0)) {
        await this.slotFreed();
        continue;
      }
      await this.gather();
      this.startGroup();
    }
    this.running = undefined;
  }

  private wakeDispatch(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
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
    const buffers: Buffer[] = new Array(group.length);
    for (let i = 0; i < group.length; i++) {
      const p = group[i];
      if (p.id !== undefined) this.entries.push({ id: p.id, offset, length: p.bytes.length });
      buffers[i] = p.bytes;
      offset += p.bytes.length;
    }
    this.size = offset;
    // Past the zeros written ahead: write the next stretch of zeros in the same write. A group running
    // beside this one would land inside those zeros, so none starts until this one is done.
    let total = offset - position;
    let grows = false;
    if (offset > this.allocated) {
      const most = this.options.preallocateBytes ?? 256 * 1024;
      const ahead = most > 0 ? Math.min(most, Math.max(4096, Math.floor(offset / 4))) : 0;
      if (ahead > 0) {
        buffers.push(Buffer.alloc(ahead));
        total += ahead;
        grows = this.extending = true;
      }
      this.allocated = offset + ahead;
    }
    this.inFlight++;
    const previous = this.tail;
    const sync = this.options.sync ?? true;
    const dsync = sync ? this.durableFd() : undefined;
    // One buffer per group: a single write is cheaper than a writev of many small buffers.
    const whole = buffers.length === 1 ? buffers[0] : Buffer.concat(buffers, total);
    const durable = (async () => {
      if (this.writeInline(dsync, sync, whole, position)) {
        if (sync) this.syncCount++;
      } else {
        await this.writeAll(dsync ?? this.fh.fd, whole, position);
        if (sync) {
          if (dsync === undefined) await datasync(this.fh.fd);
          this.syncCount++;
        }
      }
      if (!(await previous)) throw new Error("an earlier write to the event store failed");
    })();
    this.tail = durable.then(
      () => true,
      () => false,
    );
    durable
      .then(
        () => {
          for (const p of group) p.done();
        },
        (err: unknown) => {
          this.failedAt = Math.min(this.failedAt ?? Number.POSITIVE_INFINITY, position);
          for (const p of group) p.done(err ?? new Error("the write failed"));
        },
      )
      .finally(() => {
        if (grows) this.extending = false;
        this.inFlight--;
        this.wakeDispatch();
      });
  }

  /**
   * Writes (and syncs) a group on the event loop, unless a recent write was slow: returns false to
   * send it to the thread pool instead. On a local disk a durable write of one group takes well under
   * a millisecond, and handing it to the thread pool (a thread woken, its completion signalled back)
   * costs more CPU than the write itself: on two cores that CPU is what limits the acknowledged
   * events per second. While the write runs, new requests wait in the sockets' buffers and join the
   * next group. A disk that turns slow (a write past `inlineSlowMs`) must not stall the loop, so the
   * next groups go to the pool, with up to `depth` of them in flight, until `poolForMs` has passed.
   * Throws the write's error (the group then fails as a pooled write would).
   */
  private writeInline(dsync: number | undefined, sync: boolean, whole: Buffer, position: number): boolean {
    const started = performance.now();
    if (this.options.writeOnLoop === false || started < this.poolUntil || (sync && dsync === undefined)) {
      this.writes.pool++;
      return false;
    }
    this.writes.inline++;
    const fd = dsync ?? this.fh.fd;
    let written = 0;
    while (written < whole.length) {
      written += writeSync(fd, whole, written, whole.length - written, position + written);
    }
    if (performance.now() - started > (this.options.inlineSlowMs ?? 10)) {
      this.poolUntil = performance.now() + (this.options.poolForMs ?? 5000);
    }
    return true;
  }

  private async writeAll(fd: number, whole: Buffer, position: number): Promise<void> {
    let written = 0;
    while (written < whole.length) {
      written += await writeAt(fd, whole, written, whole.length - written, position + written);
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
    this.allocated = at;
    this.entries = this.entries.filter((e) => e.offset < at);
    this.failedAt = undefined;
    this.tail = Promise.resolve(true);
  }

  /**
   * Waits briefly so that appends from requests still in flight join this group: an fdatasync costs
   * milliseconds, so committing 50 records with one sync instead of 5 multiplies throughput. The wait
   * ends as soon as no new append arrived during one turn of the event loop, or after `lingerMs` in all.
   */
  private async gather(): Promise<void> {
    const deadline = performance.now() + (this.options.lingerMs ?? 2);
    let seen = -1;
    while (this.pending.length !== seen && this.pending.length < 256 && performance.now() < deadline) {
      seen = this.pending.length;
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  /** Keeps the entries from `keepFrom` on (and every record after the first of them), in a new file. */
  private async compact(keepFrom: number): Promise<void> {
    const start = this.entries[keepFrom].offset;
    const tail = Buffer.allocUnsafe(this.size - start);
    await this.fh.read(tail, 0, tail.length, start);
    await replaceFile(this.file, [Buffer.from(this.options.magic, "latin1"), tail]);
    this.closeDsync();
    await this.fh.close();
    this.fh = await open(this.file, "r+");
    const shift = start - MAGIC_LENGTH;
    this.entries.splice(0, keepFrom);
    for (const e of this.entries) e.offset -= shift;
    this.size -= shift;
    this.allocated = this.size;
  }
}

// The group's write and sync go through the callback API on the file's descriptor: FileHandle's
// promise methods cost noticeably more per call, and these run for every group.
function writeAt(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fsWrite(fd, buf, offset, length, position, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fdatasync(fd, (err) => (err ? reject(err) : resolve()));
  });
}

/** Writes `parts` to a temporary file, syncs it and renames it over `file` (atomic replacement). */
async function replaceFile(file: string, parts: Buffer[]): Promise<void> {
  const tmp = `${file}.compact`;
  const out = await open(tmp, "w");
  try {
    await out.writev(parts, 0);
    await out.sync();
  } finally {
    await out.close();
  }
  await renameDurably(tmp, file);
}
