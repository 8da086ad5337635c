// Decodes the messages of google/protobuf/descriptor.proto (FileDescriptorProto, FileDescriptorSet)
// from the binary format without @bufbuild/protobuf's descriptor of descriptor.proto. Building that
// descriptor (its boot, ~12 ms) and compiling its readers is the largest single cost of a cold
// `protocall curl`, and every schema source needs these messages decoded first.
//
// The result is the same as fromBinary(FileDescriptorProtoSchema, bytes), property for property:
// messages are objects with `$typeName`, created like create() creates proto2 messages (zero values
// on a prototype shared by the type, set fields as own properties, lists always present, message
// fields absent until set), unknown fields in `$unknown` as { no, wireType, data }, unknown values
// of closed enums kept as unknown fields, a repeated message field merged, the same recursion
// limit and the same errors (the reader is the library's own BinaryReader). The field tables come
// from the library's embedded descriptor (scripts/gen-descriptor-table.mjs);
// test/core/schema/descriptor-decode.test.ts compares both decoders on real and damaged input.
//
// It imports nothing but the wire format's reader and writer: the bundles build generated files with
// it while the library's own modules may still be initialising (scripts/embedded-file-desc.mjs), so
// it must not need the package's index, which can be one of them.
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type { FileDescriptorProto, FileDescriptorSet } from "@bufbuild/protobuf/wkt";
import { descriptorEnums, descriptorTypes, type FieldKind } from "./descriptor-table";

/** The values of the library's ScalarType (the scalar types of descriptor.proto's Type). */
const ScalarType = {
  DOUBLE: 1,
  FLOAT: 2,
  INT64: 3,
  UINT64: 4,
  INT32: 5,
  FIXED64: 6,
  FIXED32: 7,
  BOOL: 8,
  STRING: 9,
  BYTES: 12,
  UINT32: 13,
  SFIXED32: 15,
  SFIXED64: 16,
  SINT32: 17,
  SINT64: 18,
} as const;
type ScalarType = (typeof ScalarType)[keyof typeof ScalarType];

/** fromBinary's default recursion limit. */
const RECURSION_LIMIT = 100;

interface CompiledField {
  readonly name: string;
  readonly kind: FieldKind;
  /** Scalar type (S, LS); INT32 for enums. */
  readonly scalar: ScalarType;
  readonly strict: boolean;
  /** Message type (M, LM). */
  type?: CompiledType;
  /** Known values of a closed enum (E). */
  readonly values?: ReadonlySet<number>;
}

interface CompiledType {
  readonly typeName: string;
  readonly prototype: Record<string, unknown>;
  /** Lists, created on every message (in declaration order, as create() does). */
  readonly lists: readonly string[];
  readonly fields: ReadonlyMap<number, CompiledField>;
}

let compiled: Map<string, CompiledType> | undefined;

function scalarZero(type: ScalarType): unknown {
  switch (type) {
    case ScalarType.STRING:
      return "";
    case ScalarType.BOOL:
      return false;
    case ScalarType.BYTES:
      return new Uint8Array(0);
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return BigInt(0);
    default:
      return 0;
  }
}

function compile(): Map<string, CompiledType> {
  const byIndex: CompiledType[] = [];
  const enumSets = descriptorEnums.map((values) => new Set(values));
  const pending: [CompiledField, number][] = [];
  for (const spec of descriptorTypes) {
    const prototype: Record<string, unknown> = {};
    const lists: string[] = [];
    const fields = new Map<number, CompiledField>();
    for (const [no, name, kind, arg, zero, strict] of spec.fields) {
      const isScalar = kind === "S" || kind === "LS";
      const field: CompiledField = {
        name,
        kind,
        scalar: isScalar ? (arg as ScalarType) : ScalarType.INT32,
        strict: strict === 1,
        values: kind === "E" ? enumSets[arg] : undefined,
      };
      if (kind === "M" || kind === "LM") pending.push([field, arg]);
      if (kind === "S") prototype[name] = zero ?? scalarZero(arg as ScalarType);
      else if (kind === "E" || kind === "EO") prototype[name] = zero;
      else if (kind !== "M") lists.push(name);
      fields.set(no, field);
    }
    byIndex.push({ typeName: spec.typeName, prototype, lists, fields });
  }
  for (const [field, index] of pending) field.type = byIndex[index];
  return new Map(byIndex.map((t) => [t.typeName, t]));
}

function typeOf(typeName: string): CompiledType {
  compiled ??= compile();
  const type = compiled.get(typeName);
  if (!type) throw new Error(`${typeName} is not a message of google/protobuf/descriptor.proto`);
  return type;
}

function newMessage(type: CompiledType): Record<string, unknown> {
  const message = Object.create(type.prototype) as Record<string, unknown>;
  message.$typeName = type.typeName;
  for (const name of type.lists) message[name] = [];
  return message;
}

