// The relay's request rewriting on the bytes a real Node http2 client sends (its dynamic table in use,
// padded frames, a head big enough for CONTINUATION frames, DATA between heads): the same output
// whether the bytes come whole or one octet at a time, every head readdressed, and every other frame
// passed through unchanged.
import assert from "node:assert/strict";
import * as http2 from "node:http2";
import * as net from "node:net";
import { test } from "node:test";
import { FrameEvents } from "../../../src/core/http2/frame-events";
import { HpackDecoder } from "../../../src/core/http2/hpack";
import { RequestRewriter } from "../../../src/core/proxy/h2-request-rewrite";

/** What a Node http2 client writes for a few requests, read by a server that never answers. */
async function clientBytes(): Promise<Buffer> {
  const got: Buffer[] = [];
  const server = net.createServer((s) => s.on("data", (c: Buffer) => got.push(c)));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as net.AddressInfo;
  const session = http2.connect(`http://127.0.0.1:${port}`, {
    paddingStrategy: http2.constants.PADDING_STRATEGY_MAX,
  });
  session.on("error", () => {});
  for (let i = 0; i < 4; i++) {
    const s = session.request({
      ":method": "POST",
      ":path": `/pkg.Svc/M${i}`,
      "content-type": "application/grpc",
      "x-same": "indexed after the first request",
      ...(i === 2 ? { "x-big": "b".repeat(30_000) } : {}),
    });
    s.on("error", () => {});
    s.end(`body ${i}`);
  }
  const length = () => got.reduce((n, c) => n + c.length, 0);
  for (let i = 0; i < 200 && length() < 23_000; i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
  session.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  return Buffer.concat(got);
}

/** The heads and bodies in an upstream-bound byte stream, as the upstream would decode them. */
function read(bytes: Buffer) {
  const decoder = new HpackDecoder();
  const heads: [string, string][][] = [];
  const bodies = new Map<number, string>();
  new FrameEvents(
    {
      headers: (_s, block) => void heads.push(decoder.decode(block)),
      data: (s, piece) => void bodies.set(s, (bodies.get(s) ?? "") + piece.toString()),
      endStream: () => {},
      reset: () => {},
      goaway: () => {},
      settings: () => {},
    },
    true,
  ).push(bytes);
  return { heads, bodies };
}

test("a Node client's requests: readdressed the same whether the bytes come whole or an octet at a time", async () => {
  const bytes = await clientBytes();
  const flagsOf = (type: number) => {
    const out: number[] = [];
    for (let at = 24; at + 9 <= bytes.length; at += 9 + bytes.readUIntBE(at, 3))
      if (bytes[at + 3] === type) out.push(bytes[at + 4]);
    return out;
  };
  // The client padded its frames and continued the big head.
  assert.ok(
    flagsOf(0x1).some((f) => f & 0x8),
    "no padded HEADERS frame",
  );
  assert.ok(
    flagsOf(0x0).some((f) => f & 0x8),
    "no padded DATA frame",
  );
  assert.ok(flagsOf(0x9).length > 0, "no CONTINUATION frame");
  const target = { scheme: "https", authority: "upstream:8443", basePath: "/base" };
  const whole = new RequestRewriter(target);
  const wholeOut = Buffer.concat(whole.push(bytes));
  const split = new RequestRewriter(target);
  const splitOut = Buffer.concat([...bytes].flatMap((_, i) => split.push(bytes.subarray(i, i + 1))));
  assert.deepEqual(splitOut, wholeOut);
  assert.equal(whole.failure, undefined);
  assert.deepEqual(split.decoded, whole.decoded);

  const sent = read(bytes);
  const out = read(wholeOut);
  assert.equal(out.heads.length, 4);
  out.heads.forEach((head, i) => {
    const get = (n: string) => head.filter(([k]) => k === n).map(([, v]) => v);
    assert.deepEqual(get(":path"), [`/base/pkg.Svc/M${i}`]);
    assert.deepEqual(get(":authority"), ["upstream:8443"]);
    assert.deepEqual(get(":scheme"), ["https"]);
    assert.deepEqual(get("x-same"), ["indexed after the first request"]);
    assert.equal(get("x-big")[0]?.length, i === 2 ? 30_000 : undefined);
    // What the rewriter decoded is what the client sent.
    assert.deepEqual(whole.decoded[i], sent.heads[i]);
  });
  // Bodies (padding left out) pass unchanged.
  assert.deepEqual([...out.bodies.values()], ["body 0", "body 1", "body 2", "body 3"]);
  // The big head was split into frames of at most 16,384 octets.
  for (let at = 24; at < wholeOut.length; at += 9 + wholeOut.readUIntBE(at, 3)) {
    assert.ok(wholeOut.readUIntBE(at, 3) <= 16_384);
  }
});

test("a head that never ends is not held: past 1 MiB it passes on as it came, and the rewriter says why", () => {
  const rewriter = new RequestRewriter({ scheme: "http", authority: "up:1", basePath: "" });
  const frame = (type: number, flags: number, payload: Buffer) => {
    const head = Buffer.alloc(9);
    head.writeUIntBE(payload.length, 0, 3);
    head[3] = type;
    head[4] = flags;
    head.writeUInt32BE(1, 5);
    return Buffer.concat([head, payload]);
  };
  const preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  const sent = [preface, frame(0x1, 0, Buffer.alloc(16_384, 0x40))];
  for (let i = 0; i < 70; i++) sent.push(frame(0x9, 0, Buffer.alloc(16_384, 0x41)));
  const bytes = Buffer.concat(sent);
  const out = Buffer.concat(sent.flatMap((piece) => rewriter.push(piece)));
  // No END_HEADERS yet, and nothing held back: every octet went on unchanged.
  assert.deepEqual(out, bytes);
  assert.match(rewriter.failure ?? "", /a request head of more than 1048576 octets/);
  assert.deepEqual(rewriter.decoded, [undefined]);
});
