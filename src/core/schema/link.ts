// Links FileDescriptorProtos into a FileRegistry, whatever their order and however sloppy their
// producer: descriptor-set files, plugin requests and server reflection all come through here.
//
// Before handing the files to @bufbuild/protobuf's createFileRegistry (which wants a complete,
// dependency-ordered, fully qualified set), this module:
// - clones the input (the caller's protos are never changed);
// - adds the well-known files (google/protobuf/*.proto) that are imported or referenced but absent;
// - resolves relative references (type_name, extendee, input_type, output_type) the way protoc
//   resolves names in scope, and writes them back fully qualified with a leading dot;
// - fills what compilers always set: field labels, json_name, field types from their references,
//   synthetic oneofs for proto3 `optional`;
// - sorts files so that every file comes after the files it needs, and fails clearly on a missing
//   dependency or an import cycle.
import { clone, create, createFileRegistry, type FileRegistry, isFieldSet } from "@bufbuild/protobuf";
import { protoCamelCase } from "@bufbuild/protobuf/reflect";
import {
  type DescriptorProto,
  type FieldDescriptorProto,
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldDescriptorProtoSchema,
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  OneofDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { errorMessage, ProtocallError } from "../errors";
import { wellKnownFiles } from "./well-known-files";

/** A reference that names nothing in the files; `candidates` are the names it could stand for. */
export class UnresolvedReferenceError extends ProtocallError {
  constructor(
    message: string,
    /** Fully qualified names (no leading dot) the reference may mean, innermost scope first. */
    readonly candidates: string[],
  ) {
    super(message);
  }
}

/** The fully qualified names a reference used inside `relativeTo` may stand for, innermost first. */
export function candidateNames(name: string, relativeTo: string): string[] {
  if (name.startsWith(".")) return [name.slice(1)];
  const out: string[] = [];
  for (let scope = relativeTo; ; ) {
    const i = scope.lastIndexOf(".");
    if (i < 0) break;
    scope = scope.slice(0, i);
    out.push(`${scope}.${name}`);
  }
  out.push(name);
  return out;
}

export interface LinkOptions {
  /** Names the origin of the files in error messages, e.g. `reflection at http://host:8080`. */
  label?: string;
  /**
   * The caller hands the protos over (freshly decoded, used nowhere else): they are completed in
   * place instead of copied first. Linking them again later is harmless.
   */
  owned?: boolean;
}

type SymbolKind = "message" | "enum" | "service" | "package" | "other";

interface SymbolEntry {
  kind: SymbolKind;
  /** Name of the file that declares it (for packages: the first file seen). */
  file: string;
}

/**
 * Links the given files (in any order) into a registry. Well-known imports are supplied when absent.
 * Throws a ProtocallError on a missing dependency, an import cycle or an unresolvable reference.
 */
export function linkFiles(files: FileDescriptorProto[], options: LinkOptions = {}): FileRegistry {
  const prefix = options.label ? `${options.label}: ` : "";
  const fail = (message: string): never => {
    throw new ProtocallError(prefix + message);
  };

  // 1. Clone and de-duplicate by name.
  const byName = new Map<string, FileDescriptorProto>();
  for (const input of files) {
    if (!input.name) fail("a file descriptor has no name; every FileDescriptorProto needs its file name");
    if (byName.has(input.name)) continue; // the first one wins, as protoc's descriptor pool does
    byName.set(input.name, options.owned ? input : clone(FileDescriptorProtoSchema, input));
  }
  const given = new Set(byName.keys());
  const complete = new Set<FileDescriptorProto>();

  // 2. Supply the well-known files that are imported but not given (transitively).
  const wkt = wellKnownFiles();
  const addWellKnown = (name: string): boolean => {
    if (byName.has(name)) return true;
    const desc = wkt.get(name);
    if (!desc) return false;
    // The runtime's own well-known files are complete and never changed: used as they are.
    byName.set(name, desc.proto);
    complete.add(desc.proto);
    for (const dep of desc.proto.dependency) addWellKnown(dep);
    return true;
  };
  for (const file of [...byName.values()]) {
    for (const dep of file.dependency) {
      if (!byName.has(dep) && !addWellKnown(dep)) {
        fail(
          `file "${file.name}" imports "${dep}", which is missing. ` +
            "Include all imports in the schema (buf build, or protoc --include_imports).",
        );
      }
    }
  }

  // 3. Symbol table: given files first, then the well-known files as a fallback for sloppy producers
  // that reference google.protobuf types without importing them.
  const symbols = new Map<string, SymbolEntry>();
  const addSymbols = (file: FileDescriptorProto) => {
    const put = (name: string, kind: SymbolKind) => {
      if (!symbols.has(name)) symbols.set(name, { kind, file: file.name });
    };
    if (file.package) {
      const parts = file.package.split(".");
      for (let i = 1; i <= parts.length; i++) put(parts.slice(0, i).join("."), "package");
    }
    const scope = file.package ? `${file.package}.` : "";
    const addMessage = (msg: DescriptorProto, parent: string) => {
      const fqn = parent + msg.name;
      put(fqn, "message");
      for (const e of msg.enumType) put(`${fqn}.${e.name}`, "enum");
      for (const x of msg.extension) put(`${fqn}.${x.name}`, "other");
      for (const n of msg.nestedType) addMessage(n, `${fqn}.`);
    };
    for (const m of file.messageType) addMessage(m, scope);
    for (const e of file.enumType) put(scope + e.name, "enum");
    for (const s of file.service) put(scope + s.name, "service");
    for (const x of file.extension) put(scope + x.name, "other");
  };
  for (const file of byName.values()) addSymbols(file);
  for (const [name, desc] of wkt) if (!byName.has(name)) addSymbols(desc.proto);

  // 4. Resolve references and fill the fields compilers always set.
  const implicitDeps = new Map<string, Set<string>>();
  const resolve = (
    file: FileDescriptorProto,
    name: string,
    relativeTo: string,
    want: "type" | "message" | "enum",
    what: string,
  ): { fqn: string; kind: SymbolKind } => {
    const found = lookup(symbols, name, relativeTo, want);
    if (!found) {
      const kind = want === "type" ? "message or enum" : want;
      throw new UnresolvedReferenceError(
        `${prefix}cannot resolve ${kind} "${name}" referenced by ${what} in file "${file.name}". ` +
          "The file that defines it is missing from the schema, or the name is misspelled.",
        candidateNames(name, relativeTo),
      );
    }
    const entry = symbols.get(found) as SymbolEntry;
    if (entry.file !== file.name) {
      if (!byName.has(entry.file)) addWellKnown(entry.file);
      let deps = implicitDeps.get(file.name);
      if (!deps) implicitDeps.set(file.name, (deps = new Set()));
      deps.add(entry.file);
    }
    return { fqn: found, kind: entry.kind };
  };

  const linkField = (
    file: FileDescriptorProto,
    field: FieldDescriptorProto,
    scope: string,
    isExtension: boolean,
  ) => {
    const fqn = scope ? `${scope}.${field.name}` : field.name;
    const what = `${isExtension ? "extension" : "field"} ${fqn}`;
    // In descriptor.proto (proto2) an unset enum reads as its first value, so ask what is set.
    if (!isFieldSet(field, FieldDescriptorProtoSchema.field.label))
      field.label = FieldDescriptorProto_Label.OPTIONAL;
    const typeSet = isFieldSet(field, FieldDescriptorProtoSchema.field.type);
    if (field.typeName) {
      const want = !typeSet
        ? "type"
        : field.type === FieldDescriptorProto_Type.ENUM
          ? "enum"
          : field.type === FieldDescriptorProto_Type.MESSAGE || field.type === FieldDescriptorProto_Type.GROUP
            ? "message"
            : "type";
      const target = resolve(file, field.typeName, fqn, want, what);
      field.typeName = `.${target.fqn}`;
      if (!typeSet) {
        field.type =
          target.kind === "enum" ? FieldDescriptorProto_Type.ENUM : FieldDescriptorProto_Type.MESSAGE;
      }
    } else if (
      !typeSet ||
      field.type === FieldDescriptorProto_Type.MESSAGE ||
      field.type === FieldDescriptorProto_Type.ENUM ||
      field.type === FieldDescriptorProto_Type.GROUP
    ) {
      fail(`${what} in file "${file.name}" has no type`);
    }
    if (isExtension) {
      if (!field.extendee) fail(`${what} in file "${file.name}" does not name the message it extends`);
      field.extendee = `.${resolve(file, field.extendee, fqn, "message", what).fqn}`;
    }
    if (!isFieldSet(field, FieldDescriptorProtoSchema.field.jsonName) || field.jsonName === "") {
      field.jsonName = protoCamelCase(field.name);
    }
  };

  const linkMessage = (file: FileDescriptorProto, msg: DescriptorProto, scope: string) => {
    const fqn = scope ? `${scope}.${msg.name}` : msg.name;
    for (const field of msg.field) linkField(file, field, fqn, false);
    for (const ext of msg.extension) linkField(file, ext, fqn, true);
    // proto3 `optional`: each such field is the only member of a synthetic oneof, declared after the
    // real oneofs and named like protoc names it (`_` + field name).
    for (const field of msg.field) {
      if (!field.proto3Optional) continue;
      if (isFieldSet(field, FieldDescriptorProtoSchema.field.oneofIndex) && msg.oneofDecl[field.oneofIndex])
        continue;
      let name = `_${field.name}`;
      while (msg.oneofDecl.some((o) => o.name === name)) name = `X${name}`;
      field.oneofIndex = msg.oneofDecl.length;
      msg.oneofDecl.push(create(OneofDescriptorProtoSchema, { name }));
    }
    if (msg.options?.mapEntry) {
      const key = msg.field.find((f) => f.number === 1);
      const value = msg.field.find((f) => f.number === 2);
      if (!key || !value || msg.field.length !== 2) {
        fail(`map entry ${fqn} in file "${file.name}" must have exactly the fields key = 1 and value = 2`);
      }
    }
    for (const nested of msg.nestedType) linkMessage(file, nested, fqn);
  };

  const linkFile = (file: FileDescriptorProto) => {
    const pkg = file.package;
    for (const msg of file.messageType) linkMessage(file, msg, pkg);
    for (const ext of file.extension) linkField(file, ext, pkg, true);
    for (const svc of file.service) {
      const svcName = pkg ? `${pkg}.${svc.name}` : svc.name;
      for (const m of svc.method) {
        const what = `method ${svcName}.${m.name}`;
        const relativeTo = `${svcName}.${m.name}`;
        if (!m.inputType || !m.outputType) fail(`${what} in file "${file.name}" has no input or output type`);
        m.inputType = `.${resolve(file, m.inputType, relativeTo, "message", what).fqn}`;
        m.outputType = `.${resolve(file, m.outputType, relativeTo, "message", what).fqn}`;
      }
    }
  };

  const linked = new Set<string>();
  // Resolving can pull in more well-known files; link until nothing new appears.
  for (let more = true; more; ) {
    more = false;
    for (const file of [...byName.values()]) {
      if (linked.has(file.name)) continue;
      linked.add(file.name);
      if (!complete.has(file)) linkFile(file);
      more = true;
    }
  }

  // 5. Order: every file after its imports and after the files it references.
  const ordered: FileDescriptorProto[] = [];
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (name: string, importedBy: string | undefined) => {
    const file = byName.get(name);
    if (!file) {
      return fail(
        `file "${importedBy}" imports "${name}", which is missing. ` +
          "Include all imports in the schema (buf build, or protoc --include_imports).",
      );
    }
    const s = state.get(name);
    if (s === "done") return;
    if (s === "visiting") {
      const cycle = [...stack.slice(stack.indexOf(name)), name];
      return fail(`import cycle between files: ${cycle.map((n) => `"${n}"`).join(" -> ")}`);
    }
    state.set(name, "visiting");
    stack.push(name);
    for (const dep of file.dependency) visit(dep, name);
    for (const dep of implicitDeps.get(name) ?? []) visit(dep, name);
    stack.pop();
    state.set(name, "done");
    ordered.push(file);
  };
  // Given files keep their relative order where dependencies allow (stable output for listings).
  for (const name of given) visit(name, undefined);
  for (const name of byName.keys()) visit(name, undefined);

  try {
    return createFileRegistry(create(FileDescriptorSetSchema, { file: ordered }));
  } catch (err) {
    return fail(`invalid descriptors: ${errorMessage(err)}`);
  }
}

/**
 * Finds the fully qualified name (no leading dot) that `name`, used inside the element `relativeTo`,
 * refers to. Follows protoc: a leading dot means fully qualified; otherwise the first component of the
 * name is looked up from the innermost scope outward, and the rest is resolved inside the first scope
 * where it is found. If that finds nothing of the wanted kind, every enclosing scope is tried for the
 * whole name (lenient, for producers that write names protoc would not).
 */
export function lookup(
  symbols: ReadonlyMap<string, { kind: SymbolKind }>,
  name: string,
  relativeTo: string,
  want: "type" | "message" | "enum",
): string | undefined {
  const fits = (fqn: string): boolean => {
    const kind = symbols.get(fqn)?.kind;
    if (kind === undefined) return false;
    if (want === "type") return kind === "message" || kind === "enum";
    return kind === want;
  };
  if (name.startsWith(".")) {
    const fqn = name.slice(1);
    return fits(fqn) ? fqn : undefined;
  }
  const dot = name.indexOf(".");
  const first = dot < 0 ? name : name.slice(0, dot);
  const scopes: string[] = [];
  for (let scope = relativeTo; ; ) {
    const i = scope.lastIndexOf(".");
    if (i < 0) {
      scopes.push("");
      break;
    }
    scope = scope.slice(0, i);
    scopes.push(scope);
  }
  for (const scope of scopes) {
    const head = scope ? `${scope}.${first}` : first;
    const sym = symbols.get(head);
    if (!sym) continue;
    if (dot < 0) {
      if (fits(head)) return head;
      continue; // protoc keeps looking when a simple name is not a type
    }
    const aggregate =
      sym.kind === "message" || sym.kind === "enum" || sym.kind === "package" || sym.kind === "service";
    if (!aggregate) continue;
    const full = scope ? `${scope}.${name}` : name;
    if (fits(full)) return full;
    break; // protoc stops here; fall through to the lenient search
  }
  for (const scope of scopes) {
    const full = scope ? `${scope}.${name}` : name;
    if (fits(full)) return full;
  }
  return undefined;
}
