// Messages made up from the schema, for a method no stub answers: every field filled with a plausible
// value of its type (names, e-mail addresses, ids and URLs by the field's name; the first non-zero enum
// value or another one; a time near 2026-01-01 for a Timestamp; well-known types in their JSON forms),
// one or two elements per list, one entry per map, the first member of each oneof.
//
// Deterministic: the same seed, message type and index give the same message, so a client's snapshot
// tests stay stable from run to run. The random numbers come from a small seeded generator (mulberry32)
// rather than Math.random, which cannot be seeded. The result is proto JSON, which fromJson reads back.
import {
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  ScalarType,
} from "@bufbuild/protobuf";

export interface GenerateOptions {
  /** The seed; the same seed gives the same messages. Default 1. */
  seed?: number;
  /** Which message of a stream (from 0): each gets values of its own. Default 0. */
  index?: number;
  /** How many message levels below the root are filled (deeper ones are `{}`). Default 5. */
  maxDepth?: number;
}

/** A deterministic stream of numbers in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit hash of a string (FNV-1a), to mix the type name into the seed. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim"];
const lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"];
const words = ["alpha", "bravo", "delta", "echo", "falcon", "harbor", "meadow", "orbit", "quartz", "summit"];

interface Gen {
  next: () => number;
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  maxDepth: number;
}

/** A made-up message of the type, as proto JSON. */
export function generateMessage(desc: DescMessage, options: GenerateOptions = {}): JsonValue {
  const next = random(
    hash(desc.typeName) ^ Math.imul((options.seed ?? 1) | 0, 0x9e3779b1) ^ (options.index ?? 0),
  );
  const gen: Gen = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    maxDepth: options.maxDepth ?? 5,
  };
  return messageValue(desc, 0, gen, []);
}

function wkt(desc: DescMessage, gen: Gen): JsonValue | undefined {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp": {
      const base = Date.UTC(2026, 0, 1);
      return new Date(base + gen.int(0, 365 * 24 * 3600) * 1000).toISOString().replace(".000Z", "Z");
    }
    case "google.protobuf.Duration":
      return `${gen.int(1, 3600)}s`;
    case "google.protobuf.FieldMask":
      return desc.fields.length > 0 ? "paths" : "";
    case "google.protobuf.Struct":
      return { [gen.pick(words)]: gen.pick(words) };
    case "google.protobuf.Value":
      return gen.pick(words);
    case "google.protobuf.ListValue":
      return [gen.pick(words)];
    case "google.protobuf.Empty":
    case "google.protobuf.Any":
      // An Any needs a type that the reader can resolve; an empty one is valid.
      return {};
    case "google.protobuf.DoubleValue":
    case "google.protobuf.FloatValue":
      return Math.round(gen.next() * 10000) / 100;
    case "google.protobuf.Int64Value":
    case "google.protobuf.UInt64Value":
      return String(gen.int(1, 1_000_000));
    case "google.protobuf.Int32Value":
    case "google.protobuf.UInt32Value":
      return gen.int(1, 1000);
    case "google.protobuf.BoolValue":
      return gen.next() < 0.5;
    case "google.protobuf.StringValue":
      return gen.pick(words);
    case "google.protobuf.BytesValue":
      return Buffer.from(gen.pick(words)).toString("base64");
    default:
      return undefined;
  }
}

function messageValue(desc: DescMessage, depth: number, gen: Gen, stack: DescMessage[]): JsonValue {
  const known = wkt(desc, gen);
  if (known !== undefined) return known;
  const obj: JsonObject = {};
  // Recursive types are expanded once; deep ones stop at maxDepth.
  if (depth > gen.maxDepth || stack.includes(desc)) return obj;
  stack.push(desc);
  for (const field of desc.fields) {
    if (field.oneof !== undefined && field.oneof.fields[0] !== field) continue;
    const value = fieldValue(field, depth + 1, gen, stack);
    if (value !== undefined) obj[field.jsonName] = value;
  }
  stack.pop();
  return obj;
}

function fieldValue(field: DescField, depth: number, gen: Gen, stack: DescMessage[]): JsonValue | undefined {
  switch (field.fieldKind) {
    case "list": {
      if (field.message && stack.includes(field.message)) return [];
      const n = gen.int(1, 2);
      const out: JsonValue[] = [];
      for (let i = 0; i < n; i++) out.push(single(field, depth, gen, stack));
      return out;
    }
    case "map": {
      if (field.message && stack.includes(field.message)) return {};
      return { [mapKey(field.mapKey, gen)]: single(field, depth, gen, stack) };
    }
    default:
      return single(field, depth, gen, stack);
  }
}

function single(
  field: DescField & { scalar?: ScalarType; enum?: DescField["enum"]; message?: DescMessage },
  depth: number,
  gen: Gen,
  stack: DescMessage[],
): JsonValue {
  if (field.message !== undefined) return messageValue(field.message, depth, gen, stack);
  if (field.enum !== undefined) {
    if (field.enum.typeName === "google.protobuf.NullValue") return null;
    const values = field.enum.values.filter((v) => v.number !== 0);
    return (values.length > 0 ? gen.pick(values) : field.enum.values[0])?.name ?? 0;
  }
  return scalar(field.scalar ?? ScalarType.STRING, field.name, gen);
}

function mapKey(type: ScalarType, gen: Gen): string {
  if (type === ScalarType.STRING) return gen.pick(words);
  if (type === ScalarType.BOOL) return "true";
  return String(gen.int(1, 100));
}

/** A plausible value of a scalar, guided by the field's name. */
function scalar(type: ScalarType, name: string, gen: Gen): JsonValue {
  switch (type) {
    case ScalarType.STRING:
      return stringFor(name.toLowerCase(), gen);
    case ScalarType.BYTES:
      return Buffer.from(`${gen.pick(words)}-${gen.int(100, 999)}`).toString("base64");
    case ScalarType.BOOL:
      return gen.next() < 0.5;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return Math.round(gen.next() * 100000) / 100;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return String(gen.int(1, 1_000_000));
    default:
      return gen.int(1, 1000);
  }
}

function stringFor(name: string, gen: Gen): string {
  const first = gen.pick(firstNames);
  const last = gen.pick(lastNames);
  if (/e?mail/.test(name)) return `${first.toLowerCase()}.${last.toLowerCase()}@example.com`;
  if (/(^|_)(uuid|id)$/.test(name)) {
    let hex = "";
    for (let i = 0; i < 32; i++) hex += Math.floor(gen.next() * 16).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  }
  if (/url|uri|link|href/.test(name)) return `https://example.com/${gen.pick(words)}/${gen.int(1, 999)}`;
  if (/phone/.test(name)) return `+1-555-${String(gen.int(0, 9999)).padStart(4, "0")}`;
  if (/(^|_)name$|author|user|owner/.test(name)) return `${first} ${last}`;
  return `${gen.pick(words)}-${gen.int(1, 999)}`;
}
