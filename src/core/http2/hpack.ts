// HPACK (RFC 7541), shared by the load test's own HTTP/2 client (load/h2c-client.ts) and the proxy's
// HTTP/2 relay (proxy/h2-relay.ts): a decoder that follows one peer's encoder (its dynamic table,
// table size updates, integers, literals, Huffman-coded strings), and encoders that write literals
// touching no table (the load client encodes a request head once per run and sends it unchanged; the
// relay re-encodes rewritten request heads, so no table state on the upstream side can diverge from
// the client's). Kept here rather than taken from a library: the HPACK packages on the npm registry
// (hpack.js, hpack) have had no release in years, and this is all both need; the RFC's own examples
// test it (test/core/http2/hpack.test.ts).

/** An HPACK block that cannot be decoded; the connection it came on cannot be used any more. */
export class HpackError extends Error {}

/** Decodes the header blocks of one connection, in the order they arrive (they share a table). */
export class HpackDecoder {
  private readonly table: [string, string][] = [];
  private size = 0;
  private limit: number;

  /**
   * `maxSize`: the table size this side announced (SETTINGS_HEADER_TABLE_SIZE, 4096 by default); a
   * table size update above it is refused. The table starts at 4096 octets or `maxSize` if smaller
   * (RFC 7541 §4.2: an encoder only grows it with a size update).
   */
  constructor(private readonly maxSize = 4096) {
    this.limit = Math.min(maxSize, 4096);
  }

  /** The fields of one complete header block, in order. */
  decode(block: Uint8Array): [string, string][] {
    const out: [string, string][] = [];
    const r = { at: 0 };
    while (r.at < block.length) {
      const b = block[r.at];
      if (b & 0x80) {
        out.push(this.entry(integer(block, r, 7)));
      } else if (b & 0x40) {
        const field = this.literal(block, r, 6);
        out.push(field);
        this.insert(field);
      } else if (b & 0x20) {
        const size = integer(block, r, 5);
        if (size > this.maxSize) throw new HpackError(`table size ${size} above the ${this.maxSize} allowed`);
        this.limit = size;
        this.evict(0);
      } else {
        out.push(this.literal(block, r, 4));
      }
    }
    return out;
  }

  private entry(index: number): [string, string] {
    if (index === 0) throw new HpackError("index 0");
    if (index <= STATIC.length) return STATIC[index - 1] as [string, string];
    const e = this.table[index - STATIC.length - 1];
    if (!e) throw new HpackError(`index ${index} beyond the table`);
    return e;
  }

  private literal(block: Uint8Array, r: { at: number }, prefix: number): [string, string] {
    const index = integer(block, r, prefix);
    const name = index === 0 ? text(block, r) : this.entry(index)[0];
    return [name, text(block, r)];
  }

  private insert(field: [string, string]): void {
    const size = field[0].length + field[1].length + 32;
    this.evict(size);
    if (size > this.limit) return;
    this.table.unshift(field);
    this.size += size;
  }

  /** Drops the oldest entries until `room` more octets fit. */
  private evict(room: number): void {
    while (this.table.length > 0 && this.size + room > this.limit) {
      const [n, v] = this.table.pop() as [string, string];
      this.size -= n.length + v.length + 32;
    }
  }
}

/** An integer with an N-bit prefix (RFC 7541 §5.1). */
function integer(block: Uint8Array, r: { at: number }, prefix: number): number {
  const max = (1 << prefix) - 1;
  let value = block[r.at++] & max;
  if (value < max) return value;
  let shift = 0;
  for (;;) {
    if (r.at >= block.length) throw new HpackError("integer cut short");
    const b = block[r.at++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(b & 0x80)) return value;
    if (shift > 28) throw new HpackError("integer too large");
  }
}

/** A string literal (RFC 7541 §5.2), Huffman-coded or not, as latin1 (header octets). */
function text(block: Uint8Array, r: { at: number }): string {
  if (r.at >= block.length) throw new HpackError("string cut short");
  const huffman = (block[r.at] & 0x80) !== 0;
  const length = integer(block, r, 7);
  const end = r.at + length;
  if (end > block.length) throw new HpackError("string cut short");
  const s = huffman ? huffmanDecode(block, r.at, end) : latin1(block, r.at, end);
  r.at = end;
  return s;
}

