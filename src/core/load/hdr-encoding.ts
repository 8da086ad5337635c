// A histogram (histogram.ts) in HdrHistogram's standard compressed form (V2: a 40-byte header, the
// counts as ZigZag LEB128 with runs of zeros as one negative number, deflated behind an 8-byte
// header; base64 text as in HdrHistogram's log files). Load reports carry it so that runs of several
// machines are merged by any HdrHistogram implementation (Java, Go, Rust, JavaScript, …) without
// losing the percentiles, which averaged percentiles would.
import { deflateSync, inflateSync } from "node:zlib";
import { ProtocallError } from "../errors";
import { HIGHEST_TRACKABLE, Histogram, indexOf, lowestAt } from "./histogram";

const ENCODING_COOKIE = 0x1c849303 | 0x10;
const COMPRESSED_COOKIE = 0x1c849304 | 0x10;
const SIGNIFICANT_DIGITS = 3;

/** The histogram as base64 of HdrHistogram's V2 compressed encoding. */
export function encodeHdr(h: Histogram): string {
  const bytes: number[] = [];
  const top = h.count === 0 ? -1 : indexOf(h.max);
  let zeros = 0;
  for (let i = 0; i <= top; i++) {
    const c = h.counts[i];
    if (c === 0) {
      zeros++;
      continue;
    }
    if (zeros > 0) writeZigZag(bytes, -zeros);
    zeros = 0;
    writeZigZag(bytes, c);
  }
  const body = Buffer.alloc(40 + bytes.length);
  body.writeInt32BE(ENCODING_COOKIE, 0);
  body.writeInt32BE(bytes.length, 4);
  body.writeInt32BE(0, 8);
  body.writeInt32BE(SIGNIFICANT_DIGITS, 12);
  body.writeBigInt64BE(1n, 16);
  body.writeBigInt64BE(BigInt(HIGHEST_TRACKABLE), 24);
  body.writeDoubleBE(1, 32);
  Buffer.from(bytes).copy(body, 40);
  const packed = deflateSync(body);
  const out = Buffer.alloc(8 + packed.length);
  out.writeInt32BE(COMPRESSED_COOKIE, 0);
  out.writeInt32BE(packed.length, 4);
  packed.copy(out, 8);
  return out.toString("base64");
}

/** Reads what encodeHdr wrote (or any HdrHistogram V2 encoding with 3 digits and unit 1). */
export function decodeHdr(text: string): Histogram {
  const bad = (why: string) => new ProtocallError(`not an HdrHistogram of a load report: ${why}`);
  const outer = Buffer.from(text, "base64");
  if (outer.length < 8 || outer.readInt32BE(0) !== COMPRESSED_COOKIE) throw bad("unknown header");
  let body: Buffer;
  try {
    body = inflateSync(outer.subarray(8, 8 + outer.readInt32BE(4)));
  } catch {
    throw bad("its compressed data is damaged");
  }
  if (body.length < 40 || body.readInt32BE(0) !== ENCODING_COOKIE) throw bad("unknown encoding");
  if (body.readInt32BE(12) !== SIGNIFICANT_DIGITS || body.readBigInt64BE(16) !== 1n) {
    throw bad("it was not recorded with 3 significant digits in units of 1");
  }
  const end = 40 + body.readInt32BE(4);
  const h = new Histogram();
  let pos = 40;
  let index = 0;
  while (pos < end) {
    let raw = 0;
    let scale = 1;
    for (;;) {
      const b = body[pos++];
      raw += (b & 0x7f) * scale;
      scale *= 128;
      if ((b & 0x80) === 0 || pos >= end) break;
    }
    const value = raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
    if (value < 0) {
      index += -value;
      continue;
    }
    if (index >= h.counts.length) throw bad("a count lies beyond the tracked range");
    h.counts[index] = value;
    if (value > 0) {
      const low = lowestAt(index);
      h.count += value;
      h.sum += low * value;
      if (low < h.min) h.min = low;
      h.max = Math.max(h.max, low);
    }
    index++;
  }
  return h;
}

function writeZigZag(out: number[], n: number): void {
  let v = n >= 0 ? n * 2 : -n * 2 - 1;
  while (v >= 128) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}
