// Checks a request body document against the method's input message, as protobuf JSON reads it:
// unknown fields (with the closest names), values of the wrong type, unknown enum values, two
// members of one oneof, repeated keys, and deprecated fields (hints). Problems carry offsets into the
// document; `{{...}}` references are accepted wherever a value may be. Unknown names carry the
// closest one as a replacement (the editor's quick fix).
import {
  type DescEnum,
  type DescExtension,
  type DescField,
  type DescMessage,
  ScalarType,
} from "@bufbuild/protobuf";
import { closest } from "../closest";
import { closestFieldName, fieldByJsonKey, unknownFieldText } from "../schema/json-path";
import { wrappedScalar } from "../schema/wrapper-types";
import type { JsonNode } from "./json-tree";

export interface BodyProblem {
  start: number;
  end: number;
  message: string;
  severity: "error" | "hint";
  deprecated?: boolean;
  /** Text that fixes the problem when it replaces the text from `start` to `end`. */
  replacement?: string;
}

type Field = DescField | DescExtension;

const scalarNames: Record<number, string> = Object.fromEntries(
  Object.entries(ScalarType)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => [v, k.toLowerCase()]),
);

/** Checks one document (the root must be a message of type `message`). */
export function checkBody(root: JsonNode, message: DescMessage): BodyProblem[] {
  const out: BodyProblem[] = [];
  checkMessage(root, message, out);
  return out;
}

function err(
  out: BodyProblem[],
  node: { start: number; end: number },
  message: string,
  replacement?: string,
): void {
  const p: BodyProblem = { start: node.start, end: node.end, message, severity: "error" };
  if (replacement !== undefined) p.replacement = replacement;
  out.push(p);
}

function describeNode(node: JsonNode): string {
  switch (node.kind) {
    case "object":
      return "an object";
    case "array":
      return "an array";
    case "string":
      return `the string ${JSON.stringify(node.value)}`;
    case "number":
      return `the number ${node.text}`;
    case "literal":
      return String(node.value);
    default:
      return "this value";
  }
}

function skip(node: JsonNode): boolean {
  return (
    node.kind === "template" || node.kind === "invalid" || (node.kind === "literal" && node.value === null)
  );
}

function checkMessage(node: JsonNode, message: DescMessage, out: BodyProblem[]): void {
  if (skip(node)) return;
  const name = message.typeName;
  if (name.startsWith("google.protobuf.") && checkWellKnown(node, message, out)) return;
  if (node.kind !== "object") {
    err(out, node, `expected a JSON object for message ${name}, found ${describeNode(node)}`);
    return;
  }
  const seenKeys = new Map<string, boolean>();
  const seenOneofs = new Map<string, string>();
  for (const m of node.members) {
    const key = m.key.value;
    if (m.key.bare) {
      err(out, m.key, `keys are quoted in JSON: write "${key}"`);
      continue;
    }
    // `[pkg.extension]`: an extension, resolved only when the request is sent.
    if (key.startsWith("[") && key.endsWith("]")) continue;
    const field = fieldByJsonKey(message, key);
    if (!field) {
      const hint = closestFieldName(message, key);
      err(
        out,
        m.key,
        unknownFieldText(message, key),
        hint && m.key.closed ? JSON.stringify(hint) : undefined,
      );
      continue;
    }
    const canonical = field.name;
    if (seenKeys.has(canonical)) {
      err(out, m.key, `field "${field.jsonName}" is given more than once`);
    }
    seenKeys.set(canonical, true);
    if (field.deprecated) {
      out.push({
        start: m.key.start,
        end: m.key.end,
        message: `field ${name}.${field.name} is deprecated`,
        severity: "hint",
        deprecated: true,
      });
    }
    if (field.kind === "field" && field.oneof && !field.oneof.fields.some((f) => f.proto.proto3Optional)) {
      const valueIsNull = m.value?.kind === "literal" && m.value.value === null;
      const other = seenOneofs.get(field.oneof.name);
      if (other !== undefined && !valueIsNull) {
        err(
          out,
          m.key,
          `"${field.jsonName}" and "${other}" are both in oneof ${field.oneof.name}: give only one of them`,
        );
      } else if (!valueIsNull) seenOneofs.set(field.oneof.name, field.jsonName);
    }
    if (m.value) checkField(m.value, field, out);
  }
}

