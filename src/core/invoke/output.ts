// Prints response messages as protobuf JSON, byte for byte as `buf curl` does (Go's protojson, then
// re-indented): fields in declaration order, lowerCamelCase names, enums by name, 64-bit integers as
// strings, bytes as standard base64, map keys sorted, well-known types in their JSON forms, floats
// with the shortest representation of their own width, and `--emit-defaults` as EmitUnpopulated.
//
// This is written directly against the descriptors instead of going through toJson() and
// JSON.stringify(): the generic path cannot print a float32 with float32's shortest digits, sort map
// keys, print `null` for unset message fields, or print -0, and it would build an intermediate
// object for every one of possibly many thousands of streamed messages.
import {
  type DescExtension,
  type DescField,
  type DescMessage,
  fromBinary,
  getExtension,
  isFieldSet,
  type JsonValue,
  type Message,
  ScalarType,
  toJson,
} from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { ProtocallError } from "../errors";
import { wrapperTypeNames } from "../schema/wrapper-types";

export interface JsonOutputOptions {
  /** `--emit-defaults`: zero values, `[]`, `{}`, and `null` for unset fields with presence. */
  emitDefaults?: boolean;
  /** One indentation step; two spaces for response messages, three for error details. */
  indent?: string;
  /** Finds the message type named by a google.protobuf.Any (full name, no type URL prefix). */
  resolveAny?: (typeName: string) => DescMessage | undefined;
  /** Finds the extension of a message type with a field number, to print it as "[pkg.ext]". */
  resolveExtension?: (extendee: DescMessage, number: number) => DescExtension | undefined;
}

const IMPLICIT = 2; // google.protobuf.FeatureSet.FieldPresence.IMPLICIT

const WRAPPERS = wrapperTypeNames;
const GENERIC_WKT = new Set([
  "google.protobuf.Timestamp",
  "google.protobuf.Duration",
  "google.protobuf.FieldMask",
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
]);

/** Formats one message (no trailing newline). */
export function formatMessageJson(
  desc: DescMessage,
  message: Message,
  options: JsonOutputOptions = {},
): string {
  const w = new JsonWriter(options);
  return w.message(desc, message, 0);
}

/** A formatter to reuse for many messages (a stream): same output as formatMessageJson. */
export function createMessageFormatter(
  options: JsonOutputOptions = {},
): (desc: DescMessage, message: Message) => string {
  const w = new JsonWriter(options);
  return (desc, message) => w.message(desc, message, 0);
}

/** Formats any JSON value with the same layout (objects keep their key order). */
export function formatJsonValue(value: JsonValue, indent = "  "): string {
  return new JsonWriter({ indent }).json(value, 0, false);
}

/** Formats a double as Go's protojson does (the same as JavaScript, except for -0). */
export function formatDouble(n: number): string {
  if (Number.isNaN(n)) return '"NaN"';
  if (n === Number.POSITIVE_INFINITY) return '"Infinity"';
  if (n === Number.NEGATIVE_INFINITY) return '"-Infinity"';
  if (n === 0 && Object.is(n, -0)) return "-0";
  return String(n);
}

/** Formats a float32 value with the fewest digits that read back as the same float32. */
export function formatFloat(n: number): string {
  if (!Number.isFinite(n) || n === 0) return formatDouble(n);
  const f = Math.fround(n);
  for (let p = 1; p < 10; p++) {
    const s = f.toPrecision(p);
    if (Math.fround(Number(s)) === f) return String(Number(s));
  }
  return String(f);
}

