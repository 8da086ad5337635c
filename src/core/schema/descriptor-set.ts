// Descriptor-set inputs: reading them (a file or `-` for stdin), telling their format from their
// content (never from the file name), and indexing them without decoding them.
//
// Accepted formats, all detected from the bytes:
// - "binary-set": a serialized google.protobuf.FileDescriptorSet (`buf build -o x.binpb`,
//   `protoc --descriptor_set_out`), including buf images, whose extra fields per file (8042) are
//   ignored;
// - "json-set": the Protobuf JSON form of a FileDescriptorSet (`{"file": [...]}`), e.g.
//   `buf build -o x.json`;
// - "plugin-request": a serialized google.protobuf.compiler.CodeGeneratorRequest, what protoc and
//   buf give a plugin on stdin (proto_file = 15, source_file_descriptors = 17).
//
// DescriptorSetIndex reads the wire format without decoding it (see wire-scan.ts): one pass finds
// every file's name, package and services and skips source info by its length; a file's imports,
// messages, enums and extensions are read when a look-up first needs that file (only the files
// whose package encloses the name asked for). Files are decoded one at a time, on demand, without
// their source info (sliced out of the bytes first) unless asked for. Over a file it reads with
// positioned reads, so only a window of the input is in memory.
import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import {
  create,
  createFileRegistry,
  type FileRegistry,
  fromJson,
  type JsonValue,
  toBinary,
} from "@bufbuild/protobuf";
import {
  type FileDescriptorProto,
  type FileDescriptorSet,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { errorMessage, ProtocallError } from "../errors";
import { decodeFileDescriptorProto } from "./descriptor-decode";
import {
  type ByteWindow,
  fileBytes,
  fileBytesWithoutSourceInfo,
  fileWindow,
  memoryWindow,
  type ScannedExtension,
  type ScannedFile,
  type ScannedService,
  scanDetails,
  scanExtensions,
  scanTopLevel,
  type TopLevelEntry,
  WireError,
} from "./wire-scan";

export type SchemaFormat = "binary-set" | "json-set" | "plugin-request";

/** What the files of a set are expected to be built by, for messages that say how to fix things. */
const HOW_TO_BUILD =
  "Expected a descriptor set or image (buf build -o set.binpb, or protoc --include_imports " +
  "--descriptor_set_out=set.binpb), its JSON form, or a plugin's CodeGeneratorRequest.";

/**
 * Reads the bytes of a schema input: `-` reads all of `stdin`, anything else is a file path.
 * Throws a ProtocallError naming the input when it is missing, a directory, unreadable or empty.
 */
export async function readSchemaInput(spec: string, stdin: NodeJS.ReadableStream): Promise<Uint8Array> {
  if (spec === "-") {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stdin as AsyncIterable<Buffer | string>) {
        chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
      }
    } catch (err) {
      throw new ProtocallError(`cannot read the schema from stdin: ${errorMessage(err)}`);
    }
    const bytes = Buffer.concat(chunks);
    if (bytes.length === 0) {
      throw new ProtocallError(`the schema on stdin is empty. ${HOW_TO_BUILD}`);
    }
    return bytes;
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(spec);
  } catch (err) {
    throw fileError(spec, err);
  }
  if (bytes.length === 0) throw new ProtocallError(`schema file ${spec} is empty. ${HOW_TO_BUILD}`);
  return bytes;
}

/** Turns a file-system error into a message that says what to do. */
export function fileError(path: string, err: unknown): ProtocallError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return new ProtocallError(`schema file ${path} does not exist`);
    case "EISDIR":
      return new ProtocallError(
        `schema file ${path} is a directory; pass a descriptor-set file, or use the directory as a workspace schema`,
      );
    case "EACCES":
    case "EPERM":
      return new ProtocallError(`schema file ${path} cannot be read: permission denied`);
    default:
      return new ProtocallError(`schema file ${path} cannot be read: ${errorMessage(err)}`);
  }
}

/** Whether the content starts (after whitespace and a BOM) with `{`: the JSON form. */
function looksLikeJson(bytes: Uint8Array): boolean {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
  while (
    i < bytes.length &&
    (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)
  ) {
    i++;
  }
  return bytes[i] === 0x7b;
}

