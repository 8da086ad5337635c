// Looks up any fully qualified name in a registry — service, method, message, field, oneof, enum,
// enum value, extension — and describes where it lives: its parents, its file, its source span and
// its comments.
import type { DescEnum, DescFile, Registry } from "@bufbuild/protobuf";
import { fileOf, type SourceComments, type SourceSpan, sourceInfo } from "./source-info";
import type { NamedDesc } from "./types";

export type LookupKind =
  | "service"
  | "method"
  | "message"
  | "field"
  | "oneof"
  | "enum"
  | "enum_value"
  | "extension";

export interface LookupResult {
  desc: NamedDesc;
  kind: LookupKind;
  /** The fully qualified name of the element (no leading dot). */
  fullName: string;
  /** Enclosing services, messages and enums, outermost first. */
  parents: NamedDesc[];
  file: DescFile;
  /** Zero-based source range of the declaration, when the file has source info. */
  location?: SourceSpan;
  comments?: SourceComments;
}

/** The fully qualified name of an element, without a leading dot. */
export function fullNameOf(desc: NamedDesc): string {
  switch (desc.kind) {
    case "rpc":
      return `${desc.parent.typeName}.${desc.name}`;
    case "field":
    case "oneof":
      return `${desc.parent.typeName}.${desc.name}`;
    case "enum_value":
      return `${desc.parent.typeName}.${desc.name}`;
    default:
      return desc.typeName;
  }
}

/** The kind of an element, with `rpc` spelled `method`. */
export function kindOf(desc: NamedDesc): LookupKind {
  return desc.kind === "rpc" ? "method" : desc.kind;
}

/** The enclosing services, messages and enums of an element, outermost first. */
export function parentsOf(desc: NamedDesc): NamedDesc[] {
  const parents: NamedDesc[] = [];
  let parent: NamedDesc | undefined = desc.kind === "service" ? undefined : desc.parent;
  while (parent !== undefined) {
    parents.unshift(parent);
    parent = parent.kind === "service" ? undefined : parent.parent;
  }
  return parents;
}

/** Describes an element found elsewhere (for example the field under a JSON key). */
export function describe(desc: NamedDesc): LookupResult {
  const info = sourceInfo(desc);
  const result: LookupResult = {
    desc,
    kind: kindOf(desc),
    fullName: fullNameOf(desc),
    parents: parentsOf(desc),
    file: fileOf(desc),
  };
  if (info.location !== undefined) result.location = info.location;
  if (info.comments !== undefined) result.comments = info.comments;
  return result;
}

/**
 * Finds an element by fully qualified name (a leading dot is allowed). Enum values are found both as
 * `pkg.Enum.VALUE` and, following protobuf scoping, as siblings of their enum (`pkg.VALUE`,
 * `pkg.Msg.VALUE`). Returns undefined when the registry has no such element.
 */
export function resolveName(registry: Registry, name: string): NamedDesc | undefined {
  const fullName = name.startsWith(".") ? name.slice(1) : name;
  if (fullName === "") return undefined;
  const type = registry.get(fullName);
  if (type !== undefined) return type;
  const dot = fullName.lastIndexOf(".");
  const scope = dot < 0 ? "" : fullName.slice(0, dot);
  const child = fullName.slice(dot + 1);
  const parent = scope === "" ? undefined : registry.get(scope);
  switch (parent?.kind) {
    case "service":
      return parent.methods.find((m) => m.name === child);
    case "enum":
      return parent.values.find((v) => v.name === child);
    case "message":
      return (
        parent.fields.find((f) => f.name === child) ??
        parent.oneofs.find((o) => o.name === child) ??
        scopedEnumValue(parent.nestedEnums, child)
      );
    case "extension":
      return undefined;
    case undefined: {
      // `pkg.VALUE`: an enum value in the scope of a package.
      const enums: DescEnum[] = [];
      for (const t of registry) {
        if (t.kind === "enum" && t.parent === undefined && t.file.proto.package === scope) enums.push(t);
      }
      return scopedEnumValue(enums, child);
    }
  }
}

function scopedEnumValue(enums: readonly DescEnum[], name: string) {
  for (const e of enums) {
    const value = e.values.find((v) => v.name === name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** Finds an element by fully qualified name and describes it; undefined when not found. */
export function lookup(registry: Registry, name: string): LookupResult | undefined {
  const desc = resolveName(registry, name);
  return desc === undefined ? undefined : describe(desc);
}
