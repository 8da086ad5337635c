// The schema side of `@assert` and `@capture`: follows a response path (assertion-syntax.ts)
// through the method's output type and the error detail types, as the response's proto JSON is
// shaped, and checks an assertion's operator and value against what the path leads to. The language
// server turns the problems into diagnostics (with quick fixes from `replacement`), and uses the
// steps for hover and completion.
//
// Proto JSON shapes: 64-bit integers are strings, other numbers are numbers (floats may be "NaN" or
// "Infinity"), enums are value names, bytes are base64 strings, Timestamp / Duration / FieldMask are
// strings, wrappers are their scalar, Struct / Value / Any hold anything. Messages in responses carry
// their fields' JSON names (`fullName`), never the proto names (`full_name`).

import type { JsonValue } from "@bufbuild/protobuf";
import {
  type DescEnum,
  type DescExtension,
  type DescField,
  type DescMessage,
  type DescMethod,
  ScalarType,
} from "@bufbuild/protobuf";
import { closest } from "../closest";
import { wrappedScalar } from "../schema/wrapper-types";
import {
  errorMembers,
  type JsonType,
  type PathSegment,
  type ResponsePath,
  type RpcAssertion,
} from "./assertion-syntax";
import type { Range } from "./types";

/** What a place in the response holds. */
export type Shape =
  | { kind: "message"; message: DescMessage; detail?: boolean }
  | { kind: "list"; of: Shape; what: string }
  | { kind: "map"; of: Shape; what: string }
  | {
      kind: "scalar";
      /** The JSON types the value has in a response. */
      json: JsonType[];
      /** For messages: "an int64 (a JSON string)", "a code name". */
      what: string;
      scalar?: ScalarType;
      enum?: DescEnum;
      /** A status code name. */
      codes?: boolean;
      /** `.length` applies (strings). */
      text?: boolean;
    }
  | { kind: "record"; what: string; members: Record<string, Shape> }
  | { kind: "names"; what: string }
  | { kind: "details" }
  | { kind: "any" };

export interface PathStep {
  segment: PathSegment;
  /** The field a key names, for hover. */
  field?: DescField | DescExtension;
  /** The message a `[Type]` segment names, for hover. */
  type?: DescMessage;
  /** What the path holds after this segment. */
  shape: Shape;
}

export interface SchemaProblem {
  range: Range;
  message: string;
  severity: "error" | "warning";
  code: string;
  /** Text that fixes the problem when it replaces the text at `range`. */
  replacement?: string;
}

export interface PathResolution {
  /** What the root holds. */
  root: Shape;
  /** One step per segment followed (fewer when a problem stopped the walk). */
  steps: PathStep[];
  /** What the whole path holds; undefined when a problem stopped the walk. */
  shape?: Shape;
  /** After `[*]`: the value is an array of `shape`. */
  projected: boolean;
  problem?: SchemaProblem;
}

const stringScalar = (what: string): Shape => ({ kind: "scalar", json: ["string"], what, text: true });
const anyShape: Shape = { kind: "any" };

/** What the root of a path holds for a method. */
export function rootShape(path: ResponsePath["root"], method: DescMethod): Shape {
  switch (path) {
    case "status":
      return { kind: "scalar", json: ["string"], what: "a code name", codes: true, text: true };
    case "duration":
      return { kind: "scalar", json: ["number"], what: "a number of milliseconds" };
    case "message":
      return messageShape(method.output);
    case "messages":
      return { kind: "list", of: messageShape(method.output), what: `a list of ${method.output.typeName}` };
    case "headers":
    case "trailers":
      return { kind: "names", what: `the ${path} by name` };
    case "error":
      return {
        kind: "record",
        what: "the error",
        members: {
          code: { kind: "scalar", json: ["string"], what: "a code name", codes: true, text: true },
          message: stringScalar("a string"),
          details: { kind: "details" },
        },
      };
  }
}

/** The shape of a message as proto JSON writes it (well-known types have their own forms). */
export function messageShape(message: DescMessage, detail = false): Shape {
  const name = message.typeName;
  const wrapped = wrappedScalar(name);
  if (wrapped !== undefined) return scalarShape(wrapped);
  switch (name) {
    case "google.protobuf.Timestamp":
      return stringScalar('a timestamp (a JSON string such as "2024-01-02T03:04:05Z")');
    case "google.protobuf.Duration":
      return stringScalar('a duration (a JSON string such as "1.5s")');
    case "google.protobuf.FieldMask":
      return stringScalar('a field mask (a JSON string such as "a,b.c")');
    case "google.protobuf.Struct":
    case "google.protobuf.Value":
    case "google.protobuf.Any":
      return anyShape;
    case "google.protobuf.ListValue":
      return { kind: "list", of: anyShape, what: "a list" };
  }
  return detail ? { kind: "message", message, detail } : { kind: "message", message };
}