/**
 * Tells the format of a schema input from its content. Throws a ProtocallError when it is none of
 * them (empty, random bytes, JSON that is not a descriptor set, a .proto source file, …).
 */
export function detectSchemaFormat(bytes: Uint8Array): SchemaFormat {
  return classify(bytes, "schema input").format;
}

interface Classified {
  format: SchemaFormat;
  /** The binary form (JSON converted), and its scanned top level. */
  window: ByteWindow;
  entries: TopLevelEntry[];
}

function classify(bytes: Uint8Array, label: string): Classified {
  if (bytes.length === 0) throw new ProtocallError(`${label} is empty. ${HOW_TO_BUILD}`);
  if (looksLikeJson(bytes)) {
    let binary: Uint8Array;
    try {
      binary = jsonSetToBinary(bytes, label);
    } catch (jsonError) {
      // A binary set can start like JSON too: 0x0A (a newline) and a length of 123 (`{`).
      try {
        const window = memoryWindow(bytes);
        const entries = scanTopLevel(window);
        return { format: classifyEntries(entries, label), window, entries };
      } catch {
        throw jsonError;
      }
    }
    const window = memoryWindow(binary);
    const entries = scanOrFail(window, label);
    classifyEntries(entries, label); // checks every file scanned
    return { format: "json-set", window, entries };
  }
  const window = memoryWindow(bytes);
  const entries = scanOrFail(window, label, bytes);
  return { format: classifyEntries(entries, label), window, entries };
}

/** Parses the JSON form and re-encodes it in binary, so both forms share one index. */
function jsonSetToBinary(bytes: Uint8Array, label: string): Uint8Array {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8"));
  } catch (err) {
    throw new ProtocallError(`${label} starts like JSON but is not valid JSON: ${errorMessage(err)}`);
  }
  if (
    json === null ||
    typeof json !== "object" ||
    Array.isArray(json) ||
    !Array.isArray((json as { file?: unknown }).file)
  ) {
    throw new ProtocallError(
      `${label} is JSON but not a descriptor set: it needs a top-level "file" array of FileDescriptorProtos. ${HOW_TO_BUILD}`,
    );
  }
  try {
    // buf's JSON images carry extra keys (bufExtension): ignore what FileDescriptorSet does not know.
    let set = fromJson(FileDescriptorSetSchema, json as JsonValue, { ignoreUnknownFields: true });
    // Custom options are written as "[full.name]" keys, which only a registry with those extensions
    // can read; the set declares them itself. Read it again with them, or they would be dropped.
    const registry = customOptionsRegistry(set, bytes);
    if (registry) {
      set = fromJson(FileDescriptorSetSchema, json as JsonValue, { ignoreUnknownFields: true, registry });
    }
    return toBinary(FileDescriptorSetSchema, set);
  } catch (err) {
    throw new ProtocallError(`${label} is JSON but not a valid descriptor set: ${errorMessage(err)}`);
  }
}

/**
 * The extensions of options messages that a JSON set declares, with the files they need, when the
 * JSON sets any custom option ("[full.name]" keys); undefined otherwise or when they do not link.
 */
function customOptionsRegistry(set: FileDescriptorSet, bytes: Uint8Array): FileRegistry | undefined {
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).includes('"[')) return undefined;
  const byName = new Map(set.file.map((f) => [f.name, f]));
  const declaresOptions = (f: FileDescriptorProto): boolean => {
    const isOption = (x: { extendee: string }) => /^\.google\.protobuf\.\w+Options$/.test(x.extendee);
    const inMessages = (list: FileDescriptorProto["messageType"]): boolean =>
      list.some((m) => m.extension.some(isOption) || inMessages(m.nestedType));
    return f.extension.some(isOption) || inMessages(f.messageType);
  };
  const files: FileDescriptorProto[] = [];
  const seen = new Set<string>();
  const add = (f: FileDescriptorProto | undefined) => {
    if (!f || seen.has(f.name)) return;
    seen.add(f.name);
    for (const dep of f.dependency) add(byName.get(dep));
    files.push(f);
  };
  for (const f of set.file) if (declaresOptions(f)) add(f);
  if (files.length === 0) return undefined;
  try {
    return createFileRegistry(create(FileDescriptorSetSchema, { file: files }));
  } catch {
    return undefined; // the options stay unread; everything else is unaffected
  }
}