function latin1(block: Uint8Array, from: number, to: number): string {
  return Buffer.from(block.buffer, block.byteOffset + from, to - from).toString("latin1");
}

/**
 * The Huffman code as a binary tree in one array: node n's children are at 2n and 2n+1 of
 * `TREE`; a leaf holds -(symbol + 1).
 */
let built: Int32Array | undefined;
function huffmanTree(): Int32Array {
  if (built) return built;
  const tree: number[] = [0, 0];
  for (let sym = 0; sym <= 256; sym++) {
    const code = sym === 256 ? 0x3fffffff : CODES[sym];
    const len = sym === 256 ? 30 : LENGTHS[sym];
    let node = 0;
    for (let i = len - 1; i >= 0; i--) {
      const bit = (code >>> i) & 1;
      const slot = node * 2 + bit;
      if (i === 0) {
        tree[slot] = -(sym + 1);
        break;
      }
      if (tree[slot] === 0) {
        tree[slot] = tree.length / 2;
        tree.push(0, 0);
      }
      node = tree[slot];
    }
  }
  built = Int32Array.from(tree);
  return built;
}

function huffmanDecode(block: Uint8Array, from: number, to: number): string {
  const TREE = huffmanTree();
  let out = "";
  let node = 0;
  let depth = 0;
  let ones = true;
  for (let i = from; i < to; i++) {
    const byte = block[i];
    for (let bit = 7; bit >= 0; bit--) {
      const b = (byte >> bit) & 1;
      const next = TREE[node * 2 + b];
      depth++;
      ones &&= b === 1;
      if (next < 0) {
        if (next === -257) throw new HpackError("Huffman string holds EOS");
        out += String.fromCharCode(-next - 1);
        node = 0;
        depth = 0;
        ones = true;
      } else if (next === 0) {
        throw new HpackError("invalid Huffman code");
      } else node = next;
    }
  }
  // What is left must be the start of EOS (all ones), shorter than a byte.
  if (depth > 7 || !ones) throw new HpackError("invalid Huffman padding");
  return out;
}

/** Encodes a request's header block, with literals that leave the server's table alone. */
export function encodeHeaders(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: number[] = [];
  const int = (value: number, prefix: number, first: number) => {
    const max = (1 << prefix) - 1;
    if (value < max) {
      parts.push(first | value);
      return;
    }
    parts.push(first | max);
    let v = value - max;
    while (v >= 128) {
      parts.push((v % 128) + 128);
      v = Math.floor(v / 128);
    }
    parts.push(v);
  };
  const str = (s: string) => {
    const bytes = Buffer.from(s, "latin1");
    int(bytes.length, 7, 0);
    for (const b of bytes) parts.push(b);
  };
  for (const [name, value] of fields) {
    // Literal Header Field without Indexing, new name (RFC 7541 §6.2.2).
    parts.push(0);
    str(name);
    str(value);
  }
  return Buffer.from(parts);
}

let staticIndex: Map<string, number> | undefined;
/** Static table indexes by "name\0value" (exact entries) and by name (its first entry). */
function staticIndexes(): Map<string, number> {
  if (staticIndex) return staticIndex;
  const m = new Map<string, number>();
  STATIC.forEach(([name, value], i) => {
    if (!m.has(name)) m.set(name, i + 1);
    m.set(`${name}\0${value}`, i + 1);
  });
  staticIndex = m;
  return m;
}

/**
 * Encodes a header block with the static table only: a field that is a static entry as its index,
 * else a literal without indexing (RFC 7541 §6.2.2), naming a static entry's name where there is one.
 * The decoder's dynamic table is left as it was, or with `emptyTable` set to size 0 first (a dynamic
 * table size update, always within what the decoder allows: one that lowered its table size in its
 * SETTINGS expects such an update in the next block).
 */