function readScalar(reader: BinaryReader, type: ScalarType, strict: boolean): unknown {
  switch (type) {
    case ScalarType.STRING:
      return reader.string(strict);
    case ScalarType.BOOL:
      return reader.bool();
    case ScalarType.DOUBLE:
      return reader.double();
    case ScalarType.FLOAT:
      return reader.float();
    case ScalarType.INT32:
      return reader.int32();
    case ScalarType.INT64:
      return reader.int64();
    case ScalarType.UINT64:
      return reader.uint64();
    case ScalarType.FIXED64:
      return reader.fixed64();
    case ScalarType.BYTES:
      return reader.bytes();
    case ScalarType.FIXED32:
      return reader.fixed32();
    case ScalarType.SFIXED32:
      return reader.sfixed32();
    case ScalarType.SFIXED64:
      return reader.sfixed64();
    case ScalarType.SINT64:
      return reader.sint64();
    case ScalarType.UINT32:
      return reader.uint32();
    case ScalarType.SINT32:
      return reader.sint32();
  }
}

interface Unknown {
  no: number;
  wireType: WireType;
  data: Uint8Array;
}

function readMessage(
  type: CompiledType,
  message: Record<string, unknown>,
  reader: BinaryReader,
  length: number,
  depth: number,
): void {
  if (depth > RECURSION_LIMIT) {
    throw new Error(
      `cannot decode message ${type.typeName} from binary: maximum recursion depth of ${RECURSION_LIMIT} reached`,
    );
  }
  const end = reader.pos + length;
  const unknown = (message.$unknown as Unknown[] | undefined) ?? [];
  while (reader.pos < end) {
    const [no, wireType] = reader.tag();
    const field = type.fields.get(no);
    if (field === undefined) {
      unknown.push({ no, wireType, data: reader.skip(wireType, no, RECURSION_LIMIT - depth) });
      continue;
    }
    const name = field.name;
    switch (field.kind) {
      case "S":
        message[name] = readScalar(reader, field.scalar, field.strict);
        break;
      case "EO":
        message[name] = reader.int32();
        break;
      case "E": {
        const value = reader.int32();
        if ((field.values as ReadonlySet<number>).has(value)) {
          message[name] = value;
        } else {
          // As fromBinary keeps it: an unknown field of its own, on the message as it is now.
          const own = (message.$unknown as Unknown[] | undefined) ?? [];
          own.push({ no, wireType, data: new BinaryWriter().int32(value).finish() });
          message.$unknown = own;
        }
        break;
      }
      case "M": {
        const childType = field.type as CompiledType;
        const child = (message[name] as Record<string, unknown> | undefined) ?? newMessage(childType);
        readMessage(childType, child, reader, reader.uint32(), depth + 1);
        message[name] = child;
        break;
      }
      case "LM": {
        const childType = field.type as CompiledType;
        const child = newMessage(childType);
        readMessage(childType, child, reader, reader.uint32(), depth + 1);
        (message[name] as unknown[]).push(child);
        break;
      }
      case "LS":
      case "LE": {
        const items = message[name] as unknown[];
        const scalar = field.scalar;
        if (
          wireType === WireType.LengthDelimited &&
          scalar !== ScalarType.STRING &&
          scalar !== ScalarType.BYTES
        ) {
          const packedEnd = reader.uint32() + reader.pos;
          while (reader.pos < packedEnd) items.push(readScalar(reader, scalar, field.strict));
        } else {
          items.push(readScalar(reader, scalar, field.strict));
        }
        break;
      }
    }
  }
  if (unknown.length > 0) message.$unknown = unknown;
}

/**
 * Decodes a message of descriptor.proto by its full name, e.g. "google.protobuf.FileDescriptorProto".
 * Throws what fromBinary throws on the same bytes.
 */
export function decodeDescriptorMessage<T>(typeName: string, bytes: Uint8Array): T {
  const type = typeOf(typeName);
  const message = newMessage(type);
  readMessage(type, message, new BinaryReader(bytes), bytes.byteLength, 1);
  return message as T;
}

/** fromBinary(FileDescriptorProtoSchema, bytes), without that schema. */
export function decodeFileDescriptorProto(bytes: Uint8Array): FileDescriptorProto {
  return decodeDescriptorMessage<FileDescriptorProto>("google.protobuf.FileDescriptorProto", bytes);
}

/** fromBinary(FileDescriptorSetSchema, bytes), without that schema. */
export function decodeFileDescriptorSet(bytes: Uint8Array): FileDescriptorSet {
  return decodeDescriptorMessage<FileDescriptorSet>("google.protobuf.FileDescriptorSet", bytes);
}

/**
 * A new message of descriptor.proto with the given fields set, as create(schema, init) makes it for
 * scalar, enum and list fields (message fields are taken as given).
 */
export function createDescriptorMessage<T>(typeName: string, init: Record<string, unknown> = {}): T {
  const message = newMessage(typeOf(typeName));
  for (const [key, value] of Object.entries(init)) if (value != null) message[key] = value;
  return message as T;
}

/**
 * Whether a field of a descriptor.proto message is set (an own property, as proto2 presence is
 * tracked): isFieldSet(message, Schema.field.x) for singular fields, without the schema.
 */
export function isDescriptorFieldSet(message: object, name: string): boolean {
  return Object.hasOwn(message, name) && (message as Record<string, unknown>)[name] !== undefined;
}
