// The structural comparison of two schemas: which services, methods, messages, fields, enums and
// enum values one side has and the other lacks, and what changed in those both have (a field's
// number, type, label, name and JSON name; a method's types and streaming; an enum value's number
// and name). Fields and enum values are paired by name first, then by number, so a renumbered field
// and a renamed one are each one change. Whether a change breaks clients is not decided here: that is
// buf's call (buf-breaking.ts), attached by drift.ts.
import type { FieldDescriptorProto, FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { type ElementKind, fileElements, type SchemaElement } from "./schema-elements";

/** One property that differs: its value in the input (first side) and in the against side. */
export interface PropertyChange {
  readonly property: string;
  readonly input: string;
  readonly against: string;
}

export interface StructuralDifference {
  /** added: only in the input; missing: only in the against side; changed: in both, different. */
  readonly change: "added" | "missing" | "changed";
  readonly element: Exclude<ElementKind, "file">;
  /** The full name (in the input's spelling for a changed element). */
  readonly name: string;
  readonly properties: readonly PropertyChange[];
  /** The element in the input, or for one only in the against side its nearest enclosing one there. */
  readonly inputElement?: SchemaElement;
  readonly againstElement?: SchemaElement;
}

const TYPE_NAMES: Record<number, string> = {
  1: "double",
  2: "float",
  3: "int64",
  4: "uint64",
  5: "int32",
  6: "fixed64",
  7: "fixed32",
  8: "bool",
  9: "string",
  10: "group",
  11: "message",
  12: "bytes",
  13: "uint32",
  14: "enum",
  15: "sfixed32",
  16: "sfixed64",
  17: "sint32",
  18: "sint64",
};

function fieldType(f: FieldDescriptorProto): string {
  if (f.typeName) return f.typeName.replace(/^\./, "");
  return TYPE_NAMES[f.type] ?? `type ${f.type}`;
}

function fieldLabel(f: FieldDescriptorProto): string {
  if (f.label === 3) return "repeated";
  if (f.label === 2) return "required";
  return f.proto3Optional ? "optional" : "singular";
}

/** The properties compared for each kind of element, as text. */
function properties(e: SchemaElement): Record<string, string> {
  switch (e.kind) {
    case "field":
      return {
        number: String(e.proto.number),
        type: fieldType(e.proto),
        label: fieldLabel(e.proto),
        name: e.proto.name,
        "json name": e.proto.jsonName || "",
      };
    case "method":
      return {
        "input type": e.proto.inputType.replace(/^\./, ""),
        "output type": e.proto.outputType.replace(/^\./, ""),
        "client streaming": String(e.proto.clientStreaming === true),
        "server streaming": String(e.proto.serverStreaming === true),
      };
    case "value":
      return { number: String(e.proto.number), name: e.proto.name };
    default:
      return {};
  }
}

function changedProperties(input: SchemaElement, against: SchemaElement): PropertyChange[] {
  const a = properties(input);
  const b = properties(against);
  const out: PropertyChange[] = [];
  for (const key of Object.keys(a)) {
    // A JSON name only one side states (reflection of some servers leaves it out) is not a change.
    if (key === "json name" && (a[key] === "" || b[key] === "")) continue;
    if (a[key] !== b[key]) out.push({ property: key, input: a[key], against: b[key] });
  }
  return out;
}

/** The elements of files, by id (files left out: they are buf's to compare). */
function elementsOf(files: readonly FileDescriptorProto[]): Map<string, SchemaElement> {
  const map = new Map<string, SchemaElement>();
  for (const file of files) {
    for (const e of fileElements(file)) if (!map.has(e.id)) map.set(e.id, e);
  }
  return map;
}

/** The nearest element that encloses `e` (or `e` itself) and exists in `map`. */
function nearest(e: SchemaElement, own: Map<string, SchemaElement>, map: Map<string, SchemaElement>) {
  let current: SchemaElement | undefined = e;
  while (current) {
    const found = map.get(current.id);
    if (found) return found;
    current = own.get(current.parent);
  }
  return undefined;
}

/** Compares the elements of two lists of files (the input first, then the against side). */
export function compareSchemas(
  input: readonly FileDescriptorProto[],
  against: readonly FileDescriptorProto[],
): StructuralDifference[] {
  const a = elementsOf(input);
  const b = elementsOf(against);
  const out: StructuralDifference[] = [];
  const onlyA: SchemaElement[] = [];
  const onlyB = new Map<string, SchemaElement>();
  for (const e of b.values()) if (e.kind !== "file" && !a.has(e.id)) onlyB.set(e.id, e);
  for (const e of a.values()) {
    if (e.kind === "file") continue;
    const other = b.get(e.id);
    if (!other) {
      onlyA.push(e);
      continue;
    }
    const props = changedProperties(e, other);
    if (props.length > 0) {
      out.push({
        change: "changed",
        element: e.kind,
        name: e.name,
        properties: props,
        inputElement: e,
        againstElement: other,
      });
    }
  }
  const paired = new Set<string>();
  // Fields and enum values only on one side may be the same number under another name.
  for (const e of onlyA) {
    if (e.kind !== "field" && e.kind !== "value") continue;
    const number = e.proto.number;
    const pair = [...onlyB.values()].find(
      (o) => o.kind === e.kind && o.parent === e.parent && o.proto.number === number,
    );
    if (!pair) continue;
    onlyB.delete(pair.id);
    paired.add(e.id);
    out.push({
      change: "changed",
      element: e.kind,
      name: e.name,
      properties: changedProperties(e, pair),
      inputElement: e,
      againstElement: pair,
    });
  }
  // An element whose parent is itself only on one side is part of that parent's difference.
  const inParentOfBoth = (e: SchemaElement) =>
    e.parent.startsWith("file:") || (a.has(e.parent) && b.has(e.parent));
  for (const e of onlyA) {
    if (paired.has(e.id) || !inParentOfBoth(e)) continue;
    out.push({
      change: "added",
      element: e.kind as Exclude<ElementKind, "file">,
      name: e.name,
      properties: [],
      inputElement: e,
      againstElement: nearest(e, a, b),
    });
  }
  for (const e of onlyB.values()) {
    if (!inParentOfBoth(e)) continue;
    out.push({
      change: "missing",
      element: e.kind as Exclude<ElementKind, "file">,
      name: e.name,
      properties: [],
      inputElement: nearest(e, b, a),
      againstElement: e,
    });
  }
  return out;
}
