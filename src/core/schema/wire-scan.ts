// Reads just enough of the Protobuf wire format of a descriptor set to index it without decoding it:
// each file's name, package, imports and declared symbols, and where its source_code_info lies (so it
// can be skipped by its length and sliced out before decoding).
//
// Hand-written on purpose: decoding a large set with fromBinary + createFileRegistry costs seconds and
// a gigabyte (google-proto-files: 83 MB, 7,200 files), while this scan touches each byte at most once
// and allocates only the names it returns.

/** A failure of the wire format, with the absolute offset where it was found. */
export class WireError extends Error {
  override readonly name = "WireError";
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/**
 * A read-only view of the input that keeps only a window of it in memory. Over bytes already in
 * memory the window is the whole input; over a file it is refilled with positioned reads.
 */
export interface ByteWindow {
  /** Total size of the input in bytes. */
  readonly size: number;
  /** The current window; valid from index 0 to `end - start`. A Buffer, for fast string decoding. */
  buf: Buffer;
  /** Absolute offset of `buf[0]`. */
  start: number;
  /** Absolute offset just past the last valid byte of `buf`. */
  end: number;
  /** Makes `[pos, pos + n)` available in `buf` (clipped to the input size). */
  ensure(pos: number, n: number): void;
}

/** A window over bytes that are all in memory. */
export function memoryWindow(bytes: Uint8Array): ByteWindow {
  return {
    size: bytes.length,
    buf: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
    start: 0,
    end: bytes.length,
    ensure() {},
  };
}

/**
 * A window over a file read with positioned reads (`readAt(buffer, length, position)` returns the
 * number of bytes read). Reads `chunk` bytes ahead so a sequential scan takes few calls, and never
 * keeps more than the largest single field in memory.
 */
export function fileWindow(
  size: number,
  readAt: (target: Uint8Array, length: number, position: number) => number,
  chunk = 256 * 1024,
): ByteWindow {
  const w: ByteWindow = {
    size,
    buf: Buffer.alloc(0),
    start: 0,
    end: 0,
    ensure(pos: number, n: number) {
      if (pos >= w.start && pos + n <= w.end) return;
      const want = Math.min(Math.max(n, chunk), size - pos);
      if (want <= 0) {
        w.start = w.end = pos;
        return;
      }
      if (w.buf.length < want) w.buf = Buffer.allocUnsafe(Math.max(want, chunk));
      let got = 0;
      while (got < want) {
        const r = readAt(w.buf.subarray(got), want - got, pos + got);
        if (r <= 0) break;
        got += r;
      }
      w.start = pos;
      w.end = pos + got;
    },
  };
  return w;
}

// ---------------------------------------------------------------------------------------------------
// Primitive readers over a buffer (relative offsets). They return the value and advance `cur.pos`.

interface Cursor {
  buf: Buffer;
  pos: number;
  /** Relative end of the region being read. */
  end: number;
  /** Absolute offset of `buf[0]`, for error messages. */
  base: number;
}

function truncated(cur: Cursor): WireError {
  return new WireError("the data ends in the middle of a field (truncated?)", cur.base + cur.pos);
}

/** Reads a varint as a non-negative number (exact up to 2^53). */
function varint(cur: Cursor): number {
  const { buf, end } = cur;
  let pos = cur.pos;
  let result = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw truncated(cur);
    const b = buf[pos++];
    result += (b & 0x7f) * mul;
    if (b < 0x80) {
      cur.pos = pos;
      return result;
    }
    mul *= 128;
  }
  throw new WireError("a varint is longer than 10 bytes", cur.base + cur.pos);
}

/** Reads a length prefix and checks that the payload fits in the region. */
function lengthPrefix(cur: Cursor): number {
  const at = cur.pos;
  const len = varint(cur);
  if (len > cur.end - cur.pos) {
    throw new WireError(
      `a length of ${len} bytes runs past the end of its message (truncated?)`,
      cur.base + at,
    );
  }
  return len;
}

