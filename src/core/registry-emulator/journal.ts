// The emulator's durable log: an append-only file of state changes, written with group commit as the
// listener's event store is. Appends made while a write is in progress are gathered and written
// together with one writev and one fdatasync, and each append's promise resolves only after the
// fdatasync that covers it, so the emulator acknowledges a change only once it is on disk. Rewriting
// a whole state file per change (what this replaces) costs a full serialisation and an fsync per
// batch, which grows with the number of commits; an append costs the size of the change.
//
// File layout: the 8-byte magic "PCREG01\n", then records of
//   [u32 LE JSON length][u32 LE blob length][u32 LE crc32 of JSON + blob][JSON][blob]
// The blob carries raw bytes (file contents of commits) so they are neither base64-inflated nor turned
// into one huge string. A torn last record (a crash during a write) fails its length or checksum test
// and is cut off when the file is opened. `rewrite` replaces the file atomically (temporary file,
// fsync, rename, directory fsync) to compact it or to migrate an older state file.

import { readFileSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { errorMessage, ProtocallError } from "../errors";
import { lockFile, renameDurably, unlockFile } from "../serve/durable-file";

export const journalMagic = Buffer.from("PCREG01\n", "latin1");
const HEADER = 12;

export interface JournalRecord {
  readonly json: unknown;
  /** Raw bytes that belong to the record (empty when absent). */
  readonly blob?: Uint8Array;
}

interface Pending {
  readonly bytes: Buffer;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

export function encodeRecord(record: JournalRecord): Buffer {
  const json = Buffer.from(JSON.stringify(record.json), "utf8");
  const blob = record.blob ?? new Uint8Array(0);
  const out = Buffer.allocUnsafe(HEADER + json.length + blob.length);
  out.writeUInt32LE(json.length, 0);
  out.writeUInt32LE(blob.length, 4);
  json.copy(out, HEADER);
  out.set(blob, HEADER + json.length);
  out.writeUInt32LE(crc32(out.subarray(HEADER)), 8);
  return out;
}

/** Reads every intact record, stopping at the first torn or corrupt one; `validEnd` is where it stopped. */
export function scanJournal(data: Buffer): { records: JournalRecord[]; validEnd: number } {
  const records: JournalRecord[] = [];
  let pos = journalMagic.length;
  while (pos + HEADER <= data.length) {
    const jsonLength = data.readUInt32LE(pos);
    const blobLength = data.readUInt32LE(pos + 4);
    const end = pos + HEADER + jsonLength + blobLength;
    if (end > data.length) break;
    if (crc32(data.subarray(pos + HEADER, end)) !== data.readUInt32LE(pos + 8)) break;
    let json: unknown;
    try {
      json = JSON.parse(data.toString("utf8", pos + HEADER, pos + HEADER + jsonLength));
    } catch {
      break;
    }
    records.push({ json, blob: data.subarray(pos + HEADER + jsonLength, end) });
    pos = end;
  }
  return { records, validEnd: pos };
}

export class Journal {
  private pending: Pending[] = [];
  private running: Promise<void> | undefined;
  private closed = false;
  /** Number of fdatasync calls so far (each covers one group of appends). */
  syncCount = 0;

  private constructor(
    readonly file: string,
    private fh: FileHandle,
    private size: number,
    /** Called when a write fails: every change not yet on disk is lost and must be undone. */
    private readonly onFailure: (err: unknown) => void,
  ) {}

  /**
   * Opens (or creates) the journal and returns its records. A torn last record is cut off. `migrate`
   * sees the file's contents first: for an older format it returns the records to rewrite the file with.
   */
  static async open(
    file: string,
    onFailure: (err: unknown) => void,
    migrate?: (data: Buffer) => JournalRecord[] | undefined,
  ): Promise<{ journal: Journal; records: JournalRecord[] }> {
    lockFile(file, {
      what: "registry state",
      holder: "another `protocall registry serve`?",
      fix: "stop it, or pass another --state",
    });
    try {
      let data: Buffer;
      try {
        data = readFileSync(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT")
          throw new ProtocallError(`cannot read registry state ${file}: ${errorMessage(err)}`);
        data = Buffer.alloc(0);
      }
      const migrated = data.length > 0 && migrate ? migrate(data) : undefined;
      if (migrated) {
        await writeAtomically(file, migrated);
        data = readFileSync(file);
      }
      if (data.length > 0 && !data.subarray(0, journalMagic.length).equals(journalMagic)) {
        if (!journalMagic.subarray(0, data.length).equals(data.subarray(0, journalMagic.length))) {
          throw new ProtocallError(
            `registry state ${file} is not a state file written by protocall: move it away or pass another --state`,
          );
        }
        data = Buffer.alloc(0); // torn while writing the magic itself
      }
      const { records, validEnd } = data.length ? scanJournal(data) : { records: [], validEnd: 0 };
      let fh: FileHandle;
      try {
        fh = await open(file, data.length === 0 ? "w+" : "r+");
      } catch (err) {
        throw new ProtocallError(`cannot open registry state ${file}: ${errorMessage(err)}`);
      }
      let size = validEnd;
      if (size === 0) {
        await fh.truncate(0);
        await fh.write(journalMagic, 0, journalMagic.length, 0);
        size = journalMagic.length;
        await fh.sync();
      } else if (validEnd < data.length) {
        await fh.truncate(validEnd);
        await fh.sync();
      }
      return { journal: new Journal(file, fh, size, onFailure), records };
    } catch (err) {
      unlockFile(file);
      throw err;
    }
  }

  /** Appends records; resolves once they (and every earlier append) are on disk. */
  append(records: readonly JournalRecord[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the registry state is closed"));
    if (records.length === 0) return this.barrier();
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ bytes: Buffer.concat(records.map(encodeRecord)), resolve, reject });
      if (!this.running) this.running = this.dispatch();
    });
  }

  /** Resolves once every append made so far is on disk; rejects if one of them failed. */
  barrier(): Promise<void> {
    if (this.pending.length === 0 && !this.running) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ bytes: Buffer.alloc(0), resolve, reject });
      if (!this.running) this.running = this.dispatch();
    });
  }

  /** Current file size in bytes. */
  byteSize(): number {
    return this.size;
  }

  /** Replaces the whole file with `records` (compaction), atomically; waits for pending appends first. */
  async rewrite(records: readonly JournalRecord[]): Promise<void> {
    while (this.running) await this.running;
    await writeAtomically(this.file, records);
    await this.fh.close();
    this.fh = await open(this.file, "r+");
    this.size = (await this.fh.stat()).size;
  }

  /** Waits for pending appends, then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.running) await this.running;
    await this.fh.close();
    unlockFile(this.file);
  }

  /** Writes groups one after another until nothing is pending; each group is one writev and one sync. */
  private async dispatch(): Promise<void> {
    while (this.pending.length > 0) {
      // One turn of the event loop lets appends of requests being handled right now join this group.
      await new Promise<void>((r) => setImmediate(r));
      const group = this.pending;
      this.pending = [];
      const position = this.size;
      const buffers = group.map((p) => p.bytes).filter((b) => b.length > 0);
      try {
        if (buffers.length > 0) {
          await writeAll(this.fh, buffers, position);
          this.size = position + buffers.reduce((n, b) => n + b.length, 0);
          await this.fh.datasync();
          this.syncCount++;
        }
        for (const p of group) p.resolve();
      } catch (err) {
        // Nothing of this group, nor of what came after it, is acknowledged: cut the file back and let
        // the owner undo the changes in memory.
        const later = this.pending;
        this.pending = [];
        try {
          await this.fh.truncate(position);
        } catch {
          // The next write fails again and reports it.
        }
        this.size = position;
        this.onFailure(err);
        const failure = new Error(`cannot write the registry state ${this.file}: ${errorMessage(err)}`);
        for (const p of [...group, ...later]) p.reject(failure);
      }
    }
    this.running = undefined;
  }
}

async function writeAll(fh: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  const total = buffers.reduce((n, b) => n + b.length, 0);
  let written = 0;
  while (written < total) {
    let skip = written;
    const rest: Buffer[] = [];
    for (const b of buffers) {
      if (skip >= b.length) {
        skip -= b.length;
        continue;
      }
      rest.push(skip ? b.subarray(skip) : b);
      skip = 0;
    }
    const { bytesWritten } = await fh.writev(rest, position + written);
    written += bytesWritten;
  }
}

/** Writes a complete journal to `file` through a temporary file; a crash leaves the old or the new one. */
async function writeAtomically(file: string, records: readonly JournalRecord[]): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  const out = await open(tmp, "w");
  try {
    await writeAll(out, [journalMagic, ...records.map(encodeRecord)], 0);
    await out.sync();
  } finally {
    await out.close();
  }
  await renameDurably(tmp, file);
}