/** Compares strings by their UTF-8 bytes, as Go sorts map keys. */
function compareUtf8(a: string, b: string): number {
  // UTF-16 order equals UTF-8 order unless a surrogate pair meets a code unit above U+D7FF.
  if (/[\ud800-\uffff]/.test(a) || /[\ud800-\uffff]/.test(b)) {
    return Buffer.compare(Buffer.from(a), Buffer.from(b));
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

class JsonWriter {
  private readonly emitDefaults: boolean;
  private readonly unit: string;
  private readonly resolveAny?: (typeName: string) => DescMessage | undefined;
  private readonly resolveExtension?: (extendee: DescMessage, number: number) => DescExtension | undefined;
  private readonly indents: string[] = [""];

  constructor(options: JsonOutputOptions) {
    this.emitDefaults = options.emitDefaults ?? false;
    this.unit = options.indent ?? "  ";
    this.resolveAny = options.resolveAny;
    this.resolveExtension = options.resolveExtension;
  }

  private ind(depth: number): string {
    let s = this.indents[depth];
    if (s === undefined) {
      s = this.unit.repeat(depth);
      this.indents[depth] = s;
    }
    return s;
  }

  private object(entries: string[], depth: number): string {
    if (entries.length === 0) return "{}";
    const inner = this.ind(depth + 1);
    return `{\n${inner}${entries.join(`,\n${inner}`)}\n${this.ind(depth)}}`;
  }

  private array(items: string[], depth: number): string {
    if (items.length === 0) return "[]";
    const inner = this.ind(depth + 1);
    return `[\n${inner}${items.join(`,\n${inner}`)}\n${this.ind(depth)}]`;
  }

  message(desc: DescMessage, msg: Message, depth: number): string {
    const name = desc.typeName;
    if (name.startsWith("google.protobuf.")) {
      if (WRAPPERS.has(name)) {
        const field = desc.fields[0];
        return this.scalar(
          field.scalar ?? ScalarType.STRING,
          (msg as unknown as Record<string, unknown>).value,
        );
      }
      if (GENERIC_WKT.has(name)) return this.json(toJson(desc, msg), depth, true);
      if (name === "google.protobuf.Any") return this.any(msg, depth);
    }
    const record = msg as unknown as Record<string, unknown>;
    const entries: string[] = [];
    for (const field of desc.fields) {
      let value: string | undefined;
      if (field.oneof) {
        const oneof = record[field.oneof.localName] as { case?: string; value?: unknown };
        if (oneof.case === field.localName) value = this.singular(field, oneof.value, depth + 1);
      } else if (this.isSet(msg, field, record)) {
        value = this.field(field, record[field.localName], depth + 1);
      } else if (this.emitDefaults) {
        value = this.unpopulated(field);
      }
      if (value !== undefined) entries.push(`${JSON.stringify(field.jsonName)}: ${value}`);
    }
    const unknown = msg.$unknown;
    if (unknown && unknown.length > 0 && this.resolveExtension) this.extensions(desc, msg, depth, entries);
    return this.object(entries, depth);
  }

  /** Extension fields after the declared ones, sorted by full name, as Go's protojson prints them. */
  private extensions(desc: DescMessage, msg: Message, depth: number, entries: string[]): void {
    const found = new Map<string, DescExtension>();
    for (const u of msg.$unknown ?? []) {
      const ext = this.resolveExtension?.(desc, u.no);
      if (ext) found.set(ext.typeName, ext);
    }
    for (const name of [...found.keys()].sort(compareUtf8)) {
      const ext = found.get(name) as DescExtension;
      let value: unknown;
      try {
        value = getExtension(msg, ext);
      } catch (err) {
        throw new ProtocallError(
          `cannot print extension [${name}] of ${desc.typeName}: ${(err as Error).message}`,
        );
      }
      entries.push(`"[${name}]": ${this.field(ext as unknown as DescField, value, depth + 1)}`);
    }
  }

  private isSet(msg: Message, field: DescField, record: Record<string, unknown>): boolean {
    if (isFieldSet(msg, field)) return true;
    // Go counts a negative zero as populated; protobuf-es treats it as the zero value.
    if (field.fieldKind === "scalar" && field.presence === IMPLICIT) {
      const v = record[field.localName];
      return typeof v === "number" && v === 0 && Object.is(v, -0);
    }
    return false;
  }

  /** The value printed for an unset field with --emit-defaults, or undefined to leave it out. */
  private unpopulated(field: DescField): string | undefined {
    switch (field.fieldKind) {
      case "list":
        return "[]";
      case "map":
        return "{}";
      case "message":
        return "null";
      default:
        // proto3 `optional` fields sit in a synthetic oneof and are left out, like real oneofs.
        if (field.proto.proto3Optional) return undefined;
        if (field.presence !== IMPLICIT) return "null";
        if (field.fieldKind === "enum")
          return this.enumValue(field.enum.typeName, field.enum.values[0]?.number ?? 0, field);
        return this.scalar(field.scalar, zeroValue(field.scalar));
    }
  }

  private field(field: DescField, value: unknown, depth: number): string {
    switch (field.fieldKind) {
      case "list": {
        const list = value as unknown[];
        const items: string[] = new Array(list.length);
        for (let i = 0; i < list.length; i++) items[i] = this.singular(field, list[i], depth + 1);
        return this.array(items, depth);
      }
      case "map": {
        const map = value as Record<string, unknown>;
        const keys = Object.keys(map);
        sortMapKeys(keys, field.mapKey);
        const entries: string[] = new Array(keys.length);
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i];
          entries[i] = `${JSON.stringify(k)}: ${this.singular(field, map[k], depth + 1)}`;
        }
        return this.object(entries, depth);
      }
      default:
        return this.singular(field, value, depth);
    }
  }

  /** One value of a singular, list or map field. */
  private singular(field: DescField, value: unknown, depth: number): string {
    const m = field.message;
    if (m) {
      // protobuf-es keeps singular wrapper fields (outside oneofs) as the bare scalar, and
      // google.protobuf.Struct fields (outside google.protobuf.Value) as a plain JSON object.
      if (field.fieldKind === "message" && !field.oneof && WRAPPERS.has(m.typeName) && !isMessage(value)) {
        return this.scalar(m.fields[0].scalar ?? ScalarType.STRING, value);
      }
      if (m.typeName === "google.protobuf.Struct" && !isMessage(value)) {
        return this.json(value as JsonValue, depth, true);
      }
      return this.message(m, value as Message, depth);
    }
    if (field.enum) return this.enumValue(field.enum.typeName, value as number, field);
    return this.scalar(field.scalar ?? ScalarType.STRING, value);
  }

  private enumValue(typeName: string, n: number, field: DescField): string {
    if (typeName === "google.protobuf.NullValue") return "null";
    const e = field.enum;
    const v = e?.value[n];
    return v ? `"${v.name}"` : String(n);
  }

  scalar(type: ScalarType, value: unknown): string {
    switch (type) {
      case ScalarType.STRING:
        return JSON.stringify(value ?? "");
      case ScalarType.BOOL:
        return value ? "true" : "false";
      case ScalarType.DOUBLE:
        return formatDouble(Number(value ?? 0));
      case ScalarType.FLOAT:
        return formatFloat(Number(value ?? 0));
      case ScalarType.INT64:
      case ScalarType.UINT64:
      case ScalarType.SINT64:
      case ScalarType.FIXED64:
      case ScalarType.SFIXED64:
        return `"${String(value ?? 0)}"`;
      case ScalarType.BYTES:
        return `"${base64Encode((value as Uint8Array | undefined) ?? new Uint8Array(0), "std")}"`;
      default:
        return String(value ?? 0);
    }
  }

  private any(msg: Message, depth: number): string {
    const any = msg as unknown as { typeUrl: string; value: Uint8Array };
    if (!any.typeUrl) {
      if (any.value.length === 0) return "{}";
      throw new ProtocallError("cannot print a google.protobuf.Any that has a value but no type URL");
    }
    const typeName = any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1);
    const desc = this.resolveAny?.(typeName);
    if (!desc) {
      throw new ProtocallError(
        `cannot print google.protobuf.Any: unable to resolve "${any.typeUrl}": type "${typeName}" is not in the schema; add a --schema that defines it`,
      );
    }
    const inner = decodeAny(desc, any.value);
    const typeEntry = `"@type": ${JSON.stringify(any.typeUrl)}`;
    if (
      desc.typeName.startsWith("google.protobuf.") &&
      (WRAPPERS.has(desc.typeName) ||
        GENERIC_WKT.has(desc.typeName) ||
        desc.typeName === "google.protobuf.Any")
    ) {
      return this.object([typeEntry, `"value": ${this.message(desc, inner, depth + 1)}`], depth);
    }
    const body = this.message(desc, inner, depth);
    if (body === "{}") return this.object([typeEntry], depth);
    // Splice "@type" in front of the embedded message's own fields.
    const inner1 = this.ind(depth + 1);
    return `{\n${inner1}${typeEntry},${body.slice(1)}`;
  }

  /** Writes a plain JSON value (the JSON form of Struct, Timestamp, ...); Struct keys sorted. */
  json(value: JsonValue, depth: number, sortKeys: boolean): string {
    if (value === null) return "null";
    switch (typeof value) {
      case "string":
        return JSON.stringify(value);
      case "number":
        return formatDouble(value);
      case "boolean":
        return value ? "true" : "false";
    }
    if (Array.isArray(value)) {
      return this.array(
        value.map((v) => this.json(v, depth + 1, sortKeys)),
        depth,
      );
    }
    const keys = Object.keys(value);
    if (sortKeys) keys.sort(compareUtf8);
    return this.object(
      keys.map(
        (k) =>
          `${JSON.stringify(k)}: ${this.json((value as Record<string, JsonValue>)[k], depth + 1, sortKeys)}`,
      ),
      depth,
    );
  }
}