function checkField(node: JsonNode, field: Field, out: BodyProblem[]): void {
  if (skip(node)) return;
  if (field.fieldKind === "list") {
    if (node.kind !== "array") {
      err(out, node, `field "${field.name}" is repeated: expected a JSON array, found ${describeNode(node)}`);
      return;
    }
    for (const item of node.items) checkSingular(item, field, out);
    return;
  }
  if (field.fieldKind === "map") {
    if (node.kind !== "object") {
      err(out, node, `field "${field.name}" is a map: expected a JSON object, found ${describeNode(node)}`);
      return;
    }
    for (const m of node.members) {
      checkMapKey(m.key, field.mapKey, out);
      if (m.value) checkSingular(m.value, field, out);
    }
    return;
  }
  checkSingular(node, field, out);
}

function checkSingular(node: JsonNode, field: Field, out: BodyProblem[]): void {
  if (skip(node)) return;
  if (field.message) {
    checkMessage(node, field.message, out);
    return;
  }
  if (field.enum) {
    checkEnum(node, field.enum, out);
    return;
  }
  checkScalar(node, field.scalar ?? ScalarType.STRING, out);
}

function checkEnum(node: JsonNode, desc: DescEnum, out: BodyProblem[]): void {
  if (desc.typeName === "google.protobuf.NullValue") return;
  if (node.kind === "string") {
    if (node.value.includes("{{")) return;
    const value = desc.values.find((v) => v.name === node.value);
    if (value) {
      if (value.deprecated) {
        out.push({
          start: node.start,
          end: node.end,
          message: `enum value ${desc.typeName}.${value.name} is deprecated`,
          severity: "hint",
          deprecated: true,
        });
      }
      return;
    }
    const names = desc.values.map((v) => v.name);
    const hint = closest(node.value, names);
    err(
      out,
      node,
      `unknown value "${node.value}" of enum ${desc.typeName}${hint.length > 0 ? ` (did you mean "${hint[0]}"?)` : ""}; its values: ${names.join(", ")}`,
      hint.length > 0 && node.closed ? JSON.stringify(hint[0]) : undefined,
    );
    return;
  }
  if (node.kind === "number" && Number.isInteger(Number(node.text))) return;
  err(
    out,
    node,
    `expected a value of enum ${desc.typeName} (a name in quotes, or a number), found ${describeNode(node)}`,
  );
}

const intRanges: Partial<Record<ScalarType, [number, number]>> = {
  [ScalarType.INT32]: [-2147483648, 2147483647],
  [ScalarType.SINT32]: [-2147483648, 2147483647],
  [ScalarType.SFIXED32]: [-2147483648, 2147483647],
  [ScalarType.UINT32]: [0, 4294967295],
  [ScalarType.FIXED32]: [0, 4294967295],
};

