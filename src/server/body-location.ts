// Maps an editor position in a request body to the JSON document, the place in it, and the schema
// element there (the field under a key, the field a value belongs to, the element of a list or map).
import type { DescExtension, DescField, DescMessage } from "@bufbuild/protobuf";
import { type JsonLocation, locate, parseJsonTree } from "../core/analysis/json-tree";
import { offsetIn } from "../core/rpcfile/parse";
import type { Position, RpcBodyPart, RpcRequest } from "../core/rpcfile/types";
import { resolveJsonPath } from "../core/schema/json-path";

export interface BodyPlace {
  part: RpcBodyPart & { kind: "json" };
  offset: number;
  location: JsonLocation;
  /** For a key: the message whose fields can go there. */
  message?: DescMessage;
  /** The field of the key, or the field a value is given for. */
  field?: DescField | DescExtension;
  /** For a value: true when it is one element of a list or one value of a map (`field` is that list or map). */
  element: boolean;
}

function contains(part: RpcBodyPart, p: Position): boolean {
  const { start, end } = part.range;
  if (p.line < start.line || p.line > end.line) return false;
  if (p.line === start.line && p.character < start.character) return false;
  if (p.line === end.line && p.character > end.character) return false;
  return true;
}

/** The JSON document of the request at a position, if any. */
export function documentAt(
  request: Pick<RpcRequest, "body">,
  p: Position,
): (RpcBodyPart & { kind: "json" }) | undefined {
  for (const part of request.body) if (part.kind === "json" && contains(part, p)) return part;
  return undefined;
}

/** What is at a position of a body document of a request to a method with input `input`. */
export function bodyPlace(
  request: Pick<RpcRequest, "body">,
  input: DescMessage,
  p: Position,
): BodyPlace | undefined {
  const part = documentAt(request, p);
  if (!part) return undefined;
  const offset = offsetIn(part.text, part.range.start, p);
  const location = locate(parseJsonTree(part.text), offset);
  if (!location) return undefined;
  const container = resolveJsonPath(input, location.path);
  if (!container) return { part, offset, location, element: false };
  if (location.role === "key") {
    const place: BodyPlace = { part, offset, location, element: false };
    if (container.message) place.message = container.message;
    if (container.message && typeof location.key === "string") {
      const f = resolveJsonPath(input, [...location.path, location.key]);
      if (f?.field) place.field = f.field;
    }
    return place;
  }
  // A value: an element of a list or map held by the container, or the value of a member.
  const holder = container.field;
  if (holder && !container.message && (holder.fieldKind === "list" || holder.fieldKind === "map")) {
    return { part, offset, location, field: holder, element: true };
  }
  if (location.key === undefined || !container.message) return { part, offset, location, element: false };
  const f = resolveJsonPath(input, [...location.path, location.key]);
  return { part, offset, location, field: f?.field, element: false };
}
