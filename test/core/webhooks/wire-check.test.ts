// The wire check that lets the listener validate events without decoding them: it accepts the events
// the registry sends, and whatever it accepts, fromBinary decodes (fuzzed with thousands of damaged
// copies of several messages, with maps, oneofs, packed and unpacked repeated fields, nested and
// recursive messages).
import assert from "node:assert/strict";
import { test } from "node:test";
import { create, type DescMessage, fromBinary, fromJson, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, StructSchema, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { encodeEvent, samplePushEvent } from "../../../src/core/webhooks/event";
import { isWellFormed } from "../../../src/core/webhooks/wire-check";
import {
  EventRequestSchema,
  file_buf_alpha_webhook_v1alpha1_event,
} from "../../../src/gen/buf/alpha/webhook/v1alpha1/event_pb";

/** A small deterministic generator (mulberry32), so that a failure can be reproduced. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function decodes(desc: DescMessage, bytes: Uint8Array): boolean {
  try {
    fromBinary(desc, bytes);
    return true;
  } catch {
    return false;
  }
}

const samples: [string, DescMessage, Uint8Array][] = [
  ["a push event", EventRequestSchema, encodeEvent(samplePushEvent())],
  ["an empty event", EventRequestSchema, new Uint8Array(0)],
  [
    "a struct (maps, oneofs, lists, recursion)",
    StructSchema,
    toBinary(
      StructSchema,
      fromJson(StructSchema, { a: 1.5, b: "héllo", c: [true, null, { d: ["x", 2] }], e: {} }),
    ),
  ],
  [
    "a file descriptor (proto2: packed and unpacked repeated fields, enums, options)",
    FileDescriptorProtoSchema,
    toBinary(FileDescriptorProtoSchema, file_buf_alpha_webhook_v1alpha1_event.proto),
  ],
  [
    "a timestamp",
    TimestampSchema,
    toBinary(TimestampSchema, create(TimestampSchema, { seconds: -5n, nanos: 7 })),
  ],
];

test("well-formed messages pass the check", () => {
  for (const [name, desc, bytes] of samples) {
    assert.ok(decodes(desc, bytes), name);
    assert.equal(isWellFormed(desc, bytes), true, name);
  }
});

test("what the check accepts, fromBinary decodes: fuzzed with damaged copies", () => {
  const next = random(20251125);
  const pick = (n: number) => Math.floor(next() * n);
  for (const [name, desc, original] of samples) {
    if (original.length === 0) continue;
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 4000; i++) {
      const bytes = Buffer.from(original);
      let mutated: Uint8Array = bytes;
      switch (i % 5) {
        case 0: // flip bits in a few bytes
          for (let k = 1 + pick(3); k > 0; k--) bytes[pick(bytes.length)] ^= 1 << pick(8);
          break;
        case 1: // set a byte to a boundary value
          bytes[pick(bytes.length)] = [0, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x0c][pick(7)];
          break;
        case 2: // cut it short
          mutated = bytes.subarray(0, pick(bytes.length));
          break;
        case 3: {
          // insert random bytes
          const at = pick(bytes.length);
          const extra = Buffer.from(Array.from({ length: 1 + pick(4) }, () => pick(256)));
          mutated = Buffer.concat([bytes.subarray(0, at), extra, bytes.subarray(at)]);
          break;
        }
        default: {
          // drop a stretch
          const at = pick(bytes.length);
          mutated = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + pick(6))]);
        }
      }
      if (isWellFormed(desc, mutated)) {
        accepted++;
        assert.ok(
          decodes(desc, mutated),
          `${name}: accepted bytes fromBinary refuses: ${Buffer.from(mutated).toString("hex")}`,
        );
      } else {
        refused++;
      }
    }
    assert.ok(accepted > 100 && refused > 100, `${name}: ${accepted} accepted, ${refused} refused`);
  }
});

test("garbage, invalid UTF-8, bad tags and overlong varints are refused", () => {
  const cases: [string, number[]][] = [
    ["a varint that never ends", [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]],
    ["field number 0", [0x00, 0x01]],
    ["wire type 7", [0x0f]],
    ["an end-group tag out of a group", [0x0c]],
    ["a length past the end", [0x12, 0x05, 0x01]],
  ];
  for (const [name, bytes] of cases) {
    assert.equal(isWellFormed(TimestampSchema, new Uint8Array(bytes)), false, name);
    assert.equal(isWellFormed(StructSchema, new Uint8Array(bytes)), false, name);
  }
  // Struct field 1 is a map<string, Value>: an entry whose key is not UTF-8.
  const badKey = Buffer.from([0x0a, 0x08, 0x0a, 0x02, 0xc3, 0x28, 0x12, 0x02, 0x08, 0x00]);
  assert.equal(decodes(StructSchema, badKey), false);
  assert.equal(isWellFormed(StructSchema, badKey), false);
  // ASCII first, then a byte that starts no UTF-8 sequence: the ASCII shortcut must not vouch for it.
  const badTail = Buffer.from([0x0a, 0x09, 0x0a, 0x03, 0x61, 0x62, 0xff, 0x12, 0x02, 0x08, 0x00]);
  assert.equal(decodes(StructSchema, badTail), false);
  assert.equal(isWellFormed(StructSchema, badTail), false);
});

test("strings in ASCII and in multi-byte UTF-8 are both accepted", () => {
  for (const key of ["plain", "café", "日本", "🙂 ok", ""]) {
    const k = Buffer.from(key, "utf8");
    const entry = Buffer.concat([Buffer.from([0x0a, k.length]), k, Buffer.from([0x12, 0x02, 0x08, 0x00])]);
    const bytes = Buffer.concat([Buffer.from([0x0a, entry.length]), entry]);
    assert.equal(decodes(StructSchema, bytes), true, key);
    assert.equal(isWellFormed(StructSchema, bytes), true, key);
  }
});

test("an unknown field with an overlong varint is refused by the check but decodes (the caller falls back)", () => {
  const event = encodeEvent(samplePushEvent());
  const bytes = Buffer.concat([event, Buffer.from([0x98, 0x06, ...Array(10).fill(0xff), 0x01])]);
  assert.equal(isWellFormed(EventRequestSchema, bytes), false);
  assert.equal(decodes(EventRequestSchema, bytes), true);
});
