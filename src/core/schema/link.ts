// Links FileDescriptorProtos into a FileRegistry, whatever their order and however sloppy their
// producer: descriptor-set files, plugin requests and server reflection all come through here.
//
// @bufbuild/protobuf's createFileRegistry wants complete files, fully qualified, with every import
// built first. Before handing each file to it, this module:
// - copies the input (the caller's protos are never changed, unless handed over with `owned`);
// - resolves relative references (type_name, extendee, input_type, output_type) the way protoc
//   resolves names in scope, and writes them back fully qualified with a leading dot;
// - adds the imports a file uses but does not declare, including well-known files
//   (google/protobuf/*.proto), which come from the runtime and are never rebuilt;
// - fills what compilers always set: field labels, json_name, field types from their references,
//   synthetic oneofs for proto3 `optional`;
// - builds every file after the files it imports, and fails clearly on a missing import or a cycle.
// A Linker keeps what it built, so look-ups that share files build them once.
import { clone, createFileRegistry, type DescFile, type FileRegistry } from "@bufbuild/protobuf";
import { protoCamelCase } from "@bufbuild/protobuf/reflect";
import {
  type DescriptorProto,
  type FieldDescriptorProto,
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  type FileDescriptorSet,
  type OneofDescriptorProto,
} from "@bufbuild/protobuf/wkt";
import { errorMessage, ProtocallError } from "../errors";
import { createDescriptorMessage, isDescriptorFieldSet as isSet } from "./descriptor-decode";
import { WELL_KNOWN_PACKAGE_ROOTS, wellKnownFiles } from "./well-known-files";

// Values of FieldDescriptorProto's Label and Type. Not imported from the library's descriptor.proto
// module: reading any export of it builds that descriptor (a cold start's largest cost), and linking
// needs none of it (see descriptor-decode.ts).
const LABEL_OPTIONAL = 1;
const LABEL_REPEATED = 3;
const TYPE_GROUP = 10;
const TYPE_MESSAGE = 11;
const TYPE_ENUM = 14;

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

/** Name look-up as `lookup` needs it. */
export interface SymbolTable {
  get(name: string): { kind: SymbolKind } | undefined;
}

/**
 * Links files incrementally: every file is completed and built once, and later calls reuse the
 * descriptors built before (so a message reached by two look-ups is the same descriptor, and a large
 * schema is not rebuilt for each look-up). Only the files a call asks for, and what they need, are
 * completed and built: a broken file elsewhere does not get in the way.
 */
export interface Linker {
  /**
   * Adds `files` (names already known are ignored: the first file of a name wins) and returns a
   * registry with the files named in `roots` (default: all of `files`) and everything they need.
   * Throws a ProtocallError on a missing dependency, an import cycle or an unresolvable reference
   * (an UnresolvedReferenceError, which names the candidates).
   */
  link(files: readonly FileDescriptorProto[], roots?: readonly string[]): FileRegistry;
}

/**
 * Links the given files (in any order) into a registry. Well-known imports are supplied when absent.
 * Throws a ProtocallError on a missing dependency, an import cycle or an unresolvable reference.
 */
export function linkFiles(files: readonly FileDescriptorProto[], options: LinkOptions = {}): FileRegistry {
  return newLinker(options).linkTogether(files);
}

/** The runtime's well-known files as registries, built once (only needed when asked for directly). */
const wellKnownRegistries = new Map<string, FileRegistry>();

/** Creates an incremental linker; see Linker. */
export function createLinker(options: LinkOptions = {}): Linker {
  const { link } = newLinker(options);
  return { link };
}