const scalarNames: Record<number, string> = Object.fromEntries(
  Object.entries(ScalarType)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => [v, k.toLowerCase()]),
);

function scalarShape(scalar: ScalarType): Shape {
  const name = scalarNames[scalar];
  switch (scalar) {
    case ScalarType.STRING:
      return { kind: "scalar", json: ["string"], what: "a string", scalar, text: true };
    case ScalarType.BYTES:
      return { kind: "scalar", json: ["string"], what: "bytes (a base64 JSON string)", scalar, text: true };
    case ScalarType.BOOL:
      return { kind: "scalar", json: ["boolean"], what: "a bool", scalar };
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return { kind: "scalar", json: ["string"], what: `an ${name} (a JSON string)`, scalar };
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return { kind: "scalar", json: ["number", "string"], what: `a ${name}`, scalar };
    default:
      return { kind: "scalar", json: ["number"], what: `an ${name}`, scalar };
  }
}

function elementShape(field: DescField | DescExtension): Shape {
  if (field.message) return messageShape(field.message);
  if (field.enum) {
    if (field.enum.typeName === "google.protobuf.NullValue")
      return { kind: "scalar", json: ["null"], what: "null" };
    return {
      kind: "scalar",
      json: ["string"],
      what: `a ${field.enum.typeName} value name`,
      enum: field.enum,
    };
  }
  return scalarShape(field.scalar ?? ScalarType.STRING);
}

/** The shape of a field's value. */
export function fieldShape(field: DescField | DescExtension): Shape {
  if (field.fieldKind === "list") {
    return { kind: "list", of: elementShape(field), what: `a list (repeated ${typeText(field)})` };
  }
  if (field.fieldKind === "map") {
    return {
      kind: "map",
      of: elementShape(field),
      what: `a map (map<${scalarNames[field.mapKey]}, ${typeText(field)}>)`,
    };
  }
  return elementShape(field);
}

function typeText(field: DescField | DescExtension): string {
  return field.message?.typeName ?? field.enum?.typeName ?? scalarNames[field.scalar ?? ScalarType.STRING];
}

/** A short description of a shape for messages: "a message demo.v1.Reply", "a string". */
export function describeShape(s: Shape): string {
  switch (s.kind) {
    case "message":
      return `a message ${s.message.typeName}`;
    case "list":
    case "map":
    case "scalar":
    case "record":
    case "names":
      return s.what;
    case "details":
      return "a list of error details";
    case "any":
      return "any JSON value";
  }
}

/** The JSON types a shape may have in a response; undefined for any. */
export function jsonTypesOf(s: Shape): JsonType[] | undefined {
  switch (s.kind) {
    case "message":
    case "map":
    case "record":
    case "names":
      return ["object"];
    case "list":
    case "details":
      return ["array"];
    case "scalar":
      return s.json;
    case "any":
      return undefined;
  }
}

/**
 * Follows a path through the method's output type. `detailType` finds error detail types by full
 * name (undefined when unknown).
 */
export function resolveResponsePath(
  path: ResponsePath,
  method: DescMethod,
  detailType: (name: string) => DescMessage | undefined,
): PathResolution {
  const root = rootShape(path.root, method);
  const out: PathResolution = { root, steps: [], projected: false };
  let shape = root;
  let where = path.root as string;
  for (const segment of path.segments) {
    const step = follow(shape, segment, where, detailType);
    if ("problem" in step) {
      out.problem = step.problem;
      return out;
    }
    if (segment.kind === "each") out.projected = true;
    out.steps.push(step);
    shape = step.shape;
    where += segmentText(segment);
    if (shape.kind === "any") {
      // Nothing more is known below (Struct, Value, Any, a detail of an unknown type).
      const rest = path.segments.slice(out.steps.length);
      for (const s of rest) out.steps.push({ segment: s, shape: anyShape });
      break;
    }
  }
  out.shape = shape;
  return out;
}

function segmentText(s: PathSegment): string {
  switch (s.kind) {
    case "key":
      return s.quoted ? `[${JSON.stringify(s.key)}]` : `.${s.key}`;
    case "index":
      return `[${s.index}]`;
    case "each":
      return "[*]";
    default:
      return `[${s.typeName}]`;
  }
}

