// JSON skeletons of messages: every field with an example value of its type, in protobuf JSON form,
// ready to be edited into a request body. The result always parses back with fromJson.
import {
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  ScalarType,
} from "@bufbuild/protobuf";
import { wrapperScalars } from "./wrapper-types";

export interface SkeletonOptions {
  /**
   * How many message levels below the root are expanded; deeper message fields are written as `{}`
   * (or `[]` for lists and `{}` for maps). Default 6.
   */
  maxDepth?: number;
  /**
   * How many times a message type may be expanded inside itself. Default 0: a recursive field is
   * written as an empty message, so `Node { left: Node }` gives `{"left": {}}`.
   */
  maxRecursion?: number;
}

const wktJson: Record<string, () => JsonValue> = {
  "google.protobuf.Timestamp": () => "1970-01-01T00:00:00Z",
  "google.protobuf.Duration": () => "0s",
  "google.protobuf.FieldMask": () => "",
  "google.protobuf.Struct": () => ({}),
  "google.protobuf.Value": () => null,
  "google.protobuf.ListValue": () => [],
  "google.protobuf.Empty": () => ({}),
  // An Any holds a message of a type named by "@type"; fromJson needs a resolvable type to read
  // more than that, so the skeleton leaves the type to fill in.
  "google.protobuf.Any": () => ({}),
  // A wrapper is written as the scalar it wraps.
  ...Object.fromEntries(
    Object.entries(wrapperScalars).map(([name, scalar]) => [name, () => scalarSkeleton(scalar)]),
  ),
};

/** The example value of a scalar in protobuf JSON. */
export function scalarSkeleton(scalar: ScalarType): JsonValue {
  switch (scalar) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return "";
    case ScalarType.BOOL:
      return false;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return "0";
    default:
      return 0;
  }
}

/** The example key of a map in protobuf JSON (keys are always strings). */
function mapKeySkeleton(scalar: ScalarType): string {
  switch (scalar) {
    case ScalarType.STRING:
      return "";
    case ScalarType.BOOL:
      return "false";
    default:
      return "0";
  }
}

/**
 * A JSON skeleton of a message: every field with an example value, the first member of each oneof
 * only, one element per list and one entry per map, well-known types in their JSON forms.
 */
export function messageSkeleton(desc: DescMessage, options?: SkeletonOptions): JsonValue {
  const limits = { maxDepth: options?.maxDepth ?? 6, maxRecursion: options?.maxRecursion ?? 0 };
  return messageValue(desc, 0, [], limits);
}

/** The example value of one field (as it appears under its JSON name). */
export function fieldSkeleton(field: DescField, options?: SkeletonOptions): JsonValue {
  const limits = { maxDepth: options?.maxDepth ?? 6, maxRecursion: options?.maxRecursion ?? 0 };
  return fieldValue(field, 1, [field.parent], limits);
}

interface Limits {
  maxDepth: number;
  maxRecursion: number;
}

function messageValue(desc: DescMessage, depth: number, stack: DescMessage[], limits: Limits): JsonValue {
  const wkt = wktJson[desc.typeName];
  if (wkt !== undefined) return wkt();
  const obj: JsonObject = {};
  if (!canExpand(desc, depth, stack, limits)) return obj;
  stack.push(desc);
  for (const field of desc.fields) {
    if (field.oneof !== undefined && field.oneof.fields[0] !== field) continue;
    obj[field.jsonName] = fieldValue(field, depth + 1, stack, limits);
  }
  stack.pop();
  return obj;
}

function canExpand(desc: DescMessage, depth: number, stack: DescMessage[], limits: Limits): boolean {
  if (depth > limits.maxDepth) return false;
  let seen = 0;
  for (const m of stack) if (m === desc || m.typeName === desc.typeName) seen++;
  return seen <= limits.maxRecursion;
}

function singular(
  field: { scalar?: ScalarType; enum?: DescField["enum"]; message?: DescMessage },
  depth: number,
  stack: DescMessage[],
  limits: Limits,
): JsonValue {
  if (field.message !== undefined) return messageValue(field.message, depth, stack, limits);
  if (field.enum !== undefined) {
    if (field.enum.typeName === "google.protobuf.NullValue") return null;
    return field.enum.values[0]?.name ?? 0;
  }
  return scalarSkeleton(field.scalar ?? ScalarType.STRING);
}

function fieldValue(field: DescField, depth: number, stack: DescMessage[], limits: Limits): JsonValue {
  switch (field.fieldKind) {
    case "list": {
      // A list of messages that may not be expanded stays empty rather than holding `{}`.
      if (field.message !== undefined && wktJson[field.message.typeName] === undefined) {
        if (!canExpand(field.message, depth, stack, limits)) return [];
      }
      return [singular(field, depth, stack, limits)];
    }
    case "map": {
      if (field.message !== undefined && wktJson[field.message.typeName] === undefined) {
        if (!canExpand(field.message, depth, stack, limits)) return {};
      }
      return { [mapKeySkeleton(field.mapKey)]: singular(field, depth, stack, limits) };
    }
    default:
      return singular(field, depth, stack, limits);
  }
}
