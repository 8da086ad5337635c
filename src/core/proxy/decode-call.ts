// Decodes a proxied call's messages with a schema (the upstream's reflection or --schema sources):
// each message becomes its protobuf JSON, or, when the schema does not know the method or the bytes
// do not match it (or they are compressed), its raw wire fields. Decoding never affects the call.
import { type DescMessage, fromBinary, toJson } from "@bufbuild/protobuf";
import type { SchemaSource } from "../schema/types";
import type { DecodedCall, ProxiedCall } from "./call-store";

/** A message the schema could not decode: its top-level wire fields (numbers, bytes as base64). */
export interface RawFields {
  readonly $raw: { field: number; wireType: number; value: string }[];
  readonly $why: string;
}

export function rawFields(bytes: Uint8Array, why: string): RawFields {
  const out: { field: number; wireType: number; value: string }[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= bytes.length) throw new Error("truncated varint");
      const b = bytes[pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 70n) throw new Error("varint too long");
    }
  };
  try {
    while (pos < bytes.length) {
      const tag = varint();
      const field = Number(tag >> 3n);
      const wireType = Number(tag & 7n);
      let value: string;
      if (wireType === 0) value = varint().toString();
      else if (wireType === 1 || wireType === 5) {
        const n = wireType === 1 ? 8 : 4;
        if (pos + n > bytes.length) throw new Error("truncated fixed field");
        value = Buffer.from(bytes.subarray(pos, pos + n)).toString("hex");
        pos += n;
      } else if (wireType === 2) {
        const n = Number(varint());
        if (pos + n > bytes.length) throw new Error("truncated length-delimited field");
        value = Buffer.from(bytes.subarray(pos, pos + n)).toString("base64");
        pos += n;
      } else throw new Error(`wire type ${wireType}`);
      out.push({ field, wireType, value });
    }
    return { $raw: out, $why: why };
  } catch (e) {
    return {
      $raw: [...out, { field: 0, wireType: -1, value: Buffer.from(bytes.subarray(pos)).toString("base64") }],
      $why: `${why}; not protobuf from byte ${pos}: ${(e as Error).message}`,
    };
  }
}

async function methodTypes(
  schema: SchemaSource,
  method: string,
): Promise<{ input: DescMessage; output: DescMessage; kind: DecodedCall["kind"] } | string> {
  const [service, name] = method.split("/");
  try {
    const found = await schema.findType(service);
    if (found?.kind !== "service") return `the schema has no service ${service}`;
    const m = found.methods.find((x) => x.name === name);
    if (!m) return `service ${service} has no method ${name}`;
    return { input: m.input, output: m.output, kind: m.methodKind };
  } catch (e) {
    return `the schema could not be read: ${(e as Error).message}`;
  }
}

function decodeOne(desc: DescMessage | undefined, why: string, b64: string, json: boolean): unknown {
  const bytes = Buffer.from(b64, "base64");
  if (json) {
    try {
      return JSON.parse(bytes.toString("utf8"));
    } catch {
      return { $text: bytes.toString("utf8"), $why: "not JSON" };
    }
  }
  if (!desc) return rawFields(bytes, why);
  try {
    return toJson(desc, fromBinary(desc, bytes));
  } catch (e) {
    return rawFields(bytes, `does not decode as ${desc.typeName}: ${(e as Error).message}`);
  }
}

/** The error details whose type the schema knows, as JSON (the others are left out). */
async function decodeDetails(
  details: ProxiedCall["details"],
  schema: SchemaSource | undefined,
): Promise<{ type: string; json: unknown }[]> {
  const out: { type: string; json: unknown }[] = [];
  for (const d of details ?? []) {
    try {
      const desc = await schema?.findType(d.type);
      if (desc?.kind !== "message") continue;
      out.push({ type: d.type, json: toJson(desc, fromBinary(desc, Buffer.from(d.value, "base64"))) });
    } catch {
      // A detail that does not decode as its type is left out; its bytes stay in the call.
    }
  }
  return out;
}

/** The call's messages as JSON (never throws). */
export async function decodeCall(
  call: Pick<
    ProxiedCall,
    "method" | "requestMessages" | "responseMessages" | "requestHeaders" | "protocol" | "details"
  >,
  schema: SchemaSource | undefined,
): Promise<DecodedCall> {
  const contentType = call.requestHeaders["content-type"] ?? "";
  const json = /[+/]json\b/.test(contentType);
  const types = schema ? await methodTypes(schema, call.method) : "no schema";
  const why = typeof types === "string" ? types : "";
  const input = typeof types === "object" ? types.input : undefined;
  const output = typeof types === "object" ? types.output : undefined;
  const details = await decodeDetails(call.details, schema);
  return {
    request: call.requestMessages.map((m) => decodeOne(input, why, m, json)),
    response: call.responseMessages.map((m) => decodeOne(output, why, m, json)),
    ...(typeof types === "object" ? { kind: types.kind } : {}),
    ...(details.length > 0 ? { details } : {}),
  };
}