/** Skips the value of a field with the given wire type (group-aware). */
function skipValue(cur: Cursor, wireType: number, fieldNo: number, depth = 0): void {
  switch (wireType) {
    case 0:
      varint(cur);
      return;
    case 1:
      if (cur.end - cur.pos < 8) throw truncated(cur);
      cur.pos += 8;
      return;
    case 2: {
      const len = lengthPrefix(cur);
      cur.pos += len;
      return;
    }
    case 5:
      if (cur.end - cur.pos < 4) throw truncated(cur);
      cur.pos += 4;
      return;
    case 3: {
      if (depth > 64) throw new WireError("groups are nested too deeply", cur.base + cur.pos);
      for (;;) {
        const at = cur.pos;
        const tag = varint(cur);
        const wt = tag & 7;
        const no = Math.floor(tag / 8);
        if (no === 0) throw new WireError("a field has number 0", cur.base + at);
        if (wt === 4) {
          if (no !== fieldNo) throw new WireError("a group ends with the wrong field number", cur.base + at);
          return;
        }
        skipValue(cur, wt, no, depth + 1);
      }
    }
    default:
      throw new WireError(`invalid wire type ${wireType}`, cur.base + cur.pos);
  }
}

/** Reads a tag; returns field number * 8 + wire type, validating both. */
function tag(cur: Cursor): number {
  const at = cur.pos;
  const t = varint(cur);
  if (t < 8) throw new WireError("a field has number 0", cur.base + at);
  if (t > 0xffffffff) throw new WireError("a field number is out of range", cur.base + at);
  const wt = t & 7;
  if (wt > 5 || wt === 4) throw new WireError(`invalid wire type ${wt}`, cur.base + at);
  return t;
}

/**
 * Buffer's own UTF-8 slicer, which Buffer#toString calls after checking its arguments: called directly
 * it is markedly cheaper for the many short names a scan reads (bounds are checked by the caller).
 */
const utf8Slice: (this: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as { utf8Slice?: unknown }).utf8Slice === "function"
    ? (Buffer.prototype as unknown as { utf8Slice: (this: Buffer, start: number, end: number) => string })
        .utf8Slice
    : function (this: Buffer, start: number, end: number) {
        return this.toString("utf8", start, end);
      };

/** Decodes a string field. */
function str(cur: Cursor, len: number): string {
  const s = cur.pos;
  cur.pos = s + len;
  return utf8Slice.call(cur.buf, s, s + len);
}

// ---------------------------------------------------------------------------------------------------
// Top level: the entries of a FileDescriptorSet / buf image / CodeGeneratorRequest.

/** A length-delimited top-level field of the input. */
export interface TopLevelEntry {
  /** Field number: 1 (set: file; plugin request: file_to_generate), 15 (proto_file), 17 (source_file_descriptors), … */
  readonly field: number;
  /** Absolute offset of the payload. */
  readonly offset: number;
  readonly length: number;
  /** The payload scanned as a FileDescriptorProto (fields 1, 15 and 17), or why it is not one. */
  readonly file?: ScannedFile;
  readonly error?: WireError;
}

/**
 * Walks the top level of the input in one pass. Every length-delimited field numbered 1, 15 or 17 is
 * scanned as a FileDescriptorProto on the spot (while its bytes are in the window); a failure is
 * recorded on the entry, because in a plugin request field 1 holds file names, not files. Other
 * fields are validated and skipped without reading their payloads. `details` as for `scanFile`.
 */
export function scanTopLevel(w: ByteWindow, details = false): TopLevelEntry[] {
  const out: TopLevelEntry[] = [];
  let pos = 0;
  const cur: Cursor = { buf: w.buf, pos: 0, end: 0, base: 0 };
  while (pos < w.size) {
    w.ensure(pos, 64);
    at(cur, w, pos, w.end);
    const t = tag(cur);
    const wt = t & 7;
    const no = t >>> 3;
    if (wt !== 2) {
      skipValue(cur, wt, no);
      pos = cur.base + cur.pos;
      continue;
    }
    const lenAt = cur.base + cur.pos;
    const len = varint(cur);
    const offset = cur.base + cur.pos;
    if (len > w.size - offset) {
      throw new WireError(`a length of ${len} bytes runs past the end of the data (truncated?)`, lenAt);
    }
    pos = offset + len;
    if (no === 1 || no === 15 || no === 17) {
      try {
        out.push({ field: no, offset, length: len, file: scanFile(w, offset, len, details) });
      } catch (err) {
        if (!(err instanceof WireError)) throw err;
        out.push({ field: no, offset, length: len, error: err });
      }
    } else {
      out.push({ field: no, offset, length: len });
    }
  }
  return out;
}