function scanOrFail(w: ByteWindow, label: string, bytes?: Uint8Array): TopLevelEntry[] {
  try {
    return scanTopLevel(w);
  } catch (err) {
    if (err instanceof WireError) throw notASet(label, err, bytes);
    throw new ProtocallError(`${label} cannot be read: ${errorMessage(err)}`);
  }
}

function notASet(label: string, err: WireError, bytes?: Uint8Array): ProtocallError {
  let hint = HOW_TO_BUILD;
  if (bytes && looksLikeProtoSource(bytes)) {
    hint =
      "It looks like a .proto source file: pass its directory (a workspace schema) or build it with buf build.";
  }
  return new ProtocallError(
    `${label} is not a descriptor set, image or plugin request: ${err.message} at byte ${err.offset}. ${hint}`,
  );
}

function looksLikeProtoSource(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 4096)).toString("latin1");
  return /^\s*(syntax|edition|package|import|message|service|option)\b/m.test(head);
}

/**
 * Decides between a set and a plugin request from the top-level fields, and checks that every file
 * entry scanned. A set holds only field 1 (files); a plugin request has proto_file (15) or
 * source_file_descriptors (17), and its field 1 holds file names.
 */
function classifyEntries(entries: TopLevelEntry[], label: string): SchemaFormat {
  const isRequest = entries.some((e) => e.field === 15 || e.field === 17);
  if (isRequest) {
    for (const e of entries) {
      if ((e.field === 15 || e.field === 17) && e.error) throw badFile(label, e, entries);
    }
    return "plugin-request";
  }
  const other = entries.find((e) => e.field !== 1);
  if (other) {
    const single = entries.some((e) => e.field === 4 || e.field === 6 || e.field === 12);
    throw new ProtocallError(
      `${label} is not a descriptor set, image or plugin request: it has top-level field ${other.field}` +
        (single
          ? " (it looks like a single FileDescriptorProto; wrap it in a FileDescriptorSet)"
          : `. ${HOW_TO_BUILD}`),
    );
  }
  for (const e of entries) if (e.error) throw badFile(label, e, entries);
  return "binary-set";
}

function badFile(label: string, e: TopLevelEntry, entries: TopLevelEntry[]): ProtocallError {
  const index = entries.indexOf(e);
  const err = e.error as WireError;
  return new ProtocallError(
    `${label} is not a valid descriptor set: file #${index + 1} (bytes ${e.offset}-${e.offset + e.length}) ` +
      `is malformed: ${err.message} at byte ${err.offset}. ${HOW_TO_BUILD}`,
  );
}

// ---------------------------------------------------------------------------------------------------

/** One file of an index: what the scan found, without decoding. */
export interface IndexedFile {
  readonly name: string;
  readonly package: string;
  readonly dependencies: readonly string[];
  readonly services: readonly ScannedService[];
  /** Fully qualified names of the messages (nested included) and enums it declares. */
  readonly types: readonly string[];
  readonly extensions: readonly ScannedExtension[];
  /** Whether it carries source code info (comments and spans). */
  readonly hasSourceInfo: boolean;
}

/**
 * The lazily decoded index of a descriptor set, a buf image or a plugin request.
 *
 * - `listFiles()`, `hasFile(name)`, `file(name)`: the files, in input order, with their scanned
 *   metadata (a file's name is the first file of that name in the input);
 * - `listServices()`: fully qualified service names, sorted;
 * - `findFileBySymbol(name)`: the file that declares a service, method, message, enum or extension
 *   (the first declaration in the input wins);
 * - `findExtensionFile(extendee, number)`, `listExtensions(extendee)`: extensions (these read every
 *   file's extensions once);
 * - `closure(name)`: a file and its transitive imports that the input contains;
 * - `decode(name, withSourceInfo)`: one FileDescriptorProto, decoded on demand;
 * - `filesToGenerate` and `parameter`: a plugin request's own fields.
 */
