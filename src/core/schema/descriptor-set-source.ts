// A descriptor set (file, stdin or bytes in memory) as a FileSource, decoded lazily: a look-up
// decodes only the file that declares the name plus the files it needs, with source info stripped;
// findFile decodes source info for the one file asked for.
import {
  createFileRegistry,
  createRegistry,
  type DescEnum,
  type DescExtension,
  type DescFile,
  type DescMessage,
  type DescService,
  type FileRegistry,
  isFieldSet,
  type Registry,
} from "@bufbuild/protobuf";
import {
  type DescriptorProto,
  type FieldDescriptorProto,
  FieldDescriptorProto_Type,
  FieldDescriptorProtoSchema,
  type FileDescriptorProto,
} from "@bufbuild/protobuf/wkt";
import { errorMessage, ProtocallError } from "../errors";
import { DescriptorSetIndex } from "./descriptor-set";
import { linkFiles } from "./link";
import type { FileSource } from "./types";
import { wellKnownFiles } from "./well-known-files";

/** A FileSource over a descriptor set, with its index exposed for listings. */
export interface DescriptorSetSource extends FileSource {
  /** The scanned index: files, symbols, plugin request fields. */
  readonly index: DescriptorSetIndex;
}

/**
 * Opens a descriptor-set file (binary set, buf image, JSON set or plugin request) and indexes it
 * without decoding. Label: `descriptor set <path>`. Throws a ProtocallError on bad input.
 */
export async function openDescriptorSetFile(path: string): Promise<DescriptorSetSource> {
  return new LazySetSource(DescriptorSetIndex.fromFile(path, `descriptor set ${path}`));
}

/** The same over bytes in memory (stdin, build output). Throws a ProtocallError on bad input. */
export function openDescriptorSetBytes(bytes: Uint8Array, label: string): DescriptorSetSource {
  return new LazySetSource(DescriptorSetIndex.fromBytes(bytes, label));
}

type FoundType = DescService | DescMessage | DescEnum | DescExtension;

class LazySetSource implements DescriptorSetSource {
  readonly label: string;
  /** Registries by the file they were linked for (that file and everything it needs). */
  private readonly registries = new Map<string, Registry>();
  /** Files decoded with source info, by file name. */
  private readonly documented = new Map<string, DescFile>();
  /** Decoded files without source info. */
  private readonly decoded = new Map<string, FileDescriptorProto>();
  /** Files linked without source info, by file name, shared by all look-ups. */
  private readonly linked = new Map<string, DescFile>();
  private closed = false;

  constructor(readonly index: DescriptorSetIndex) {
    this.label = index.label;
  }

  async listServices(): Promise<string[]> {
    this.checkOpen();
    return [...this.index.listServices()];
  }

  async findType(name: string): Promise<FoundType | undefined> {
    this.checkOpen();
    if (name.startsWith(".")) name = name.slice(1);
    const file = this.index.findFileBySymbol(name);
    if (file === undefined) return undefined;
    return this.registryFor(file).get(name);
  }

  async findExtension(extendee: string, number: number): Promise<DescExtension | undefined> {
    this.checkOpen();
    const found = this.index.findExtensionFile(extendee, number);
    if (!found) return undefined;
    return this.registryFor(found.file).getExtension(found.name);
  }

  async findFile(name: string): Promise<DescFile | undefined> {
    this.checkOpen();
    if (name.startsWith(".")) name = name.slice(1);
    const file = this.index.findFileBySymbol(name);
    if (file === undefined) return undefined;
    let desc = this.documented.get(file);
    if (!desc) {
      const withDocs = this.index.decode(file, true);
      desc = this.fastLink(file, withDocs);
      if (!desc) {
        const deps = this.index
          .closure(file)
          .slice(1)
          .map((n) => this.decodeStripped(n));
        desc = this.link([withDocs, ...deps], file).getFile(file);
      }
      if (!desc) throw new ProtocallError(`${this.label}: file "${file}" could not be linked`);
      this.documented.set(file, desc);
    }
    return desc;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.registries.clear();
    this.documented.clear();
    this.decoded.clear();
    this.linked.clear();
    this.index.close();
  }

  private checkOpen(): void {
    if (this.closed) throw new ProtocallError(`${this.label} is closed`);
  }

  private decodeStripped(name: string): FileDescriptorProto {
    let proto = this.decoded.get(name);
    if (!proto) {
      proto = this.index.decode(name, false);
      this.decoded.set(name, proto);
    }
    return proto;
  }

  /** A registry of `file` and everything it needs, linked on first use. */
  private registryFor(file: string): Registry {
    let registry = this.registries.get(file);
    if (!registry) {
      const desc = this.linked.get(file) ?? this.fastLink(file);
      registry = desc
        ? registryOf(desc)
        : this.link(
            this.index.closure(file).map((n) => this.decodeStripped(n)),
            file,
          );
      this.registries.set(file, registry);
    }
    return registry;
  }

