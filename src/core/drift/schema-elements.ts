// The named elements of a file descriptor (messages, fields, enums, enum values, services, methods)
// with their source-info paths, walked in one place: the comparison reads their properties, the
// source places come from their paths, and the images handed to `buf breaking` get a line per
// element so that buf's findings can be mapped back to the element they are about.
import type {
  DescriptorProto,
  EnumDescriptorProto,
  FieldDescriptorProto,
  FileDescriptorProto,
  MethodDescriptorProto,
  ServiceDescriptorProto,
} from "@bufbuild/protobuf/wkt";

export type ElementKind = "file" | "message" | "field" | "enum" | "value" | "service" | "method";

interface ElementBase {
  /** `kind:full.name` (a file: `file:path.proto`); unique within one schema. */
  readonly id: string;
  /** The full name without a leading dot (a file: its path). */
  readonly name: string;
  /** The id of the enclosing element (a file's is ""). */
  readonly parent: string;
  /** The file that declares it. */
  readonly file: string;
  /** Its path in the file's source code info. */
  readonly path: readonly number[];
}

export type SchemaElement =
  | (ElementBase & { kind: "file"; proto: FileDescriptorProto })
  | (ElementBase & { kind: "message"; proto: DescriptorProto })
  | (ElementBase & { kind: "field"; proto: FieldDescriptorProto })
  | (ElementBase & { kind: "enum"; proto: EnumDescriptorProto })
  | (ElementBase & { kind: "value"; proto: EnumDescriptorProto["value"][number] })
  | (ElementBase & { kind: "service"; proto: ServiceDescriptorProto })
  | (ElementBase & { kind: "method"; proto: MethodDescriptorProto });

// Field numbers of descriptor.proto, as source-info paths use them.
const FILE_MESSAGE = 4;
const FILE_ENUM = 5;
const FILE_SERVICE = 6;
const MESSAGE_FIELD = 2;
const MESSAGE_NESTED = 3;
const MESSAGE_ENUM = 4;
const ENUM_VALUE = 2;
const SERVICE_METHOD = 2;

/** Every element of a file, in declaration order, the file first. */
export function fileElements(file: FileDescriptorProto): SchemaElement[] {
  const out: SchemaElement[] = [];
  const fileId = `file:${file.name}`;
  out.push({ kind: "file", id: fileId, name: file.name, parent: "", file: file.name, path: [], proto: file });
  const prefix = file.package ? `${file.package}.` : "";
  const enums = (list: EnumDescriptorProto[], scope: string, parent: string, base: number[], tag: number) => {
    list.forEach((e, i) => {
      const name = `${scope}${e.name}`;
      const id = `enum:${name}`;
      const path = [...base, tag, i];
      out.push({ kind: "enum", id, name, parent, file: file.name, path, proto: e });
      e.value.forEach((v, j) => {
        // Enum values are scoped to the enum's parent in Protobuf, but named under the enum here so
        // that two enums' values never collide.
        out.push({
          kind: "value",
          id: `value:${name}.${v.name}`,
          name: `${name}.${v.name}`,
          parent: id,
          file: file.name,
          path: [...path, ENUM_VALUE, j],
          proto: v,
        });
      });
    });
  };
  const messages = (list: DescriptorProto[], scope: string, parent: string, base: number[], tag: number) => {
    list.forEach((m, i) => {
      const name = `${scope}${m.name}`;
      const id = `message:${name}`;
      const path = [...base, tag, i];
      // Map entries are part of their field's type, compared through it.
      if (m.options?.mapEntry) return;
      out.push({ kind: "message", id, name, parent, file: file.name, path, proto: m });
      m.field.forEach((f, j) => {
        out.push({
          kind: "field",
          id: `field:${name}.${f.name}`,
          name: `${name}.${f.name}`,
          parent: id,
          file: file.name,
          path: [...path, MESSAGE_FIELD, j],
          proto: f,
        });
      });
      messages(m.nestedType, `${name}.`, id, path, MESSAGE_NESTED);
      enums(m.enumType, `${name}.`, id, path, MESSAGE_ENUM);
    });
  };
  messages(file.messageType, prefix, fileId, [], FILE_MESSAGE);
  enums(file.enumType, prefix, fileId, [], FILE_ENUM);
  file.service.forEach((s, i) => {
    const name = `${prefix}${s.name}`;
    const id = `service:${name}`;
    const path = [FILE_SERVICE, i];
    out.push({ kind: "service", id, name, parent: fileId, file: file.name, path, proto: s });
    s.method.forEach((m, j) => {
      out.push({
        kind: "method",
        id: `method:${name}.${m.name}`,
        name: `${name}.${m.name}`,
        parent: id,
        file: file.name,
        path: [...path, SERVICE_METHOD, j],
        proto: m,
      });
    });
  });
  return out;
}

/** The 1-based line of each path in a file's source info, keyed by the path joined with commas. */
export function sourceLines(file: FileDescriptorProto): Map<string, number> {
  const lines = new Map<string, number>();
  for (const loc of file.sourceCodeInfo?.location ?? []) {
    const key = loc.path.join(",");
    if (loc.span.length >= 3 && !lines.has(key)) lines.set(key, loc.span[0] + 1);
  }
  return lines;
}