/** Points `cur` at absolute `pos` in the window, bounded by absolute `end` and the window. */
function at(cur: Cursor, w: ByteWindow, pos: number, end: number): void {
  cur.buf = w.buf;
  cur.base = w.start;
  cur.pos = pos - w.start;
  cur.end = Math.min(end, w.end) - w.start;
}

// ---------------------------------------------------------------------------------------------------
// One FileDescriptorProto.

/** A service with its methods, as declared in a file. */
export interface ScannedService {
  /** Fully qualified name, without a leading dot. */
  readonly name: string;
  /** Simple names of its methods, in declaration order; filled with the file's details. */
  readonly methods: string[];
}

/** An extension declared in a file (at top level or nested in a message). */
export interface ScannedExtension {
  /** Fully qualified name of the extension. */
  readonly name: string;
  /** Fully qualified name of the extended message, without a leading dot. */
  readonly extendee: string;
  readonly number: number;
}

/**
 * What the scan learns about one file, without decoding it. The first pass keeps this small (most
 * files of a large set are never looked at): name, package, service names and where the file and
 * its source info are. Imports, methods, messages, enums and extensions come from `scanDetails`.
 */
export interface ScannedFile {
  readonly name: string;
  readonly package: string;
  /** Services are always scanned (listing them is the most common question). */
  services: ScannedService[];
  /** Whether `dependencies`, `types` and `extensions` are filled (see `scanDetails`). */
  hasDetails: boolean;
  dependencies: string[];
  /** Fully qualified names of all messages (nested included) and enums. */
  types: string[];
  extensions: ScannedExtension[];
  /** Absolute offset and length of the FileDescriptorProto in the input. */
  readonly offset: number;
  readonly length: number;
  /**
   * Absolute [start, end) byte ranges of source_code_info fields (tag included), flattened:
   * `[start0, end0, start1, end1, …]`; empty when the file has none.
   */
  sourceInfo: number[];
}

const EMPTY: never[] = [];

// FileDescriptorProto field numbers.
const FILE_NAME = 1;
const FILE_PACKAGE = 2;
const FILE_DEPENDENCY = 3;
const FILE_MESSAGE_TYPE = 4;
const FILE_SERVICE = 6;
const FILE_EXTENSION = 7;
const FILE_SOURCE_CODE_INFO = 9;

/**
 * Scans one FileDescriptorProto at `[offset, offset + length)`: reads its name, package and services,
 * skips source info by its length, and with `details` also reads its imports, messages, enums and
 * extensions. Throws WireError on malformed data.
 */