/** The range of a key with its dot (`.name`), for replacements that need brackets. */
function withDot(s: PathSegment): Range {
  if (s.kind !== "key" || s.quoted) return s.range;
  return { start: { ...s.range.start, character: s.range.start.character - 1 }, end: s.range.end };
}

function follow(
  shape: Shape,
  segment: PathSegment,
  where: string,
  detailType: (name: string) => DescMessage | undefined,
): PathStep | { problem: SchemaProblem } {
  const problem = (
    message: string,
    code = "invalid-path",
    replacement?: string,
    range = segment.range,
  ): { problem: SchemaProblem } => ({
    problem: {
      range,
      message,
      severity: "error",
      code,
      ...(replacement !== undefined ? { replacement } : {}),
    },
  });
  const length = segment.kind === "key" && segment.key === "length" && !segment.quoted;
  const lengthStep = (): PathStep => ({
    segment,
    shape: { kind: "scalar", json: ["number"], what: "a length (a number)" },
  });
  switch (shape.kind) {
    case "any":
      return { segment, shape: anyShape };
    case "message": {
      if (segment.kind !== "key") {
        return problem(`${where} is ${describeShape(shape)} (a JSON object): name a field with .name`);
      }
      const message = shape.message;
      if (shape.detail && segment.key === "@type") return { segment, shape: stringScalar("a type URL") };
      if (segment.key.startsWith("[") && segment.key.endsWith("]")) return { segment, shape: anyShape };
      const field = message.fields.find((f) => f.jsonName === segment.key);
      if (field) return { segment, field, shape: fieldShape(field) };
      const byName = message.fields.find((f) => f.name === segment.key);
      const quote = (name: string) => (segment.quoted ? JSON.stringify(name) : name);
      if (byName) {
        return problem(
          `responses name field ${message.typeName}.${byName.name} by its JSON name: write ${byName.jsonName}`,
          "json-name",
          quote(byName.jsonName),
        );
      }
      if (length) {
        return problem(
          `${where} is ${describeShape(shape)}, which has no field "length" (.length counts the elements of a list or the characters of a string)`,
          "unknown-field",
        );
      }
      const names = message.fields.map((f) => f.jsonName);
      const hint = closest(segment.key, [...names, ...message.fields.map((f) => f.name)]);
      const suggestion =
        hint.length > 0 ? (message.fields.find((f) => f.name === hint[0])?.jsonName ?? hint[0]) : undefined;
      return problem(
        `unknown field "${segment.key}" in message ${message.typeName}${suggestion ? ` (did you mean "${suggestion}"?)` : ""}; its fields: ${names.join(", ") || "none"}`,
        "unknown-field",
        suggestion !== undefined ? quote(suggestion) : undefined,
      );
    }
    case "list":
      if (segment.kind === "index" || segment.kind === "each") return { segment, shape: shape.of };
      if (length) return lengthStep();
      if (segment.kind === "key") {
        const fix = `[0]${segment.quoted ? `[${JSON.stringify(segment.key)}]` : `.${segment.key}`}`;
        return problem(
          `${where} is ${shape.what}: pick an element first, as in ${where}[0]${segmentText(segment)}, ${where}[-1]${segmentText(segment)} (the last) or ${where}[*]${segmentText(segment)} (each)`,
          "not-an-object",
          fix,
          withDot(segment),
        );
      }
      return problem(`${where} is ${shape.what}: a type name in brackets only selects error details`);
    case "map":
      if (segment.kind === "key" || segment.kind === "index") return { segment, shape: shape.of };
      return problem(
        `${where} is ${shape.what} (a JSON object): look values up by key, as in ${where}["key"]`,
      );
    case "record": {
      if (segment.kind === "key" && Object.hasOwn(shape.members, segment.key)) {
        return { segment, shape: shape.members[segment.key] };
      }
      return problem(
        `${where} has the members ${Object.keys(errorMembers).join(", ")}`,
        "unknown-path-member",
      );
    }
    case "names":
      if (segment.kind === "key") return { segment, shape: stringScalar("a string") };
      return problem(`${where} are looked up by name: ${where}["name"]`);
    case "details": {
      if (length) return lengthStep();
      if (segment.kind === "index" || segment.kind === "each") return { segment, shape: anyShape };
      if (segment.kind === "type") {
        const type = detailType(segment.typeName);
        if (!type) {
          return {
            problem: {
              range: segment.range,
              message: `error detail type ${segment.typeName} is not in the schema${detailHint(segment.typeName)}`,
              severity: "warning",
              code: "unknown-detail-type",
              ...(detailSuggestion(segment.typeName)
                ? { replacement: detailSuggestion(segment.typeName) }
                : {}),
            },
          };
        }
        return { segment, type, shape: messageShape(type, true) };
      }
      return problem(
        `${where} is a list of error details: select one with [0], [*] or a type, as in ${where}[google.rpc.BadRequest]`,
      );
    }
    case "scalar":
      if (length && shape.text) return lengthStep();
      return problem(
        `${where} is ${shape.what}: it has no ${segment.kind === "key" ? `member "${segment.key}"` : "elements"}${shape.text ? " (.length is its length)" : ""}`,
        "not-an-object",
      );
  }
}

