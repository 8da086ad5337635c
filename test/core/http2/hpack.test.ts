// HPACK (src/core/http2/hpack.ts): the decoder on RFC 7541's own examples (Appendix
// C: requests with and without Huffman coding, responses whose table evicts), what it refuses, and
// the encoder's blocks read back. Real servers' answers are checked in h2c-client.test.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { encodeHeaders, encodeHeadersStatic, HpackDecoder, HpackError } from "../../../src/core/http2/hpack";

const hex = (s: string) => Buffer.from(s.replace(/\s/g, ""), "hex");

describe("HPACK", () => {
  test("decodes RFC 7541 C.4: requests with Huffman coding, sharing one table", () => {
    const d = new HpackDecoder();
    assert.deepEqual(d.decode(hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")), [
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
    ]);
    assert.deepEqual(d.decode(hex("8286 84be 5886 a8eb 1064 9cbf")), [
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
      ["cache-control", "no-cache"],
    ]);
    assert.deepEqual(d.decode(hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")), [
      [":method", "GET"],
      [":scheme", "https"],
      [":path", "/index.html"],
      [":authority", "www.example.com"],
      ["custom-key", "custom-value"],
    ]);
  });

  test("decodes RFC 7541 C.3: the same requests without Huffman coding", () => {
    const d = new HpackDecoder();
    d.decode(hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"));
    d.decode(hex("8286 84be 5808 6e6f 2d63 6163 6865"));
    assert.deepEqual(
      d.decode(hex("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65")),
      [
        [":method", "GET"],
        [":scheme", "https"],
        [":path", "/index.html"],
        [":authority", "www.example.com"],
        ["custom-key", "custom-value"],
      ],
    );
  });

  test("decodes RFC 7541 C.6: responses whose 256-octet table evicts its oldest entries", () => {
    const d = new HpackDecoder(4096);
    // The server shrinks the table to 256 first (a size update), as the RFC's example assumes.
    d.decode(hex("3fe1 01"));
    d.decode(
      hex(
        "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
      ),
    );
    assert.deepEqual(d.decode(hex("4883 640e ffc1 c0bf")), [
      [":status", "307"],
      ["cache-control", "private"],
      ["date", "Mon, 21 Oct 2013 20:13:21 GMT"],
      ["location", "https://www.example.com"],
    ]);
    assert.deepEqual(
      d.decode(
        hex(
          "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        ),
      ),
      [
        [":status", "200"],
        ["cache-control", "private"],
        ["date", "Mon, 21 Oct 2013 20:13:22 GMT"],
        ["location", "https://www.example.com"],
        ["content-encoding", "gzip"],
        ["set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"],
      ],
    );
    // 307 was evicted by then: its old index now names what came after it.
    assert.throws(() => d.decode(hex("c5")), HpackError);
  });

  test("refuses blocks that cannot be decoded, with an HpackError", () => {
    const bad = [
      "80", // index 0
      "be", // an index beyond an empty table
      "40 05 61", // a string cut short
      "40 ff", // an integer cut short
      "41 81 ff", // Huffman: EOS coded within a string... padding longer than 7 bits
      "41 81 00", // Huffman: padding that is not all ones
      "3f e1 3f", // a table size above the one announced
    ];
    for (const b of bad) assert.throws(() => new HpackDecoder().decode(hex(b)), HpackError, b);
  });

  test("the encoder's blocks read back as written, long values included", () => {
    const fields: [string, string][] = [
      [":method", "POST"],
      [":path", `/${"p".repeat(300)}`],
      ["x-latin", "caf\u00e9"],
      ["content-length", "17"],
    ];
    const d = new HpackDecoder();
    assert.deepEqual(d.decode(encodeHeaders(fields)), fields);
    // Nothing went into the server's table: the same block decodes the same again.
    assert.deepEqual(d.decode(encodeHeaders(fields)), fields);
  });

  test("the static-table encoder: static entries as one octet, static names referenced, nothing indexed", () => {
    const fields: [string, string][] = [
      [":method", "POST"],
      [":scheme", "http"],
      [":authority", "127.0.0.1:8080"],
      [":path", `/${"p".repeat(300)}`],
      ["content-type", "application/grpc"],
      ["te", "trailers"],
      ["x-latin", "caf\u00e9"],
    ];
    const block = encodeHeadersStatic(fields);
    assert.equal(block[0], 0x83); // :method POST, static index 3
    assert.equal(block[1], 0x86); // :scheme http, static index 6
    assert.equal(block[2], 0x01); // :authority by its static name, a literal without indexing
    assert.ok(block.length < encodeHeaders(fields).length);
    const d = new HpackDecoder();
    assert.deepEqual(d.decode(block), fields);
    // Nothing went into the decoder's table: index 62 (its first dynamic entry) is still beyond it.
    assert.throws(() => d.decode(Buffer.from([0x80 | 62])), HpackError);
    assert.deepEqual(d.decode(block), fields);
    // With `emptyTable`, the block first sets the decoder's table size to 0 (one octet, 0x20).
    const emptied = encodeHeadersStatic(fields, true);
    assert.equal(emptied[0], 0x20);
    assert.deepEqual(emptied.subarray(1), block);
    assert.deepEqual(new HpackDecoder(0).decode(emptied), fields);
  });
});