export function scanFile(w: ByteWindow, offset: number, length: number, details = false): ScannedFile {
  const fileEnd = offset + length;
  const file: ScannedFile = {
    name: "",
    package: "",
    services: EMPTY,
    hasDetails: details,
    dependencies: EMPTY,
    types: EMPTY,
    extensions: EMPTY,
    offset,
    length,
    sourceInfo: EMPTY,
  };
  let hasName = false;
  // Symbols are named relative to the package. Compilers write the package (field 2) before the
  // symbols (fields 4-7); in any other order the symbols scanned so far are scanned again.
  let seenSymbols = false;
  let deferred: number[] | undefined;
  let pos = offset;
  const cur: Cursor = { buf: w.buf, pos: 0, end: 0, base: 0 };
  while (pos < fileEnd) {
    w.ensure(pos, Math.min(64, fileEnd - pos));
    at(cur, w, pos, fileEnd);
    const fieldStart = pos;
    const t = tag(cur);
    const wt = t & 7;
    const no = t >>> 3;
    if (wt !== 2) {
      // Only length-delimited fields matter here; others (e.g. unknown varints) are skipped.
      skipValue(cur, wt, no);
      pos = cur.base + cur.pos;
      continue;
    }
    const lenAt = cur.base + cur.pos;
    const len = varint(cur);
    const payload = cur.base + cur.pos;
    if (len > fileEnd - payload) {
      throw new WireError(`a length of ${len} bytes runs past the end of its file (truncated?)`, lenAt);
    }
    pos = payload + len;
    if (no === FILE_SOURCE_CODE_INFO) {
      // Exact-size arrays: one per file of a large set, and almost always one range.
      file.sourceInfo = file.sourceInfo === EMPTY ? [fieldStart, pos] : [...file.sourceInfo, fieldStart, pos];
      continue;
    }
    if (no < FILE_NAME || no > FILE_EXTENSION) continue; // options, syntax, edition, unknown fields (e.g. 8042)
    if (!details && (no === FILE_DEPENDENCY || (no >= FILE_MESSAGE_TYPE && no !== FILE_SERVICE))) continue;
    if (no >= FILE_MESSAGE_TYPE) {
      if (deferred) {
        deferred.push(no, payload, len);
      } else {
        seenSymbols = true;
        w.ensure(payload, len);
        at(cur, w, payload, payload + len);
        scanSymbol(cur, no, file);
      }
      continue;
    }
    w.ensure(payload, len);
    at(cur, w, payload, payload + len);
    if (cur.end - cur.pos < len) throw truncated(cur);
    const s = str(cur, len);
    if (no === FILE_NAME) {
      (file as { name: string }).name = s;
      hasName = true;
    } else if (no === FILE_PACKAGE) {
      if (seenSymbols && s !== file.package) {
        // The package came after some symbols: scan those again once the loop is done.
        file.types = EMPTY;
        file.extensions = EMPTY;
        file.services = EMPTY;
        deferred = [];
        symbolFieldsIn(w, offset, fieldStart, deferred, details);
      }
      (file as { package: string }).package = s;
    } else {
      if (file.dependencies === EMPTY) file.dependencies = [];
      file.dependencies.push(s);
    }
  }
  if (!hasName || file.name === "") {
    throw new WireError("a file has no name (is this a descriptor set?)", offset);
  }
  if (deferred) {
    for (let i = 0; i < deferred.length; i += 3) {
      w.ensure(deferred[i + 1], deferred[i + 2]);
      at(cur, w, deferred[i + 1], deferred[i + 1] + deferred[i + 2]);
      scanSymbol(cur, deferred[i], file);
    }
  }
  return file;
}

/** Fills a file's imports, messages, enums and extensions, if not done yet. Throws WireError. */
export function scanDetails(w: ByteWindow, file: ScannedFile): void {
  if (file.hasDetails) return;
  const full = scanFile(w, file.offset, file.length, true);
  file.dependencies = full.dependencies;
  file.types = full.types;
  file.extensions = full.extensions;
  file.services = full.services;
  file.hasDetails = true;
}

/**
 * The extensions a file declares, at top level or nested in messages, without the rest of its
 * details: walks its messages but decodes only the names it needs (a message's name only when an
 * extension is nested in it). Finding an extension by number needs every file's extensions, and
 * this is much cheaper than every file's details. Throws WireError.
 */
export function scanExtensions(w: ByteWindow, file: ScannedFile): ScannedExtension[] {
  if (file.hasDetails) return file.extensions;
  const found: ScannedExtension[] = [];
  const fileEnd = file.offset + file.length;
  const prefix = file.package === "" ? "" : file.package + ".";
  const cur: Cursor = { buf: w.buf, pos: 0, end: 0, base: 0 };
  let pos = file.offset;
  while (pos < fileEnd) {
    w.ensure(pos, Math.min(64, fileEnd - pos));
    at(cur, w, pos, fileEnd);
    const t = tag(cur);
    if ((t & 7) !== 2) {
      skipValue(cur, t & 7, t >>> 3);
      pos = cur.base + cur.pos;
      continue;
    }
    const len = varint(cur);
    const payload = cur.base + cur.pos;
    if (len > fileEnd - payload) {
      throw new WireError(`a length of ${len} bytes runs past the end of its file (truncated?)`, payload);
    }
    pos = payload + len;
    const no = t >>> 3;
    if (no !== FILE_MESSAGE_TYPE && no !== FILE_EXTENSION) continue;
    w.ensure(payload, len);
    at(cur, w, payload, payload + len);
    if (no === FILE_EXTENSION) found.push(scanExtension(cur, prefix));
    else messageExtensions(cur, prefix, found, 0);
  }
  return found;
}

/**
 * The extensions nested in a message. `scope` is the enclosing name with a trailing dot, or a
 * function that makes it (names are only decoded when an extension needs them).
 */