export function encodeHeadersStatic(
  fields: readonly (readonly [string, string])[],
  emptyTable = false,
): Buffer {
  const index = staticIndexes();
  let room = 1;
  for (const [name, value] of fields) room += name.length + value.length + 16;
  const out = Buffer.allocUnsafe(room);
  let at = 0;
  if (emptyTable) out[at++] = 0x20;
  const int = (value: number, prefix: number, first: number) => {
    const max = (1 << prefix) - 1;
    if (value < max) {
      out[at++] = first | value;
      return;
    }
    out[at++] = first | max;
    let v = value - max;
    while (v >= 128) {
      out[at++] = (v % 128) + 128;
      v = Math.floor(v / 128);
    }
    out[at++] = v;
  };
  // Header octets are latin1 (as the decoder reads them): one octet a character.
  const str = (s: string) => {
    int(s.length, 7, 0);
    at += out.write(s, at, "latin1");
  };
  for (const [name, value] of fields) {
    const exact = index.get(`${name}\0${value}`);
    if (exact !== undefined) {
      int(exact, 7, 0x80);
      continue;
    }
    const named = index.get(name);
    if (named !== undefined) int(named, 4, 0);
    else {
      out[at++] = 0;
      str(name);
    }
    str(value);
  }
  return out.subarray(0, at);
}