function decodeAny(desc: DescMessage, value: Uint8Array): Message {
  try {
    return fromBinary(desc, value);
  } catch (err) {
    throw new ProtocallError(
      `cannot print google.protobuf.Any: its value is not a valid ${desc.typeName}: ${(err as Error).message}`,
    );
  }
}

function isMessage(value: unknown): boolean {
  return typeof value === "object" && value !== null && "$typeName" in value;
}

function zeroValue(type: ScalarType): unknown {
  switch (type) {
    case ScalarType.STRING:
      return "";
    case ScalarType.BOOL:
      return false;
    case ScalarType.BYTES:
      return new Uint8Array(0);
    default:
      return 0;
  }
}

function sortMapKeys(keys: string[], keyType: ScalarType | undefined): void {
  switch (keyType) {
    case ScalarType.STRING:
    case ScalarType.BOOL:
    case undefined:
      keys.sort(compareUtf8);
      return;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      keys.sort((a, b) => {
        const x = BigInt(a);
        const y = BigInt(b);
        return x < y ? -1 : x > y ? 1 : 0;
      });
      return;
    default:
      keys.sort((a, b) => Number(a) - Number(b));
  }
}

const reachesAnyCache = new WeakMap<DescMessage, boolean>();

/** Whether a message of this type can hold a google.protobuf.Any anywhere inside it. */
export function reachesAny(desc: DescMessage, seen?: Set<DescMessage>): boolean {
  const cached = reachesAnyCache.get(desc);
  if (cached !== undefined) return cached;
  seen ??= new Set<DescMessage>();
  if (desc.typeName === "google.protobuf.Any") return true;
  if (seen.has(desc)) return false;
  seen.add(desc);
  let result = false;
  for (const f of desc.fields) {
    if (f.message && reachesAny(f.message, seen)) {
      result = true;
      break;
    }
  }
  if (seen.size === 1 || result) reachesAnyCache.set(desc, result);
  return result;
}