function newLinker(
  options: LinkOptions,
): Linker & { linkTogether(files: readonly FileDescriptorProto[]): FileRegistry } {
  const prefix = options.label ? `${options.label}: ` : "";
  const fail = (message: string): never => {
    throw new ProtocallError(prefix + message);
  };
  const wkt = wellKnownFiles();

  /** Every file added, by name: the caller's until it is completed, then the completed copy. */
  const protos = new Map<string, FileDescriptorProto>();
  /** Files copied from the caller's (completing changes them). */
  const copied = new Set<string>();
  /** Files whose references have been resolved and completed. */
  const completed = new Set<string>();
  /** Built files and the registry of each (the file plus everything it needs). */
  const built = new Map<string, DescFile>();
  const registries = new Map<string, FileRegistry>();

  const { fileSymbols, symbols } = linkSymbols(wkt);

  const isWellKnown = (name: string) => wkt.has(name);

  // Lists `name` and everything it imports, imports first, completing each file once; fails on a
  // missing import or a cycle. With `stopAtBuilt`, a built file stands for its imports (built too).
  const visiting: string[] = [];
  const order = (
    name: string,
    importedBy: string | undefined,
    stopAtBuilt: boolean,
    seen: Set<string>,
    out: string[],
  ) => {
    if (seen.has(name)) return;
    let file = protos.get(name);
    if (!file || (stopAtBuilt && built.has(name))) {
      if (!file && !isWellKnown(name)) {
        fail(missingImport(importedBy, name));
      }
      seen.add(name);
      out.push(name);
      return;
    }
    if (visiting.includes(name)) {
      const cycle = [...visiting.slice(visiting.indexOf(name)), name];
      fail(`import cycle between files: ${cycle.map((n) => `"${n}"`).join(" -> ")}`);
    }
    visiting.push(name);
    try {
      if (!completed.has(name)) {
        // A missing import explains unresolvable names better than the names do.
        for (const dep of file.dependency) {
          if (!protos.has(dep) && !isWellKnown(dep)) {
            fail(missingImport(name, dep));
          }
        }
        // Copied only now, when it is needed: a look-up in a large set copies just its files.
        if (!options.owned && !copied.has(name)) {
          file = clone(FileDescriptorProtoSchema, file);
          protos.set(name, file);
          copied.add(name);
        }
        completeFile(file, symbols, prefix, fail);
        completed.add(name);
      }
      for (const dep of file.dependency) order(dep, name, stopAtBuilt, seen, out);
    } finally {
      visiting.pop();
    }
    seen.add(name);
    out.push(name);
  };

  const orderAll = (roots: readonly string[], stopAtBuilt: boolean): string[] => {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const name of roots) order(name, undefined, stopAtBuilt, seen, out);
    return out;
  };

  const invalid = (err: unknown, where: string): never =>
    fail(`invalid descriptors${where}: ${errorMessage(err)}`);

  // Builds one file on top of the files it imports, all built before. The runtime's well-known
  // files are used as they are.
  const buildOne = (name: string): DescFile => {
    const done = built.get(name);
    if (done) return done;
    const file = protos.get(name);
    if (!file) {
      const desc = wkt.get(name) as DescFile;
      built.set(name, desc);
      return desc;
    }
    let registry: FileRegistry;
    try {
      registry = createFileRegistry(file, (dep) => built.get(dep));
    } catch (err) {
      return invalid(err, ` in file "${name}"`);
    }
    const desc = registry.getFile(name) as DescFile;
    built.set(name, desc);
    registries.set(name, registry);
    return desc;
  };

  const add = (files: readonly FileDescriptorProto[]) =>
    addFiles(files, protos, fileSymbols, isWellKnown, fail);

  return {
    link(files, roots) {
      const names = add(files);
      const wanted = [...new Set(roots ?? names)];
      for (const name of orderAll(wanted, true)) buildOne(name);
      if (wanted.length === 1) return registryOf(registries, wkt, wanted[0]);
      // One registry over all: merge the registries of the files no other wanted file needs.
      const covered = new Set<string>();
      const tops: FileRegistry[] = [];
      for (const name of [...wanted].reverse()) {
        if (covered.has(name)) continue;
        const registry = registryOf(registries, wkt, name);
        for (const f of registry.files) covered.add(f.proto.name);
        tops.push(registry);
      }
      return createFileRegistry(...tops);
    },
    linkTogether(files) {
      const ordered = orderAll(add(files), false);
      try {
        // One call over the whole set, imports first: linear in its size. (Building file by file on
        // top of built imports re-adds every import's imports for each file, which grows with the
        // number of import paths: fine for the few files of one look-up, slow for a large set.)
        return createFileRegistry(
          createDescriptorMessage<FileDescriptorSet>("google.protobuf.FileDescriptorSet", {
            file: ordered.map((n) => protos.get(n) ?? (wkt.get(n) as DescFile).proto),
          }),
        );
      } catch (err) {
        return invalid(err, "");
      }
    },
  };
}

/** A symbol table with the entry (kind and file) of each name. */
type LinkSymbols = SymbolTable & { entry(name: string): SymbolEntry | undefined };

/**
 * The linker's symbols: those of the added files (`fileSymbols`, filled as files are added) first;
 * the well-known files' as a fallback for sloppy producers that reference google.protobuf types
 * without importing them.
 */