// RFC 7541 Appendix B: the Huffman code of each octet (EOS, 0x3fffffff in 30 bits, apart), and its
// length in bits; then Appendix A, the static table.
const CODES = [
  0x1ff8, 0x7fffd8, 0xfffffe2, 0xfffffe3, 0xfffffe4, 0xfffffe5, 0xfffffe6, 0xfffffe7, 0xfffffe8, 0xffffea,
  0x3ffffffc, 0xfffffe9, 0xfffffea, 0x3ffffffd, 0xfffffeb, 0xfffffec, 0xfffffed, 0xfffffee, 0xfffffef,
  0xffffff0, 0xffffff1, 0xffffff2, 0x3ffffffe, 0xffffff3, 0xffffff4, 0xffffff5, 0xffffff6, 0xffffff7,
  0xffffff8, 0xffffff9, 0xffffffa, 0xffffffb, 0x14, 0x3f8, 0x3f9, 0xffa, 0x1ff9, 0x15, 0xf8, 0x7fa, 0x3fa,
  0x3fb, 0xf9, 0x7fb, 0xfa, 0x16, 0x17, 0x18, 0x0, 0x1, 0x2, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x5c,
  0xfb, 0x7ffc, 0x20, 0xffb, 0x3fc, 0x1ffa, 0x21, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
  0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0xfc, 0x73, 0xfd, 0x1ffb, 0x7fff0,
  0x1ffc, 0x3ffc, 0x22, 0x7ffd, 0x3, 0x23, 0x4, 0x24, 0x5, 0x25, 0x26, 0x27, 0x6, 0x74, 0x75, 0x28, 0x29,
  0x2a, 0x7, 0x2b, 0x76, 0x2c, 0x8, 0x9, 0x2d, 0x77, 0x78, 0x79, 0x7a, 0x7b, 0x7ffe, 0x7fc, 0x3ffd, 0x1ffd,
  0xffffffc, 0xfffe6, 0x3fffd2, 0xfffe7, 0xfffe8, 0x3fffd3, 0x3fffd4, 0x3fffd5, 0x7fffd9, 0x3fffd6, 0x7fffda,
  0x7fffdb, 0x7fffdc, 0x7fffdd, 0x7fffde, 0xffffeb, 0x7fffdf, 0xffffec, 0xffffed, 0x3fffd7, 0x7fffe0,
  0xffffee, 0x7fffe1, 0x7fffe2, 0x7fffe3, 0x7fffe4, 0x1fffdc, 0x3fffd8, 0x7fffe5, 0x3fffd9, 0x7fffe6,
  0x7fffe7, 0xffffef, 0x3fffda, 0x1fffdd, 0xfffe9, 0x3fffdb, 0x3fffdc, 0x7fffe8, 0x7fffe9, 0x1fffde, 0x7fffea,
  0x3fffdd, 0x3fffde, 0xfffff0, 0x1fffdf, 0x3fffdf, 0x7fffeb, 0x7fffec, 0x1fffe0, 0x1fffe1, 0x3fffe0,
  0x1fffe2, 0x7fffed, 0x3fffe1, 0x7fffee, 0x7fffef, 0xfffea, 0x3fffe2, 0x3fffe3, 0x3fffe4, 0x7ffff0, 0x3fffe5,
  0x3fffe6, 0x7ffff1, 0x3ffffe0, 0x3ffffe1, 0xfffeb, 0x7fff1, 0x3fffe7, 0x7ffff2, 0x3fffe8, 0x1ffffec,
  0x3ffffe2, 0x3ffffe3, 0x3ffffe4, 0x7ffffde, 0x7ffffdf, 0x3ffffe5, 0xfffff1, 0x1ffffed, 0x7fff2, 0x1fffe3,
  0x3ffffe6, 0x7ffffe0, 0x7ffffe1, 0x3ffffe7, 0x7ffffe2, 0xfffff2, 0x1fffe4, 0x1fffe5, 0x3ffffe8, 0x3ffffe9,
  0xffffffd, 0x7ffffe3, 0x7ffffe4, 0x7ffffe5, 0xfffec, 0xfffff3, 0xfffed, 0x1fffe6, 0x3fffe9, 0x1fffe7,
  0x1fffe8, 0x7ffff3, 0x3fffea, 0x3fffeb, 0x1ffffee, 0x1ffffef, 0xfffff4, 0xfffff5, 0x3ffffea, 0x7ffff4,
  0x3ffffeb, 0x7ffffe6, 0x3ffffec, 0x3ffffed, 0x7ffffe7, 0x7ffffe8, 0x7ffffe9, 0x7ffffea, 0x7ffffeb,
  0xffffffe, 0x7ffffec, 0x7ffffed, 0x7ffffee, 0x7ffffef, 0x7fffff0, 0x3ffffee,
];
const LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28,
  28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7,
  8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19,
  13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13,
  28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21,
  22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23,
  22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25,
  25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
];
const STATIC: readonly (readonly [string, string])[] = [
  [":authority", ""],
  [":method", "GET"],
  [":method", "POST"],
  [":path", "/"],
  [":path", "/index.html"],
  [":scheme", "http"],
  [":scheme", "https"],
  [":status", "200"],
  [":status", "204"],
  [":status", "206"],
  [":status", "304"],
  [":status", "400"],
  [":status", "404"],
  [":status", "500"],
  ["accept-charset", ""],
  ["accept-encoding", "gzip, deflate"],
  ["accept-language", ""],
  ["accept-ranges", ""],
  ["accept", ""],
  ["access-control-allow-origin", ""],
  ["age", ""],
  ["allow", ""],
  ["authorization", ""],
  ["cache-control", ""],
  ["content-disposition", ""],
  ["content-encoding", ""],
  ["content-language", ""],
  ["content-length", ""],
  ["content-location", ""],
  ["content-range", ""],
  ["content-type", ""],
  ["cookie", ""],
  ["date", ""],
  ["etag", ""],
  ["expect", ""],
  ["expires", ""],
  ["from", ""],
  ["host", ""],
  ["if-match", ""],
  ["if-modified-since", ""],
  ["if-none-match", ""],
  ["if-range", ""],
  ["if-unmodified-since", ""],
  ["last-modified", ""],
  ["link", ""],
  ["location", ""],
  ["max-forwards", ""],
  ["proxy-authenticate", ""],
  ["proxy-authorization", ""],
  ["range", ""],
  ["referer", ""],
  ["refresh", ""],
  ["retry-after", ""],
  ["server", ""],
  ["set-cookie", ""],
  ["strict-transport-security", ""],
  ["transfer-encoding", ""],
  ["user-agent", ""],
  ["vary", ""],
  ["via", ""],
  ["www-authenticate", ""],
];