  /**
   * Links compiler output directly with createFileRegistry, one file at a time in dependency order,
   * reusing the files linked by earlier look-ups (so a message reached twice is the same descriptor)
   * and the runtime's own well-known files when the set lacks them. Returns undefined when the
   * files need the lenient linker (link.ts): names not fully qualified, json_name or types missing,
   * a missing import, an import cycle, or anything createFileRegistry rejects.
   *
   * Why not always link.ts: it clones and re-resolves every file of the closure on each call, which
   * was most of the cost of resolving one method of a large set (google-proto-files).
   */
  private fastLink(rootName: string, withDocs?: FileDescriptorProto): DescFile | undefined {
    const wkt = wellKnownFiles();
    const protoOf = (name: string): FileDescriptorProto | undefined => {
      if (name === rootName && withDocs) return withDocs;
      return this.index.hasFile(name) ? this.decodeStripped(name) : undefined;
    };
    const root = protoOf(rootName);
    if (!root) return undefined;
    // Dependencies first (iterative depth-first search, post-order).
    const order: FileDescriptorProto[] = [];
    const state = new Map<string, "open" | "done">([[rootName, "open"]]);
    const stack: { file: FileDescriptorProto; next: number }[] = [{ file: root, next: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top.next >= top.file.dependency.length) {
        state.set(top.file.name, "done");
        order.push(top.file);
        stack.pop();
        continue;
      }
      const name = top.file.dependency[top.next++];
      if (state.get(name) === "done" || this.linked.has(name)) continue;
      if (state.get(name) === "open") return undefined; // a cycle
      const dep = protoOf(name);
      if (!dep) {
        if (wkt.has(name)) continue;
        return undefined; // missing
      }
      state.set(name, "open");
      stack.push({ file: dep, next: 0 });
    }
    if (!order.every(isCompilerOutput)) return undefined;
    const resolve = (name: string) => this.linked.get(name) ?? wkt.get(name);
    let desc: DescFile | undefined;
    try {
      for (const file of order) {
        desc = createFileRegistry(file, resolve).getFile(file.name);
        if (!desc) return undefined;
        // The file with docs is for findFile only; look-ups share the files without.
        if (file !== withDocs) this.linked.set(file.name, desc);
      }
    } catch {
      return undefined;
    }
    return desc;
  }

  /**
   * Links decoded files. Names that a file uses without importing them (sloppy producers) are
   * looked up in the index and their files added, so the linker can resolve them.
   */
  private link(files: FileDescriptorProto[], root: string): FileRegistry {
    const names = new Set(files.map((f) => f.name));
    const all = [...files];
    for (let i = 0; i < all.length; i++) {
      for (const ref of referencedNames(all[i])) {
        const owner = this.index.findFileBySymbol(ref);
        if (owner === undefined || names.has(owner)) continue;
        for (const n of this.index.closure(owner)) {
          if (names.has(n)) continue;
          names.add(n);
          all.push(this.decodeStripped(n));
        }
      }
    }
    const label = `${this.label} (file "${root}")`;
    try {
      return linkFiles(all, { label });
    } catch (err) {
      if (err instanceof ProtocallError) throw err;
      // Descriptors that decode but make no sense (a damaged set) can fail inside the runtime.
      throw new ProtocallError(`${label}: invalid descriptors: ${errorMessage(err)}`);
    }
  }
}

/** A registry of the types of a linked file and of all the files it depends on, transitively. */
function registryOf(file: DescFile): Registry {
  const all = new Set<DescFile>();
  const stack = [file];
  while (stack.length > 0) {
    const f = stack.pop() as DescFile;
    if (all.has(f)) continue;
    all.add(f);
    stack.push(...f.dependencies);
  }
  return createRegistry(...all);
}

/** Fully qualified names (leading dot) that a file's fields, extensions and methods refer to. */
function referencedNames(file: FileDescriptorProto): string[] {
  const out: string[] = [];
  const add = (n: string) => {
    if (n.startsWith(".")) out.push(n.slice(1));
  };
  const fields = (list: FileDescriptorProto["extension"]) => {
    for (const f of list) {
      add(f.typeName);
      add(f.extendee);
    }
  };
  const message = (m: FileDescriptorProto["messageType"][number]) => {
    fields(m.field);
    fields(m.extension);
    m.nestedType.forEach(message);
  };
  file.messageType.forEach(message);
  fields(file.extension);
  for (const s of file.service) {
    for (const m of s.method) {
      add(m.inputType);
      add(m.outputType);
    }
  }
  return out;
}

/**
 * Whether a file looks like a compiler wrote it: every reference fully qualified, every field typed
 * and with its json_name, proto3 `optional` fields in their synthetic oneofs. Such files link as
 * they are; anything else goes through the lenient linker.
 */
function isCompilerOutput(file: FileDescriptorProto): boolean {
  const T = FieldDescriptorProto_Type;
  const fieldOk = (f: FieldDescriptorProto, extension: boolean): boolean => {
    if (!isFieldSet(f, FieldDescriptorProtoSchema.field.type)) return false;
    const named = f.type === T.MESSAGE || f.type === T.ENUM || f.type === T.GROUP;
    if (named !== f.typeName.startsWith(".")) return false;
    if (extension) return f.extendee.startsWith(".");
    if (f.jsonName === "") return false;
    return !f.proto3Optional || isFieldSet(f, FieldDescriptorProtoSchema.field.oneofIndex);
  };
  const messageOk = (m: DescriptorProto): boolean =>
    m.field.every((f) => fieldOk(f, false)) &&
    m.extension.every((f) => fieldOk(f, true)) &&
    m.nestedType.every(messageOk);
  return (
    file.messageType.every(messageOk) &&
    file.extension.every((f) => fieldOk(f, true)) &&
    file.service.every((s) =>
      s.method.every((m) => m.inputType.startsWith(".") && m.outputType.startsWith(".")),
    )
  );
}
