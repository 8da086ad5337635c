// A descriptor set (file, stdin or bytes in memory) as a FileSource, decoded lazily: a look-up
// decodes only the file that declares the name plus the files it needs, with source info stripped;
// findFile decodes source info for the one file asked for.
import type {
  DescEnum,
  DescExtension,
  DescFile,
  DescMessage,
  DescService,
  FileRegistry,
} from "@bufbuild/protobuf";
import type { FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { errorMessage, ProtocallError } from "../errors";
import { DescriptorSetIndex } from "./descriptor-set";
import { linkFiles } from "./link";
import type { FileSource } from "./types";

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
  private readonly registries = new Map<string, FileRegistry>();
  /** Files decoded with source info, by file name. */
  private readonly documented = new Map<string, DescFile>();
  /** Decoded files without source info, shared by all registries. */
  private readonly decoded = new Map<string, FileDescriptorProto>();
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
      const files = [
        withDocs,
        ...this.index
          .closure(file)
          .slice(1)
          .map((n) => this.decodeStripped(n)),
      ];
      desc = this.link(files, file).getFile(file);
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

  /** The registry holding `file` and everything it needs, linked on first use. */
  private registryFor(file: string): FileRegistry {
    let registry = this.registries.get(file);
    if (!registry) {
      registry = this.link(
        this.index.closure(file).map((n) => this.decodeStripped(n)),
        file,
      );
      // Every file of that closure shares the registry: later look-ups in them reuse it.
      for (const n of this.index.closure(file)) if (!this.registries.has(n)) this.registries.set(n, registry);
    }
    return registry;
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
