// Checks that bytes are a well-formed binary encoding of a message type without decoding them. The
// listener validates every event it stores; decoding (fromBinary) builds the whole message tree, and on
// the listener's hot path that allocation cost several times what walking the bytes costs. So the
// hot path walks them, and decodes only what this check cannot vouch for.
//
// The check is conservative: when it says yes, fromBinary succeeds on the same bytes (the tests
// fuzz this). It says no to anything it does not model exactly (a known field with another wire type,
// a value running past its enclosing message, deep nesting), and the caller then decodes with
// fromBinary, which either succeeds after all or gives the error to answer with.
import { isUtf8 } from "node:buffer";
import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";

const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const GROUP_START = 3;
const GROUP_END = 4;
const FIXED32 = 5;
const MAX_DEPTH = 64;

/** What a field's value must look like on the wire. */
interface Expect {
  readonly wire: number;
  /** For a packable repeated field: the wire type of each element inside a packed (LENGTH) value. */
  readonly packed?: number;
  readonly utf8?: boolean;
  readonly message?: DescMessage;
  readonly map?: { readonly key: Expect; readonly value: Expect };
}

const plans = new WeakMap<DescMessage, Map<number, Expect>>();

function scalarExpect(scalar: ScalarType, utf8: boolean): Expect {
  switch (scalar) {
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return { wire: FIXED64 };
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return { wire: FIXED32 };
    case ScalarType.STRING:
      return { wire: LENGTH, utf8 };
    case ScalarType.BYTES:
      return { wire: LENGTH };
    default:
      return { wire: VARINT };
  }
}

function fieldExpect(field: DescField): Expect {
  switch (field.fieldKind) {
    case "scalar":
      return scalarExpect(field.scalar, field.utf8Validation);
    case "enum":
      return { wire: VARINT };
    case "message":
      return { wire: field.delimitedEncoding ? GROUP_START : LENGTH, message: field.message };
    case "list": {
      if (field.listKind === "message") {
        return { wire: field.delimitedEncoding ? GROUP_START : LENGTH, message: field.message };
      }
      const element =
        field.listKind === "enum" ? { wire: VARINT } : scalarExpect(field.scalar, field.utf8Validation);
      return element.wire === LENGTH ? element : { ...element, packed: element.wire };
    }
    case "map": {
      const value =
        field.mapKind === "message"
          ? { wire: LENGTH, message: field.message }
          : field.mapKind === "enum"
            ? { wire: VARINT }
            : scalarExpect(field.scalar, field.utf8Validation);
      return { wire: LENGTH, map: { key: scalarExpect(field.mapKey, field.utf8Validation), value } };
    }
  }
}

function plan(desc: DescMessage): Map<number, Expect> {
  let p = plans.get(desc);
  if (!p) {
    p = new Map(desc.fields.map((f) => [f.number, fieldExpect(f)]));
    plans.set(desc, p);
  }
  return p;
}

/** Set by readVarint: the value read (exact up to 2^53; only lengths and tags use it). */
let value = 0;

/** Reads a varint at `pos` (at most 10 bytes, within `end`); returns the position after it, or -1. */
function readVarint(buf: Uint8Array, pos: number, end: number): number {
  let result = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) return -1;
    const b = buf[pos++];
    result += (b & 0x7f) * scale;
    if (b < 0x80) {
      value = result;
      return pos;
    }
    scale *= 128;
  }
  return -1;
}

/**
 * Whether the bytes from `pos` to `end` are all ASCII (so valid UTF-8). Most strings in an event are
 * short ASCII names and ids: checking them here saves a Buffer view and a native call for each one.
 */
function isAscii(buf: Uint8Array, pos: number, end: number): boolean {
  for (let i = pos; i < end; i++) if (buf[i] > 0x7f) return false;
  return true;
}

/** Whether `bytes` are a well-formed `desc` (true means fromBinary succeeds on them). */
export function isWellFormed(desc: DescMessage, bytes: Uint8Array): boolean {
  return checkMessage(desc, bytes, 0, bytes.length, 0, 0) === bytes.length;
}

/**
 * Checks the fields from `pos` to `end` (or, for a group, up to its end tag with `groupField`);
 * returns the position after them, or -1.
 */