/** The error detail types of google/rpc/error_details.proto, which every server may send. */
export const standardDetailTypes: readonly string[] = [
  "google.rpc.ErrorInfo",
  "google.rpc.RetryInfo",
  "google.rpc.DebugInfo",
  "google.rpc.QuotaFailure",
  "google.rpc.PreconditionFailure",
  "google.rpc.BadRequest",
  "google.rpc.RequestInfo",
  "google.rpc.ResourceInfo",
  "google.rpc.Help",
  "google.rpc.LocalizedMessage",
];

function detailSuggestion(name: string): string | undefined {
  return closest(name, [...standardDetailTypes])[0];
}

function detailHint(name: string): string {
  const s = detailSuggestion(name);
  return s ? ` (did you mean ${s}?)` : "";
}

/**
 * Checks an assertion's operator and value against what its path holds: values of the wrong JSON
 * type, unknown enum value names, `null` for what is never null, operators that cannot apply.
 */
export function checkAssertionValue(a: RpcAssertion, r: PathResolution): SchemaProblem[] {
  const shape = r.shape;
  if (!shape || shape.kind === "any") return [];
  const op = a.operator.text;
  const v = a.value;
  const out: SchemaProblem[] = [];
  const fail = (message: string, range = a.operator.range, code = "type-mismatch", replacement?: string) =>
    out.push({
      range,
      message,
      severity: "error",
      code,
      ...(replacement !== undefined ? { replacement } : {}),
    });
  const path = a.path.text;
  const what = r.projected
    ? `an array (one value per element, each ${describeShape(shape)})`
    : describeShape(shape);
  const types: JsonType[] | undefined = r.projected ? ["array"] : jsonTypesOf(shape);
  if (op === "exists" || op === "!exists") return out;
  if (op === "isType") {
    if (v?.kind === "type" && types && !types.includes(v.type)) {
      fail(
        `${path} is ${what}: in a response it is ${types.map((t) => `a JSON ${t}`).join(" or ")}, so isType ${v.type} always fails`,
        v.range,
      );
    }
    return out;
  }
  if (op === "matches" || op === "!matches") {
    if (types && !types.includes("string") && !types.includes("number")) {
      fail(`${path} is ${what}: ${op} applies to strings (and numbers)`);
    }
    return out;
  }
  if (v?.kind !== "json" || v.json === undefined) return out;
  const value = v.json;
  if (op === "<" || op === "<=" || op === ">" || op === ">=") {
    if (types && !types.includes("string") && !types.includes("number")) {
      fail(`${path} is ${what}: ${op} compares numbers or strings`);
      return out;
    }
    if (!r.projected && shape.kind === "scalar") checkScalarValue(path, shape, v, value, fail);
    return out;
  }
  if (op === "contains" || op === "!contains") {
    if (r.projected) {
      checkValue(path, shape, v, value, fail);
      return out;
    }
    if (shape.kind === "list") {
      checkValue(`an element of ${path}`, shape.of, v, value, fail);
      return out;
    }
    if (shape.kind === "details") return out;
    if (types?.includes("string") && shape.kind === "scalar") {
      if (typeof value !== "string")
        fail(`${path} is ${what}: contains looks for text in it, so the value is a string`, v.range);
      return out;
    }
    if (types?.includes("object")) {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        fail(`${path} is ${what}: contains checks that it holds the members of an object value`, v.range);
      }
      return out;
    }
    fail(`${path} is ${what}: contains applies to strings, lists and objects`);
    return out;
  }
  // == and !=
  if (r.projected) {
    if (!Array.isArray(value)) {
      fail(`${path} is ${what}: compare it with an array, or use contains to look for one value`, v.range);
    } else for (const item of value) checkValue(`an element of ${path}`, shape, v, item, fail);
    return out;
  }
  checkValue(path, shape, v, value, fail);
  return out;
}