function checkScalar(node: JsonNode, scalar: ScalarType, out: BodyProblem[]): void {
  const type = scalarNames[scalar];
  const wrong = (what: string) =>
    err(out, node, `expected ${what} for a ${type} field, found ${describeNode(node)}`);
  if (node.kind === "string" && node.value.includes("{{")) return;
  switch (scalar) {
    case ScalarType.STRING:
      if (node.kind !== "string") wrong("a string");
      return;
    case ScalarType.BYTES:
      if (node.kind !== "string") wrong("a base64 string");
      else if (!/^[A-Za-z0-9+/\-_]*={0,2}$/.test(node.value.replace(/\s/g, ""))) {
        err(out, node, `bytes are written in base64: ${JSON.stringify(node.value)} is not base64`);
      }
      return;
    case ScalarType.BOOL:
      if (node.kind !== "literal" || typeof node.value !== "boolean") wrong("true or false");
      return;
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE: {
      if (node.kind === "number" && Number.isFinite(Number(node.text))) return;
      if (node.kind === "string") {
        const v = node.value;
        if (v === "NaN" || v === "Infinity" || v === "-Infinity") return;
        if (v.trim() !== "" && Number.isFinite(Number(v))) return;
      }
      wrong("a number");
      return;
    }
    default: {
      // Integers: a JSON number or a string holding one (64-bit values are usually strings).
      const text = node.kind === "number" ? node.text : node.kind === "string" ? node.value : undefined;
      if (text === undefined || text.trim() === "" || !Number.isFinite(Number(text))) {
        wrong(
          scalar === ScalarType.INT64 || scalar === ScalarType.UINT64
            ? 'an integer (such as "1")'
            : "an integer",
        );
        return;
      }
      const n = Number(text);
      if (!Number.isInteger(n)) {
        err(out, node, `a ${type} field holds whole numbers; ${text} is not one`);
        return;
      }
      const unsigned = scalar === ScalarType.UINT64 || scalar === ScalarType.FIXED64;
      const range = intRanges[scalar];
      if ((range && (n < range[0] || n > range[1])) || (unsigned && n < 0)) {
        err(out, node, `${text} is out of range for a ${type} field`);
      }
    }
  }
}

function checkMapKey(key: JsonNode & { kind: "string" }, scalar: ScalarType, out: BodyProblem[]): void {
  if (key.value.includes("{{")) return;
  switch (scalar) {
    case ScalarType.STRING:
      return;
    case ScalarType.BOOL:
      if (key.value !== "true" && key.value !== "false") {
        err(out, key, `map keys of type bool are "true" or "false", found "${key.value}"`);
      }
      return;
    default:
      if (!/^-?[0-9]+$/.test(key.value)) {
        err(out, key, `map keys of type ${scalarNames[scalar]} are integers in quotes, found "${key.value}"`);
      }
  }
}

/** Well-known types with their own JSON forms; false when `message` is not one of them. */
function checkWellKnown(node: JsonNode, message: DescMessage, out: BodyProblem[]): boolean {
  const name = message.typeName;
  const wrapped = wrappedScalar(name);
  if (wrapped !== undefined) {
    checkScalar(node, wrapped, out);
    return true;
  }
  switch (name) {
    case "google.protobuf.Timestamp":
      if (node.kind !== "string")
        err(
          out,
          node,
          `expected a timestamp string such as "2024-01-02T03:04:05Z", found ${describeNode(node)}`,
        );
      else if (!node.value.includes("{{") && Number.isNaN(Date.parse(node.value))) {
        err(out, node, `"${node.value}" is not an RFC 3339 timestamp such as "2024-01-02T03:04:05Z"`);
      }
      return true;
    case "google.protobuf.Duration":
      if (node.kind !== "string")
        err(out, node, `expected a duration string such as "1.5s", found ${describeNode(node)}`);
      else if (!node.value.includes("{{") && !/^-?[0-9]+(\.[0-9]+)?s$/.test(node.value)) {
        err(out, node, `"${node.value}" is not a duration: write seconds with an "s", such as "1.5s"`);
      }
      return true;
    case "google.protobuf.FieldMask":
      if (node.kind !== "string")
        err(out, node, `expected a field mask string such as "a,b.c", found ${describeNode(node)}`);
      return true;
    case "google.protobuf.Struct":
    case "google.protobuf.Empty":
    case "google.protobuf.Any":
      if (node.kind !== "object")
        err(out, node, `expected a JSON object for ${name}, found ${describeNode(node)}`);
      return true;
    case "google.protobuf.ListValue":
      if (node.kind !== "array")
        err(out, node, `expected a JSON array for ${name}, found ${describeNode(node)}`);
      return true;
    case "google.protobuf.Value":
      return true;
  }
  return false;
}
