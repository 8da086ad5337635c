// Decoding proxied calls on the side: envelopes split anywhere across chunks, messages decoded with
// the schema, and bytes the schema cannot read kept as raw wire fields instead of failing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { decodeCall, rawFields } from "../../../src/core/proxy/decode-call";
import { envelopeReader } from "../../../src/core/proxy/envelopes";
import { GreetRequestSchema, GreetResponseSchema } from "../../../src/gen/demo/v1/greet_pb";
import { demoDescriptorSet } from "../../support/servers";

function envelope(flags: number, payload: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

test("envelopes split at every byte are read whole, end-of-stream envelopes apart", () => {
  const a = toBinary(GreetRequestSchema, create(GreetRequestSchema, { name: "one" }));
  const b = toBinary(GreetRequestSchema, create(GreetRequestSchema, { name: "two" }));
  const wire = Buffer.concat([
    envelope(0, a),
    envelope(0, b),
    envelope(0x80, Buffer.from("grpc-status: 0\r\n")),
  ]);
  const r = envelopeReader(true);
  for (const byte of wire) r.push(Buffer.from([byte]));
  r.end();
  assert.deepEqual(
    r.messages.map((m) => Buffer.from(m)),
    [Buffer.from(a), Buffer.from(b)],
  );
  assert.deepEqual(
    r.controls.map((c) => c.toString()),
    ["grpc-status: 0\r\n"],
  );
  assert.equal(r.bytes, wire.length);
});

test("messages decode with the schema; unknown methods and bad bytes become raw fields", async () => {
  const { openSchema } = await import("../../../src/core/schema/open-schema");
  const schema = await openSchema(await demoDescriptorSet(), { cwd: process.cwd(), stdin: process.stdin });
  const req = Buffer.from(toBinary(GreetRequestSchema, create(GreetRequestSchema, { name: "x" }))).toString(
    "base64",
  );
  const res = Buffer.from(
    toBinary(GreetResponseSchema, create(GreetResponseSchema, { greeting: "hi" })),
  ).toString("base64");
  const base = { protocol: "grpc" as const, requestHeaders: { "content-type": "application/grpc" } };
  const ok = await decodeCall(
    { ...base, method: "demo.v1.GreetService/Greet", requestMessages: [req], responseMessages: [res] },
    schema,
  );
  assert.deepEqual(ok, { request: [{ name: "x" }], response: [{ greeting: "hi" }], kind: "unary" });

  const unknown = await decodeCall(
    { ...base, method: "demo.v1.Nope/Greet", requestMessages: [req], responseMessages: [] },
    schema,
  );
  assert.deepEqual(unknown.request, [
    {
      $raw: [{ field: 1, wireType: 2, value: Buffer.from("x").toString("base64") }],
      $why: "the schema has no service demo.v1.Nope",
    },
  ]);

  const garbage = Buffer.from([0x0a, 0x05, 0x41]).toString("base64"); // a length past the end
  const bad = await decodeCall(
    { ...base, method: "demo.v1.GreetService/Greet", requestMessages: [garbage], responseMessages: [] },
    schema,
  );
  const raw = bad.request[0] as { $raw: unknown[]; $why: string };
  assert.match(raw.$why, /does not decode as demo\.v1\.GreetRequest/);
  assert.match(raw.$why, /not protobuf from byte 2: truncated length-delimited field/);
  await schema.close();
});

test("raw fields of every wire type", () => {
  const bytes = Buffer.from([0x08, 0x96, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x1d, 9, 9, 9, 9]);
  assert.deepEqual(rawFields(bytes, "why").$raw, [
    { field: 1, wireType: 0, value: "150" },
    { field: 2, wireType: 1, value: "0102030405060708" },
    { field: 3, wireType: 5, value: "09090909" },
  ]);
});
