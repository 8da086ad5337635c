// Follows a path of JSON keys and indices through a message type, as written in a request body:
// `{"postals": {"5": {"city": …}}}` → ["postals", "5", "city"] → the field GreetRequest.Postal.city.
// Hover and completion in request bodies use it to find the field under the cursor and the message
// whose keys can be completed there.
import type { DescExtension, DescField, DescMessage, Registry } from "@bufbuild/protobuf";
import { closest } from "../closest";
import { wrapperTypeNames } from "./wrapper-types";

export type JsonPathSegment = string | number;

export interface JsonPathResult {
  /** The field the last key names; undefined for the empty path. */
  field?: DescField | DescExtension;
  /** The message type of the JSON object at the path, when it is one (its keys are fields). */
  message?: DescMessage;
}

/** Well-known types whose JSON form is not an object of their fields. */
const customJson = new Set([
  "google.protobuf.Any",
  "google.protobuf.Timestamp",
  "google.protobuf.Duration",
  "google.protobuf.FieldMask",
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
  ...wrapperTypeNames,
]);

type State =
  | { kind: "message"; message: DescMessage }
  | { kind: "list"; field: DescField | DescExtension }
  | { kind: "map"; field: DescField }
  | { kind: "value" };

/**
 * Finds a field of a message by its JSON key: the JSON name, the proto name, or `[pkg.ext]` for an
 * extension (resolved with the registry).
 */
export function fieldByJsonKey(
  message: DescMessage,
  key: string,
  registry?: Registry,
): DescField | DescExtension | undefined {
  const field = message.fields.find((f) => f.jsonName === key) ?? message.fields.find((f) => f.name === key);
  if (field !== undefined) return field;
  if (registry !== undefined && key.startsWith("[") && key.endsWith("]")) {
    const ext = registry.getExtension(key.slice(1, -1));
    if (ext !== undefined && ext.extendee.typeName === message.typeName) return ext;
  }
  return undefined;
}

function stateOfElement(field: DescField | DescExtension): State {
  if (field.message !== undefined && !customJson.has(field.message.typeName)) {
    return { kind: "message", message: field.message };
  }
  return { kind: "value" };
}

/** Follows the path from the root message; undefined when the path leaves the schema. */
export function resolveJsonPath(
  root: DescMessage,
  path: readonly JsonPathSegment[],
  registry?: Registry,
): JsonPathResult | undefined {
  if (customJson.has(root.typeName)) return path.length === 0 ? {} : undefined;
  let state: State = { kind: "message", message: root };
  let last: DescField | DescExtension | undefined;
  for (const segment of path) {
    switch (state.kind) {
      case "message": {
        if (typeof segment !== "string") return undefined;
        const field = fieldByJsonKey(state.message, segment, registry);
        if (field === undefined) return undefined;
        last = field;
        if (field.fieldKind === "list") state = { kind: "list", field };
        else if (field.fieldKind === "map") state = { kind: "map", field };
        else state = stateOfElement(field);
        break;
      }
      case "list":
        if (typeof segment === "string" && !/^[0-9]+$/.test(segment)) return undefined;
        state = stateOfElement(state.field);
        break;
      case "map":
        state = stateOfElement(state.field);
        break;
      case "value":
        return undefined;
    }
  }
  const result: JsonPathResult = {};
  if (last !== undefined) result.field = last;
  if (state.kind === "message") result.message = state.message;
  return result;
}

/**
 * What is wrong with a key that names no field of `message`, with the closest field name: one
 * wording for the editor's diagnostics and for a request that is sent (`protocall curl`, `run`, Send).
 */
export function unknownFieldText(message: DescMessage, key: string): string {
  const names = message.fields.map((f) => f.jsonName);
  const hint = closestFieldName(message, key);
  return `unknown field "${key}" in message ${message.typeName}${hint ? ` (did you mean "${hint}"?)` : ""}; its fields: ${names.join(", ") || "none"}`;
}

/** The field name (JSON or proto) closest to a key that names no field, if any is close. */
export function closestFieldName(message: DescMessage, key: string): string | undefined {
  return closest(key, [...message.fields.map((f) => f.jsonName), ...message.fields.map((f) => f.name)])[0];
}

/**
 * The first key of a JSON value that names no field of its message, looking into nested messages,
 * lists and maps (not into well-known types with a JSON form of their own, nor extensions).
 */
export function findUnknownKey(
  message: DescMessage,
  value: unknown,
): { message: DescMessage; key: string } | undefined {
  if (customJson.has(message.typeName) || typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) return undefined;
  for (const [key, v] of Object.entries(value)) {
    if (key.startsWith("[") && key.endsWith("]")) continue;
    const field = fieldByJsonKey(message, key);
    if (field === undefined) return { message, key };
    const inner = field.message;
    if (inner === undefined || v === null || typeof v !== "object") continue;
    const values =
      field.fieldKind === "list"
        ? Array.isArray(v)
          ? v
          : []
        : field.fieldKind === "map"
          ? Object.values(v)
          : [v];
    for (const element of values) {
      const found = findUnknownKey(inner, element);
      if (found) return found;
    }
  }
  return undefined;
}