type Fail = (message: string, range?: Range, code?: string, replacement?: string) => void;
type JsonAssertValue = Extract<RpcAssertion["value"], { kind: "json" }> & object;

function checkValue(path: string, shape: Shape, v: JsonAssertValue, value: JsonValue, fail: Fail): void {
  if (shape.kind === "any") return;
  const types = jsonTypesOf(shape) ?? [];
  if (value === null) {
    if (!types.includes("null")) {
      fail(
        `${path} is ${describeShape(shape)}, which a response never holds as null: to check that it is absent, use !exists`,
        v.range,
        "type-mismatch",
      );
    }
    return;
  }
  if (shape.kind === "scalar") {
    checkScalarValue(path, shape, v, value, fail);
    return;
  }
  const actual = Array.isArray(value) ? "array" : typeof value === "object" ? "object" : typeof value;
  if (!types.includes(actual as JsonType)) {
    fail(
      `${path} is ${describeShape(shape)} (a JSON ${types.join(" or ")}), and this value is a JSON ${actual}`,
      v.range,
    );
    return;
  }
  if (shape.kind === "list" && Array.isArray(value) && v.json === value) {
    for (const item of value) checkValue(`an element of ${path}`, shape.of, v, item, fail);
  }
}

function checkScalarValue(
  path: string,
  shape: Extract<Shape, { kind: "scalar" }>,
  v: JsonAssertValue,
  value: JsonValue,
  fail: Fail,
): void {
  const whole = v.json === value;
  const bareOrQuoted = (name: string) => (v.bare ? name : JSON.stringify(name));
  if (shape.enum) {
    const values = shape.enum.values.map((x) => x.name);
    if (typeof value === "number") {
      const named = shape.enum.values.find((x) => x.number === value)?.name;
      fail(
        `${path} is ${shape.what}: responses hold enum values by name${named ? `; write ${named}` : ""}`,
        v.range,
        "enum-value",
        whole && named ? named : undefined,
      );
      return;
    }
    if (typeof value !== "string") {
      fail(`${path} is ${shape.what}, and this value is a JSON ${jsonKind(value)}`, v.range);
      return;
    }
    if (!values.includes(value)) {
      const hint = closest(value, values)[0];
      fail(
        `unknown value "${value}" of enum ${shape.enum.typeName}${hint ? ` (did you mean ${hint}?)` : ""}; its values: ${values.join(", ")}`,
        v.range,
        "enum-value",
        whole && hint ? bareOrQuoted(hint) : undefined,
      );
    }
    return;
  }
  if (shape.codes) return; // The parser checks code names.
  const kind = jsonKind(value);
  const numericText = (x: JsonValue) =>
    typeof x === "string" && /^-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(x.trim());
  const numberLike =
    shape.json.includes("number") ||
    (shape.scalar !== undefined &&
      shape.scalar !== ScalarType.STRING &&
      shape.scalar !== ScalarType.BYTES &&
      shape.scalar !== ScalarType.BOOL);
  if (numberLike) {
    // Numbers and numeric strings compare as numbers (64-bit integers are strings in proto JSON).
    if (kind === "number" || numericText(value)) return;
    if (kind === "string" && shape.json.includes("string") && shape.scalar !== undefined) {
      const special = value === "NaN" || value === "Infinity" || value === "-Infinity";
      if (special && (shape.scalar === ScalarType.FLOAT || shape.scalar === ScalarType.DOUBLE)) return;
    }
    fail(
      `${path} is ${shape.what}, and this value is ${kind === "string" ? `the string ${JSON.stringify(value)}, not a number` : `a JSON ${kind}`}`,
      v.range,
    );
    return;
  }
  if (shape.json.includes(kind)) return;
  if (shape.json.includes("string") && kind === "number") {
    fail(
      `${path} is ${shape.what}, and this value is a number: write it in quotes`,
      v.range,
      "type-mismatch",
      whole ? JSON.stringify(v.numberText ?? String(value)) : undefined,
    );
    return;
  }
  fail(
    `${path} is ${shape.what} (a JSON ${shape.json.join(" or ")}), and this value is a JSON ${kind}`,
    v.range,
  );
}

function jsonKind(value: JsonValue): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value as JsonType;
}
