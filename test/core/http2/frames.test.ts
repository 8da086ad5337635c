// HTTP/2 frames as the relay reads them: the same events whether a connection's bytes arrive whole or
// one octet at a time (preface, padded DATA and HEADERS, CONTINUATION, RST_STREAM, GOAWAY, SETTINGS),
// and header blocks written back as HEADERS + CONTINUATION frames within a frame size limit.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FrameEvents, type FrameSink } from "../../../src/core/http2/frame-events";
import { Flag, FrameType, frame, headerFrames, PREFACE, settingOf } from "../../../src/core/http2/frames";

/** What a sink was told, as text lines (data pieces joined per stream). */
function recorder() {
  const lines: string[] = [];
  const data = new Map<number, Buffer[]>();
  const sink: FrameSink = {
    headers: (s, block, end, promise) =>
      lines.push(`headers ${s} ${block.toString("hex")} ${end} ${promise}`),
    data: (s, piece) => data.set(s, [...(data.get(s) ?? []), Buffer.from(piece)]),
    endStream: (s) => lines.push(`end ${s} ${Buffer.concat(data.get(s) ?? []).toString()}`),
    reset: (s, code) => lines.push(`reset ${s} ${code}`),
    goaway: (last, code) => lines.push(`goaway ${last} ${code}`),
    settings: (p) => lines.push(`settings ${p.toString("hex")}`),
  };
  return { sink, lines };
}

const settings = Buffer.from([0, 5, 0, 0, 0x40, 0]); // MAX_FRAME_SIZE 16384
const bytes = Buffer.concat([
  PREFACE,
  frame(FrameType.SETTINGS, 0, 0, settings),
  frame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(0)),
  // HEADERS, padded (3 octets) and with priority fields, continued in a CONTINUATION frame.
  frame(
    FrameType.HEADERS,
    Flag.PADDED | Flag.PRIORITY,
    1,
    Buffer.concat([Buffer.from([3]), Buffer.from([0, 0, 0, 0, 16]), Buffer.from("ab"), Buffer.alloc(3)]),
  ),
  frame(FrameType.CONTINUATION, Flag.END_HEADERS, 1, Buffer.from("cd")),
  frame(
    FrameType.DATA,
    Flag.PADDED,
    1,
    Buffer.concat([Buffer.from([4]), Buffer.from("hello "), Buffer.alloc(4)]),
  ),
  frame(FrameType.WINDOW_UPDATE, 0, 0, Buffer.from([0, 0, 1, 0])),
  frame(FrameType.DATA, Flag.END_STREAM, 1, Buffer.from("world")),
  frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 3, Buffer.from("ef")),
  frame(FrameType.RST_STREAM, 0, 5, Buffer.from([0, 0, 0, 8])),
  frame(FrameType.GOAWAY, 0, 0, Buffer.from([0, 0, 0, 3, 0, 0, 0, 0])),
]);
const expected = [
  `settings ${settings.toString("hex")}`,
  `headers 1 ${Buffer.from("abcd").toString("hex")} false false`,
  "end 1 hello world",
  `headers 3 ${Buffer.from("ef").toString("hex")} true false`,
  "reset 5 8",
  "goaway 3 0",
];

describe("HTTP/2 frames", () => {
  test("the same events from a connection's bytes whole and split at every octet", () => {
    const whole = recorder();
    new FrameEvents(whole.sink, true).push(bytes);
    assert.deepEqual(whole.lines, expected);
    const split = recorder();
    const events = new FrameEvents(split.sink, true);
    for (let i = 0; i < bytes.length; i++) events.push(bytes.subarray(i, i + 1));
    assert.deepEqual(split.lines, expected);
  });

  test("a header block as HEADERS + CONTINUATION frames no larger than the limit, read back whole", () => {
    const block = Buffer.from("0123456789abcdefghijklmnopqrstuvwxyz");
    const out = headerFrames(block, 7, true, 10);
    const r = recorder();
    new FrameEvents(r.sink).push(out);
    assert.deepEqual(r.lines, [`headers 7 ${block.toString("hex")} true false`]);
    // Four frames of at most 10 octets each: HEADERS (END_STREAM), then CONTINUATION, the last END_HEADERS.
    const kinds: string[] = [];
    for (let at = 0; at < out.length; at += 9 + out.readUIntBE(at, 3)) {
      assert.ok(out.readUIntBE(at, 3) <= 10);
      kinds.push(`${out[at + 3]}:${out[at + 4]}`);
    }
    assert.deepEqual(kinds, ["1:1", "9:0", "9:0", "9:4"]);
    assert.deepEqual(
      headerFrames(Buffer.alloc(0), 1, false, 10),
      frame(FrameType.HEADERS, Flag.END_HEADERS, 1, Buffer.alloc(0)),
    );
  });

  test("a setting's value is read from a SETTINGS payload (the last one when repeated)", () => {
    const payload = Buffer.from([0, 5, 0, 0, 0x40, 0, 0, 1, 0, 0, 0x10, 0, 0, 5, 0, 1, 0, 0]);
    assert.equal(settingOf(payload, 5), 65536);
    assert.equal(settingOf(payload, 1), 4096);
    assert.equal(settingOf(payload, 3), undefined);
  });
});

test("a header block past 1 MiB stops the reader with an error rather than being held", () => {
  const r = recorder();
  const events = new FrameEvents(r.sink);
  events.push(frame(FrameType.HEADERS, 0, 1, Buffer.alloc(16_384)));
  assert.throws(() => {
    for (let i = 0; i < 70; i++) events.push(frame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(16_384)));
  }, /a header block of more than 1048576 octets/);
  assert.deepEqual(r.lines, []);
});