function linkSymbols(wkt: ReturnType<typeof wellKnownFiles>): {
  fileSymbols: Map<string, SymbolEntry>;
  symbols: LinkSymbols;
} {
  const fileSymbols = new Map<string, SymbolEntry>();
  // Built on the first look-up of a name that can be one of theirs (building them costs start-up time).
  let wellKnownSymbols: Map<string, SymbolEntry> | undefined;
  const wellKnownSymbol = (name: string): SymbolEntry | undefined => {
    const dot = name.indexOf(".");
    if (!WELL_KNOWN_PACKAGE_ROOTS.has(dot < 0 ? name : name.slice(0, dot))) return undefined;
    if (!wellKnownSymbols) {
      wellKnownSymbols = new Map();
      for (const desc of wkt.values()) addSymbols(wellKnownSymbols, desc.proto);
    }
    return wellKnownSymbols.get(name);
  };
  const symbols: LinkSymbols = {
    get: (name) => fileSymbols.get(name) ?? wellKnownSymbol(name),
    entry: (name) => fileSymbols.get(name) ?? wellKnownSymbol(name),
  };
  return { fileSymbols, symbols };
}

// Resolves the references of one file, writes them fully qualified, and fills what compilers
// always set. Imports it was missing (names it uses from files it does not import) are added.
function completeFile(
  file: FileDescriptorProto,
  symbols: LinkSymbols,
  prefix: string,
  fail: (message: string) => never,
): void {
  const addImport = (name: string) => {
    if (name !== file.name && !file.dependency.includes(name)) file.dependency.push(name);
  };
  const resolve = (
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
    const entry = symbols.entry(found) as SymbolEntry;
    addImport(entry.file);
    return { fqn: found, kind: entry.kind };
  };

  const linkField = (field: FieldDescriptorProto, scope: string, isExtension: boolean) => {
    const fqn = scope ? `${scope}.${field.name}` : field.name;
    const what = `${isExtension ? "extension" : "field"} ${fqn}`;
    // In descriptor.proto (proto2) an unset enum reads as its first value, so ask what is set.
    if (!isSet(field, "label")) field.label = LABEL_OPTIONAL;
    const typeSet = isSet(field, "type");
    if (field.typeName) {
      const want = !typeSet
        ? "type"
        : field.type === TYPE_ENUM
          ? "enum"
          : field.type === TYPE_MESSAGE || field.type === TYPE_GROUP
            ? "message"
            : "type";
      const target = resolve(field.typeName, fqn, want, what);
      field.typeName = `.${target.fqn}`;
      if (!typeSet) {
        field.type = target.kind === "enum" ? TYPE_ENUM : TYPE_MESSAGE;
      }
    } else if (
      !typeSet ||
      field.type === TYPE_MESSAGE ||
      field.type === TYPE_ENUM ||
      field.type === TYPE_GROUP
    ) {
      fail(`${what} in file "${file.name}" has no type`);
    }
    if (isExtension) {
      if (!field.extendee) fail(`${what} in file "${file.name}" does not name the message it extends`);
      field.extendee = `.${resolve(field.extendee, fqn, "message", what).fqn}`;
    }
    if (!isSet(field, "jsonName") || field.jsonName === "") {
      field.jsonName = protoCamelCase(field.name);
    }
  };

  const linkMessage = (msg: DescriptorProto, scope: string) => {
    const fqn = scope ? `${scope}.${msg.name}` : msg.name;
    // protobufjs (behind @grpc/reflection) also lists each extension of a message as a field of it,
    // named ".full.name", with the declaring file's types; the real extension is declared where it
    // belongs. No field can have such a name: drop them, or the two files would import each other.
    if (msg.field.some((f) => f.name.startsWith("."))) {
      msg.field = msg.field.filter((f) => !f.name.startsWith("."));
    }
    for (const field of msg.field) linkField(field, fqn, false);
    for (const ext of msg.extension) linkField(ext, fqn, true);
    // proto3 `optional` written by protobufjs (@grpc/reflection) as what it means, without the flag:
    // a oneof named `_` + field name whose only member is that field. Mark it so that the oneof is
    // the synthetic one protoc would have made, not a real oneof.
    if (file.syntax === "proto3") {
      for (const field of msg.field) {
        if (field.proto3Optional || !isSet(field, "oneofIndex")) continue;
        const oneof = msg.oneofDecl[field.oneofIndex];
        const members = msg.field.filter((f) => f.oneofIndex === field.oneofIndex && isSet(f, "oneofIndex"));
        if (oneof?.name === `_${field.name}` && members.length === 1 && field.label !== LABEL_REPEATED) {
          field.proto3Optional = true;
        }
      }
    }
    // proto3 `optional`: each such field is the only member of a synthetic oneof, declared after the
    // real oneofs and named like protoc names it (`_` + field name).
    for (const field of msg.field) {
      if (!field.proto3Optional) continue;
      if (isSet(field, "oneofIndex") && msg.oneofDecl[field.oneofIndex]) continue;
      let name = `_${field.name}`;
      while (msg.oneofDecl.some((o) => o.name === name)) name = `X${name}`;
      field.oneofIndex = msg.oneofDecl.length;
      msg.oneofDecl.push(
        createDescriptorMessage<OneofDescriptorProto>("google.protobuf.OneofDescriptorProto", { name }),
      );
    }
    if (msg.options?.mapEntry) {
      const key = msg.field.find((f) => f.number === 1);
      const value = msg.field.find((f) => f.number === 2);
      if (!key || !value || msg.field.length !== 2) {
        fail(`map entry ${fqn} in file "${file.name}" must have exactly the fields key = 1 and value = 2`);
      }
    }
    for (const nested of msg.nestedType) linkMessage(nested, fqn);
  };

  // Compilers always set the syntax; no syntax statement means proto2.
  if (!file.syntax) file.syntax = "proto2";
  const pkg = file.package;
  for (const msg of file.messageType) linkMessage(msg, pkg);
  for (const ext of file.extension) linkField(ext, pkg, true);
  for (const svc of file.service) {
    const svcName = pkg ? `${pkg}.${svc.name}` : svc.name;
    for (const m of svc.method) {
      const what = `method ${svcName}.${m.name}`;
      const relativeTo = `${svcName}.${m.name}`;
      if (!m.inputType || !m.outputType) fail(`${what} in file "${file.name}" has no input or output type`);
      m.inputType = `.${resolve(m.inputType, relativeTo, "message", what).fqn}`;
      m.outputType = `.${resolve(m.outputType, relativeTo, "message", what).fqn}`;
    }
  }
}