function messageExtensions(
  cur: Cursor,
  scope: string | (() => string),
  out: ScannedExtension[],
  depth: number,
): void {
  if (depth > 100) throw new WireError("messages are nested too deeply", cur.base + cur.pos);
  const end = cur.end;
  const buf = cur.buf;
  let nameAt = -1;
  let nameLen = 0;
  let inner: string | undefined;
  let innerScope: (() => string) | undefined;
  const scopeOf = (): (() => string) =>
    (innerScope ??= () =>
      (inner ??=
        (typeof scope === "string" ? scope : scope()) +
        (nameAt < 0 ? "" : utf8Slice.call(buf, nameAt, nameAt + nameLen)) +
        "."));
  // Nested declarations met before the name (never written so by compilers): read at the end.
  let deferred: number[] | undefined;
  while (cur.pos < end) {
    const t = tag(cur);
    if ((t & 7) !== 2) {
      skipValue(cur, t & 7, t >>> 3);
      continue;
    }
    const len = lengthPrefix(cur);
    const no = t >>> 3;
    if (no === 1) {
      nameAt = cur.pos;
      nameLen = len;
    } else if (no === 3 || no === 6) {
      (deferred ??= []).push(no, cur.pos, len);
    }
    cur.pos += len;
  }
  if (deferred) {
    for (let i = 0; i < deferred.length; i += 3) {
      cur.pos = deferred[i + 1];
      cur.end = cur.pos + deferred[i + 2];
      if (deferred[i] === 6) out.push(scanExtension(cur, scopeOf()()));
      else messageExtensions(cur, scopeOf(), out, depth + 1);
    }
  }
  cur.pos = end;
  cur.end = end;
}

/** Collects (field, offset, length) of the symbol fields in `[offset, end)` (services only unless `all`). */
function symbolFieldsIn(w: ByteWindow, offset: number, end: number, into: number[], all: boolean): void {
  const cur: Cursor = { buf: w.buf, pos: 0, end: 0, base: 0 };
  let pos = offset;
  while (pos < end) {
    w.ensure(pos, Math.min(64, end - pos));
    at(cur, w, pos, end);
    const t = tag(cur);
    if ((t & 7) !== 2) {
      skipValue(cur, t & 7, t >>> 3);
      pos = cur.base + cur.pos;
      continue;
    }
    const len = varint(cur);
    const payload = cur.base + cur.pos;
    const no = t >>> 3;
    if (no >= FILE_MESSAGE_TYPE && no <= FILE_EXTENSION && (all || no === FILE_SERVICE)) {
      into.push(no, payload, len);
    }
    pos = payload + len;
  }
}

function scanSymbol(cur: Cursor, field: number, file: ScannedFile): void {
  const prefix = file.package === "" ? "" : file.package + ".";
  if (field === FILE_SERVICE) {
    if (file.services === EMPTY) file.services = [];
    file.services.push(scanService(cur, prefix, file.hasDetails));
    return;
  }
  if (file.types === EMPTY) file.types = [];
  if (file.extensions === EMPTY) file.extensions = [];
  if (field === FILE_MESSAGE_TYPE) scanMessage(cur, prefix, file.types, file.extensions, 0);
  else if (field === FILE_EXTENSION) file.extensions.push(scanExtension(cur, prefix));
  else file.types.push(prefix + scanName(cur)); // FILE_ENUM_TYPE (5)
}

/** Reads field 1 (name) of a message in `[cur.pos, cur.end)`; other fields are skipped. */
function scanName(cur: Cursor): string {
  let name = "";
  while (cur.pos < cur.end) {
    const t = tag(cur);
    if (t === 0x0a) {
      name = str(cur, lengthPrefix(cur));
    } else {
      skipValue(cur, t & 7, t >>> 3);
    }
  }
  return name;
}