export class DescriptorSetIndex {
  readonly format: SchemaFormat;
  readonly label: string;
  /** For a plugin request: file_to_generate (field 1), in order. */
  readonly filesToGenerate: readonly string[];
  /** For a plugin request: parameter (field 2), if any. */
  readonly parameter: string | undefined;
  private readonly window: ByteWindow;
  /** Files by name, in input order (the first file of a name wins, as in protoc). */
  private readonly scanned = new Map<string, ScannedFile>();
  // The look-up tables are built on the first look-up (listing services needs none of them).
  /** Position of each file in the input, to let the first declaration of a symbol win. */
  private readonly order = new Map<ScannedFile, number>();
  /** Files by package, to find the files that may declare a name without scanning all of them. */
  private readonly byPackage = new Map<string, ScannedFile[]>();
  /** Service → declaring file, for all files (the first pass reads services). */
  private readonly serviceFiles = new Map<string, ScannedFile>();
  /** Message, enum or extension → declaring file, as files get their details scanned. */
  private readonly symbols = new Map<string, ScannedFile>();
  /** Packages whose files all have their details scanned. */
  private readonly scannedPackages = new Set<string>();
  private lookupsReady = false;
  private readonly extensionsByKey = new Map<string, { x: ScannedExtension; file: ScannedFile }>();
  private allExtensionsScanned = false;
  private services: string[] | undefined;
  private release: (() => void) | undefined;

  private constructor(label: string, format: SchemaFormat, window: ByteWindow, entries: TopLevelEntry[]) {
    this.label = label;
    this.format = format;
    this.window = window;
    const toGenerate: string[] = [];
    let parameter: string | undefined;
    const files: ScannedFile[] = [];
    const later: ScannedFile[] = [];
    for (const e of entries) {
      if (format === "plugin-request") {
        if (e.field === 15 && e.file) files.push(e.file);
        else if (e.field === 17 && e.file) later.push(e.file);
        else if (e.field === 1) toGenerate.push(this.readString(e));
        else if (e.field === 2) parameter = this.readString(e);
      } else if (e.file) {
        files.push(e.file);
      }
    }
    // source_file_descriptors repeat files of proto_file: use them only for names proto_file lacks.
    for (const f of [...files, ...later]) {
      if (!this.scanned.has(f.name)) this.scanned.set(f.name, f);
    }
    this.filesToGenerate = toGenerate;
    this.parameter = parameter;
  }

  private prepareLookups(): void {
    if (this.lookupsReady) return;
    this.lookupsReady = true;
    for (const f of this.scanned.values()) {
      for (const s of f.services) {
        const had = this.serviceFiles.get(s.name);
        if (had === undefined || this.before(f, had)) this.serviceFiles.set(s.name, f);
      }
      if (f.hasDetails) this.addSymbols(f);
    }
  }

  /** The files of a package (built on the first look-up that misses). */
  private filesOfPackage(pkg: string): ScannedFile[] | undefined {
    if (this.byPackage.size === 0) {
      for (const f of this.scanned.values()) {
        let list = this.byPackage.get(f.package);
        if (!list) this.byPackage.set(f.package, (list = []));
        list.push(f);
      }
    }
    return this.byPackage.get(pkg);
  }

  /** Whether `a` comes before `b` in the input (positions numbered on the first duplicate symbol). */
  private before(a: ScannedFile, b: ScannedFile): boolean {
    if (this.order.size === 0) {
      let ordinal = 0;
      for (const f of this.scanned.values()) this.order.set(f, ordinal++);
    }
    return (this.order.get(a) as number) < (this.order.get(b) as number);
  }

  private putSymbol(name: string, file: ScannedFile): void {
    const had = this.symbols.get(name);
    if (had === undefined || this.before(file, had)) this.symbols.set(name, file);
  }

  private addSymbols(f: ScannedFile): void {
    for (const t of f.types) this.putSymbol(t, f);
    this.addExtensions(f, f.extensions);
  }

  private addExtensions(f: ScannedFile, extensions: readonly ScannedExtension[]): void {
    for (const x of extensions) {
      this.putSymbol(x.name, f);
      const key = `${x.extendee}#${x.number}`;
      const had = this.extensionsByKey.get(key);
      if (!had || this.before(f, had.file)) this.extensionsByKey.set(key, { x, file: f });
    }
  }

