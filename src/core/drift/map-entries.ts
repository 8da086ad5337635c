// Map entry messages named as protoc names them (`<FieldInCamelCase>Entry`). Some servers' reflection
// names them otherwise (grpc-js); buf refuses such an image, and the two sides would differ in a
// field's type name for nothing. Files that need it are copied, never changed in place.
import { clone } from "@bufbuild/protobuf";
import {
  type DescriptorProto,
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";

/** protoc's name for the entry of a map field (`quantities_by_id` → `QuantitiesByIdEntry`). */
export function mapEntryName(fieldName: string): string {
  let out = "";
  let upper = true;
  for (const c of fieldName) {
    if (c === "_") {
      upper = true;
      continue;
    }
    out += upper ? c.toUpperCase() : c;
    upper = false;
  }
  return `${out}Entry`;
}

/** Renames the map entries of a message (and its nested ones); true when something changed. */
function fixMessage(msg: DescriptorProto, scope: string): boolean {
  let changed = false;
  const fqn = `${scope}.${msg.name}`;
  for (const field of msg.field) {
    if (field.label !== 3 || field.type !== 11) continue;
    const entry = msg.nestedType.find((n) => n.options?.mapEntry && `${fqn}.${n.name}` === field.typeName);
    if (!entry) continue;
    const expected = mapEntryName(field.name);
    if (entry.name === expected || msg.nestedType.some((n) => n.name === expected)) continue;
    entry.name = expected;
    field.typeName = `${fqn}.${expected}`;
    changed = true;
  }
  for (const nested of msg.nestedType) if (fixMessage(nested, fqn)) changed = true;
  return changed;
}

/** The files with map entries named as protoc names them. Type names must be fully qualified. */
export function withProtocMapEntryNames(files: readonly FileDescriptorProto[]): FileDescriptorProto[] {
  return files.map((file) => {
    const copy = clone(FileDescriptorProtoSchema, file);
    const scope = copy.package ? `.${copy.package}` : "";
    let changed = false;
    for (const msg of copy.messageType) if (fixMessage(msg, scope)) changed = true;
    return changed ? copy : file;
  });
}
