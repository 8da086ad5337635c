// Follows a path of JSON keys and indices through a message type, as written in a request body:
// `{"postals": {"5": {"city": …}}}` → ["postals", "5", "city"] → the field GreetRequest.Postal.city.
// Hover and completion in request bodies use it to find the field under the cursor and the message
// whose keys can be completed there.
import type { DescExtension, DescField, DescMessage, Registry } from "@bufbuild/protobuf";

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
  "google.protobuf.DoubleValue",
  "google.protobuf.FloatValue",
  "google.protobuf.Int64Value",
  "google.protobuf.UInt64Value",
  "google.protobuf.Int32Value",
  "google.protobuf.UInt32Value",
  "google.protobuf.BoolValue",
  "google.protobuf.StringValue",
  "google.protobuf.BytesValue",
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