  /** Reads the extensions of every file once (not their other details). */
  private scanAllExtensions(): void {
    if (this.allExtensionsScanned) return;
    this.prepareLookups();
    for (const f of this.scanned.values()) {
      if (f.hasDetails) continue; // already added with its details
      try {
        this.addExtensions(f, scanExtensions(this.window, f));
      } catch (err) {
        if (err instanceof WireError) throw this.malformed(f, err);
        throw err;
      }
    }
    this.allExtensionsScanned = true;
  }

  private malformed(f: ScannedFile, err: WireError): ProtocallError {
    return new ProtocallError(
      `${this.label} is not a valid descriptor set: file "${f.name}" is malformed: ${err.message} ` +
        `at byte ${err.offset}. ${HOW_TO_BUILD}`,
    );
  }

  /** Scans the imports, messages, enums and extensions of a file if not done yet. */
  private complete(f: ScannedFile): ScannedFile {
    this.prepareLookups();
    if (!f.hasDetails) {
      try {
        scanDetails(this.window, f);
      } catch (err) {
        if (err instanceof WireError) throw this.malformed(f, err);
        throw err;
      }
      this.addSymbols(f);
    }
    return f;
  }

  /** Indexes bytes in memory (any of the three formats). Throws a ProtocallError on bad input. */
  static fromBytes(bytes: Uint8Array, label: string): DescriptorSetIndex {
    const c = classify(bytes, label);
    return new DescriptorSetIndex(label, c.format, c.window, c.entries);
  }