/**
 * The type names of all google.protobuf.Any values inside a message (nested ones included, as far
 * as `resolve` can already decode them), so a caller can load them before formatting.
 */
export function collectAnyTypeNames(
  desc: DescMessage,
  message: Message,
  resolve: (typeName: string) => DescMessage | undefined = () => undefined,
  out = new Set<string>(),
): Set<string> {
  if (!reachesAny(desc)) return out;
  if (desc.typeName === "google.protobuf.Any") {
    const any = message as unknown as { typeUrl: string; value: Uint8Array };
    if (!any.typeUrl) return out;
    const name = any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1);
    out.add(name);
    const inner = resolve(name);
    if (inner) {
      try {
        collectAnyTypeNames(inner, fromBinary(inner, any.value), resolve, out);
      } catch {
        // Reported when the value is printed.
      }
    }
    return out;
  }
  const record = message as unknown as Record<string, unknown>;
  for (const f of desc.fields) {
    if (!f.message) continue;
    let value: unknown;
    if (f.oneof) {
      const o = record[f.oneof.localName] as { case?: string; value?: unknown };
      if (o.case !== f.localName) continue;
      value = o.value;
    } else {
      value = record[f.localName];
    }
    if (value === undefined) continue;
    if (f.fieldKind === "list")
      for (const v of value as Message[]) collectAnyTypeNames(f.message, v, resolve, out);
    else if (f.fieldKind === "map")
      for (const v of Object.values(value as Record<string, Message>))
        collectAnyTypeNames(f.message, v, resolve, out);
    else collectAnyTypeNames(f.message, value as Message, resolve, out);
  }
  return out;
}