// DescriptorProto: name 1, field 2, nested_type 3, enum_type 4, extension 6.
function scanMessage(
  cur: Cursor,
  prefix: string,
  types: string[],
  extensions: ScannedExtension[],
  depth: number,
): void {
  if (depth > 100) throw new WireError("messages are nested too deeply", cur.base + cur.pos);
  const end = cur.end;
  let inner: string | undefined;
  // Nested declarations met before the name (never written so by compilers): read at the end.
  let deferred: number[] | undefined;
  while (cur.pos < end) {
    const t = tag(cur);
    if ((t & 7) !== 2) {
      skipValue(cur, t & 7, t >>> 3);
      continue;
    }
    const len = lengthPrefix(cur);
    const no = t >>> 3;
    if (no === 1) {
      const fullName = prefix + str(cur, len);
      types.push(fullName);
      inner = fullName + ".";
      continue;
    }
    if (no !== 3 && no !== 4 && no !== 6) {
      cur.pos += len;
      continue;
    }
    if (inner === undefined) {
      (deferred ??= []).push(no, cur.pos, len);
      cur.pos += len;
      continue;
    }
    const next = cur.pos + len;
    cur.end = next;
    scanNested(cur, no, inner, types, extensions, depth);
    cur.pos = next;
    cur.end = end;
  }
  if (deferred) {
    inner ??= prefix;
    for (let i = 0; i < deferred.length; i += 3) {
      cur.pos = deferred[i + 1];
      cur.end = cur.pos + deferred[i + 2];
      scanNested(cur, deferred[i], inner, types, extensions, depth);
    }
  }
  cur.pos = end;
  cur.end = end;
}

function scanNested(
  cur: Cursor,
  field: number,
  inner: string,
  types: string[],
  extensions: ScannedExtension[],
  depth: number,
): void {
  if (field === 3) scanMessage(cur, inner, types, extensions, depth + 1);
  else if (field === 4) types.push(inner + scanName(cur));
  else extensions.push(scanExtension(cur, inner));
}

// ServiceDescriptorProto: name 1, method 2 (MethodDescriptorProto: name 1).
function scanService(cur: Cursor, prefix: string, withMethods: boolean): ScannedService {
  let name = "";
  const methods: string[] = withMethods ? [] : EMPTY;
  const end = cur.end;
  while (cur.pos < end) {
    const t = tag(cur);
    if (t === 0x0a) {
      name = str(cur, lengthPrefix(cur));
    } else if (t === 0x12 && withMethods) {
      const len = lengthPrefix(cur);
      const next = cur.pos + len;
      cur.end = next;
      methods.push(scanName(cur));
      cur.pos = next;
      cur.end = end;
    } else {
      skipValue(cur, t & 7, t >>> 3);
    }
  }
  return { name: prefix + name, methods };
}

// FieldDescriptorProto: name 1, extendee 2, number 3.
function scanExtension(cur: Cursor, prefix: string): ScannedExtension {
  let name = "";
  let extendee = "";
  let number = 0;
  while (cur.pos < cur.end) {
    const t = tag(cur);
    if (t === 0x0a) name = str(cur, lengthPrefix(cur));
    else if (t === 0x12) extendee = str(cur, lengthPrefix(cur));
    else if (t === 0x18) number = varint(cur);
    else skipValue(cur, t & 7, t >>> 3);
  }
  if (extendee.startsWith(".")) extendee = extendee.slice(1);
  return { name: prefix + name, extendee, number };
}

/**
 * Copies the bytes of a scanned file without its source info, ready for fromBinary. Over a file
 * window this reads only the ranges it keeps.
 */
export function fileBytesWithoutSourceInfo(
  w: ByteWindow,
  file: Pick<ScannedFile, "offset" | "length" | "sourceInfo">,
): Uint8Array {
  const keep: [number, number][] = [];
  let at = file.offset;
  for (let i = 0; i < file.sourceInfo.length; i += 2) {
    const s = file.sourceInfo[i];
    if (s > at) keep.push([at, s]);
    at = file.sourceInfo[i + 1];
  }
  const fileEnd = file.offset + file.length;
  if (fileEnd > at) keep.push([at, fileEnd]);
  let total = 0;
  for (const [s, e] of keep) total += e - s;
  const out = new Uint8Array(total);
  let o = 0;
  for (const [s, e] of keep) o = copyRange(w, s, e, out, o);
  return out;
}

/** Copies all bytes of a scanned file, source info included. */
export function fileBytes(w: ByteWindow, file: Pick<ScannedFile, "offset" | "length">): Uint8Array {
  const out = new Uint8Array(file.length);
  copyRange(w, file.offset, file.offset + file.length, out, 0);
  return out;
}

function copyRange(w: ByteWindow, s: number, e: number, out: Uint8Array, o: number): number {
  w.ensure(s, e - s);
  if (w.end < e) throw new WireError("the data ends early (was the file changed while open?)", w.end);
  out.set(w.buf.subarray(s - w.start, e - w.start), o);
  return o + (e - s);
}