  /**
   * Indexes a file with positioned reads: only a small window of it is in memory at any time, and
   * source info is skipped by its length. The JSON form is read whole. Call `close()` when done.
   */
  static fromFile(path: string, label = `descriptor set ${path}`): DescriptorSetIndex {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch (err) {
      throw fileError(path, err);
    }
    let owned = true;
    try {
      let size: number;
      let head: Uint8Array;
      let whole: Uint8Array | undefined;
      try {
        const st = fstatSync(fd);
        if (st.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
        if (!st.isFile()) {
          // A pipe or device (/dev/stdin, <(…)): no positioned reads, read it through.
          whole = readFileSync(fd);
          size = whole.length;
          head = whole;
        } else {
          size = st.size;
          head = new Uint8Array(Math.min(size, 64));
          readSync(fd, head, 0, head.length, 0);
        }
      } catch (err) {
        throw fileError(path, err);
      }
      if (size === 0) throw new ProtocallError(`${label} is empty. ${HOW_TO_BUILD}`);
      if (whole) return DescriptorSetIndex.fromBytes(whole, label);
      if (looksLikeJson(head)) {
        let bytes: Uint8Array;
        try {
          bytes = readFileSync(fd);
        } catch (err) {
          throw fileError(path, err);
        }
        return DescriptorSetIndex.fromBytes(bytes, label);
      }
      const window = fileWindow(size, (target, length, position) => {
        try {
          return readSync(fd, target, 0, length, position);
        } catch (err) {
          throw fileError(path, err);
        }
      });
      let entries: TopLevelEntry[];
      try {
        entries = scanTopLevel(window);
      } catch (err) {
        if (err instanceof WireError) {
          throw notASet(label, err, head);
        }
        throw err;
      }
      const index = new DescriptorSetIndex(label, classifyEntries(entries, label), window, entries);
      index.release = () => closeSync(fd);
      owned = false;
      return index;
    } finally {
      if (owned) closeSync(fd);
    }
  }

  private readString(e: TopLevelEntry): string {
    return Buffer.from(fileBytes(this.window, e)).toString("utf8");
  }

  /** File names in input order. */
  listFiles(): string[] {
    return [...this.scanned.keys()];
  }

  /** Whether the input contains a file of that name. */
  hasFile(name: string): boolean {
    return this.scanned.has(name);
  }

  /** The scanned metadata of a file, or undefined when the input does not contain it. */
  file(name: string): IndexedFile | undefined {
    const found = this.scanned.get(name);
    if (!found) return undefined;
    const f = this.complete(found);
    return {
      name: f.name,
      package: f.package,
      dependencies: f.dependencies,
      services: f.services,
      types: f.types,
      extensions: f.extensions,
      hasSourceInfo: f.sourceInfo.length > 0,
    };
  }

  /** Fully qualified names of all services, sorted. */
  listServices(): string[] {
    if (!this.services) {
      const all: string[] = [];
      for (const f of this.scanned.values()) for (const s of f.services) all.push(s.name);
      this.services = [...new Set(all)].sort();
    }
    return this.services;
  }

  /**
   * The file that declares a fully qualified name (no leading dot): a service, message, enum or
   * extension, or a method (`pkg.Service.Method`).
   */
  findFileBySymbol(name: string): string | undefined {
    if (name.startsWith(".")) name = name.slice(1);
    this.prepareLookups();
    const service = this.serviceFiles.get(name);
    if (service !== undefined) return service.name;
    // Only files whose package encloses the name can declare it: scan just those, all of them, so
    // that the first declaration in the input wins.
    const packages = [""];
    for (let i = name.indexOf("."); i > 0; i = name.indexOf(".", i + 1)) packages.push(name.slice(0, i));
    for (const pkg of packages) {
      if (this.scannedPackages.has(pkg)) continue;
      for (const f of this.filesOfPackage(pkg) ?? []) this.complete(f);
      this.scannedPackages.add(pkg);
    }
    const found = this.symbols.get(name);
    if (found !== undefined) return found.name;
    // A method: `pkg.Service.Method`.
    const dot = name.lastIndexOf(".");
    if (dot <= 0) return undefined;
    const parent = this.serviceFiles.get(name.slice(0, dot));
    if (parent === undefined) return undefined;
    const declared = this.complete(parent).services.find((s) => s.name === name.slice(0, dot));
    return declared?.methods.includes(name.slice(dot + 1)) ? parent.name : undefined;
  }

  /** The extension of `extendee` with field `number`, and the file declaring it. */
  findExtensionFile(extendee: string, number: number): { file: string; name: string } | undefined {
    if (extendee.startsWith(".")) extendee = extendee.slice(1);
    this.scanAllExtensions();
    const found = this.extensionsByKey.get(`${extendee}#${number}`);
    return found ? { file: found.file.name, name: found.x.name } : undefined;
  }

  /** All extensions of a message, by fully qualified extendee name. */
  listExtensions(extendee: string): { file: string; name: string; number: number }[] {
    if (extendee.startsWith(".")) extendee = extendee.slice(1);
    this.scanAllExtensions();
    const out: { file: string; name: string; number: number }[] = [];
    for (const { x, file } of this.extensionsByKey.values()) {
      if (x.extendee === extendee) out.push({ file: file.name, name: x.name, number: x.number });
    }
    return out.sort((a, b) => a.number - b.number);
  }

  /**
   * A file followed by its transitive imports that the input contains, each once. Imports the input
   * lacks are left out (the linker supplies well-known files and reports the rest).
   */
  closure(name: string): string[] {
    const out: string[] = [];
    const seen = new Set<string>();
    const stack = [name];
    while (stack.length > 0) {
      const n = stack.pop() as string;
      if (seen.has(n)) continue;
      seen.add(n);
      const found = this.scanned.get(n);
      if (!found) continue;
      const f = this.complete(found);
      out.push(n);
      for (let i = f.dependencies.length - 1; i >= 0; i--) stack.push(f.dependencies[i]);
    }
    return out;
  }

  /**
   * Decodes one file. Without `withSourceInfo` its source_code_info is cut out of the bytes before
   * decoding (most of a compiler's output, never needed to encode or decode messages).
   */
  decode(name: string, withSourceInfo = false): FileDescriptorProto {
    const f = this.scanned.get(name);
    if (!f) throw new ProtocallError(`${this.label} does not contain file "${name}"`);
    let bytes: Uint8Array;
    try {
      bytes = withSourceInfo ? fileBytes(this.window, f) : fileBytesWithoutSourceInfo(this.window, f);
    } catch (err) {
      if (err instanceof ProtocallError) throw err;
      throw new ProtocallError(`${this.label}: cannot read file "${name}": ${errorMessage(err)}`);
    }
    try {
      return decodeFileDescriptorProto(bytes);
    } catch (err) {
      throw new ProtocallError(
        `${this.label}: file "${name}" is not a valid FileDescriptorProto: ${errorMessage(err)}. ${HOW_TO_BUILD}`,
      );
    }
  }

  /** Releases the file, if the index reads one. Safe to call more than once. */
  close(): void {
    const release = this.release;
    this.release = undefined;
    release?.();
  }
}