function checkMessage(
  desc: DescMessage,
  buf: Uint8Array,
  pos: number,
  end: number,
  depth: number,
  groupField: number,
): number {
  if (depth > MAX_DEPTH) return -1;
  const fields = plan(desc);
  while (pos < end) {
    const tagStart = pos;
    pos = readVarint(buf, pos, end);
    if (pos < 0 || pos - tagStart > 5 || value > 0xffffffff) return -1;
    const fieldNo = Math.floor(value / 8);
    const wire = value % 8;
    if (fieldNo <= 0 || wire > 5) return -1;
    if (wire === GROUP_END) return groupField === fieldNo ? pos : -1;
    const expect = fields.get(fieldNo);
    if (expect === undefined) {
      pos = skip(buf, pos, end, wire, fieldNo, depth);
    } else if (wire === expect.wire) {
      pos = checkValue(expect, buf, pos, end, depth, fieldNo);
    } else if (expect.packed !== undefined && wire === LENGTH) {
      pos = checkPacked(expect.packed, buf, pos, end);
    } else {
      return -1; // another wire type than declared: leave it to fromBinary
    }
    if (pos < 0) return -1;
  }
  return groupField === 0 && pos === end ? pos : -1;
}

function checkValue(
  expect: Expect,
  buf: Uint8Array,
  pos: number,
  end: number,
  depth: number,
  fieldNo: number,
): number {
  switch (expect.wire) {
    case VARINT:
      return readVarint(buf, pos, end);
    case FIXED64:
      return pos + 8 <= end ? pos + 8 : -1;
    case FIXED32:
      return pos + 4 <= end ? pos + 4 : -1;
    case GROUP_START:
      return checkMessage(expect.message!, buf, pos, end, depth + 1, fieldNo);
    default: {
      pos = readVarint(buf, pos, end);
      if (pos < 0 || value > end - pos) return -1;
      const stop = pos + value;
      if (expect.message)
        return checkMessage(expect.message, buf, pos, stop, depth + 1, 0) === stop ? stop : -1;
      if (expect.map) return checkEntry(expect.map.key, expect.map.value, buf, pos, stop, depth) ? stop : -1;
      if (expect.utf8 && !isAscii(buf, pos, stop) && !isUtf8(buf.subarray(pos, stop))) return -1;
      return stop;
    }
  }
}

/** A map entry: key in field 1, value in field 2, each with its declared wire type. */
function checkEntry(
  key: Expect,
  val: Expect,
  buf: Uint8Array,
  pos: number,
  end: number,
  depth: number,
): boolean {
  while (pos < end) {
    const tagStart = pos;
    pos = readVarint(buf, pos, end);
    if (pos < 0 || pos - tagStart > 5 || value > 0xffffffff) return false;
    const fieldNo = Math.floor(value / 8);
    const wire = value % 8;
    if (fieldNo <= 0 || wire > 5) return false;
    const expect = fieldNo === 1 ? key : fieldNo === 2 ? val : undefined;
    if (expect === undefined) pos = skip(buf, pos, end, wire, fieldNo, depth);
    else if (wire === expect.wire) pos = checkValue(expect, buf, pos, end, depth + 1, fieldNo);
    else return false;
    if (pos < 0) return false;
  }
  return pos === end;
}

function checkPacked(element: number, buf: Uint8Array, pos: number, end: number): number {
  pos = readVarint(buf, pos, end);
  if (pos < 0 || value > end - pos) return -1;
  const stop = pos + value;
  if (element === FIXED64) return value % 8 === 0 ? stop : -1;
  if (element === FIXED32) return value % 4 === 0 ? stop : -1;
  while (pos < stop) {
    pos = readVarint(buf, pos, stop);
    if (pos < 0) return -1;
  }
  return stop;
}

/** Skips an unknown field's value; returns the position after it, or -1. */
function skip(
  buf: Uint8Array,
  pos: number,
  end: number,
  wire: number,
  fieldNo: number,
  depth: number,
): number {
  switch (wire) {
    case VARINT:
      return readVarint(buf, pos, end);
    case FIXED64:
      return pos + 8 <= end ? pos + 8 : -1;
    case FIXED32:
      return pos + 4 <= end ? pos + 4 : -1;
    case LENGTH:
      pos = readVarint(buf, pos, end);
      return pos >= 0 && value <= end - pos ? pos + value : -1;
    case GROUP_START: {
      if (depth > MAX_DEPTH) return -1;
      while (pos < end) {
        const tagStart = pos;
        pos = readVarint(buf, pos, end);
        if (pos < 0 || pos - tagStart > 5 || value > 0xffffffff) return -1;
        const no = Math.floor(value / 8);
        const w = value % 8;
        if (no <= 0 || w > 5) return -1;
        if (w === GROUP_END) return no === fieldNo ? pos : -1;
        pos = skip(buf, pos, end, w, no, depth + 1);
        if (pos < 0) return -1;
      }
      return -1;
    }
    default:
      return -1;
  }
}