/** The registry of a built file, or of a well-known file asked for on its own. */
function registryOf(
  registries: Map<string, FileRegistry>,
  wkt: ReturnType<typeof wellKnownFiles>,
  name: string,
): FileRegistry {
  const registry = registries.get(name);
  if (registry) return registry;
  // A well-known file asked for on its own (nothing imports it): build a registry for it once.
  let wk = wellKnownRegistries.get(name);
  if (!wk) {
    const desc = wkt.get(name) as DescFile;
    wk = createFileRegistry(desc.proto, (dep) => wkt.get(dep));
    wellKnownRegistries.set(name, wk);
  }
  return wk;
}

/**
 * Adds the files of names not known yet (the first file of a name wins) and their symbols; returns
 * the names of all of `files`.
 */
function addFiles(
  files: readonly FileDescriptorProto[],
  protos: Map<string, FileDescriptorProto>,
  fileSymbols: Map<string, SymbolEntry>,
  isWellKnown: (name: string) => boolean,
  fail: (message: string) => never,
): string[] {
  const names: string[] = [];
  for (const input of files) {
    if (!input.name) fail("a file descriptor has no name; every FileDescriptorProto needs its file name");
    names.push(input.name);
    // The runtime's well-known files stand for given ones of the same name (same content, and
    // already built), unless the given one carries source info (comments for docs).
    if (protos.has(input.name) || (isWellKnown(input.name) && !input.sourceCodeInfo)) continue;
    protos.set(input.name, input);
    addSymbols(fileSymbols, input);
  }
  return names;
}

function missingImport(importer: string | undefined, name: string): string {
  return (
    `file "${importer}" imports "${name}", which is missing. ` +
    "Include all imports in the schema (buf build, or protoc --include_imports)."
  );
}

/** Adds the names a file declares (packages, messages, enums, services, extensions). */
function addSymbols(table: Map<string, SymbolEntry>, file: FileDescriptorProto) {
  const put = (name: string, kind: SymbolKind) => {
    if (!table.has(name)) table.set(name, { kind, file: file.name });
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
}

/**
 * Finds the fully qualified name (no leading dot) that `name`, used inside the element `relativeTo`,
 * refers to. Follows protoc: a leading dot means fully qualified; otherwise the first component of the
 * name is looked up from the innermost scope outward, and the rest is resolved inside the first scope
 * where it is found. If that finds nothing of the wanted kind, every enclosing scope is tried for the
 * whole name (lenient, for producers that write names protoc would not).
 */
export function lookup(
  symbols: SymbolTable,
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
