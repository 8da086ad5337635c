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
  Registry,
} from "@bufbuild/protobuf";
import type { FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { errorMessage, ProtocallError } from "../errors";
import { DescriptorSetIndex } from "./descriptor-set";
import { createLinker, type Linker, UnresolvedReferenceError } from "./link";
import type { FileSource } from "./types";

/** A FileSource over a descriptor set, with its index exposed for listings. */
export interface DescriptorSetSource extends FileSource {
  /** The scanned index: files, symbols, plugin request fields. */
  readonly index: DescriptorSetIndex;
}

/**
 * Opens a descriptor-set file (binary set, buf image, JSON set or plugin request) and indexes it
 * without decoding. Label (for messages): `descriptor set <path>` unless given. Throws a
 * ProtocallError on bad input.
 */
export async function openDescriptorSetFile(
  path: string,
  label = `descriptor set ${path}`,
): Promise<DescriptorSetSource> {
  return new LazySetSource(DescriptorSetIndex.fromFile(path, label));
}

/** The same over bytes in memory (stdin, build output). Throws a ProtocallError on bad input. */
export function openDescriptorSetBytes(bytes: Uint8Array, label: string): DescriptorSetSource {
  return new LazySetSource(DescriptorSetIndex.fromBytes(bytes, label));
}

type FoundType = DescService | DescMessage | DescEnum | DescExtension;

/** A linker and the files handed to it so far. */
interface LinkState {
  readonly linker: Linker;
  readonly given: Set<string>;
  /**
   * Every file given to this linker keeps its source info. The docs linker needs it for imports too:
   * a file first linked as an import is the one later asked for by name.
   */
  readonly sourceInfo?: boolean;
}

class LazySetSource implements DescriptorSetSource {
  readonly label: string;
  /** Registries by the file they were linked for (that file and everything it needs). */
  private readonly registries = new Map<string, Registry>();
  /** Files decoded with source info, by file name. */
  private readonly documented = new Map<string, DescFile>();
  /** Decoded files without source info. */
  private readonly decoded = new Map<string, FileDescriptorProto>();
  /**
   * Look-ups link files without source info once and share them (a message reached by two look-ups
   * is the same descriptor); findFile links the file asked for with its source info separately.
   * The protos are freshly decoded and ours: the linkers complete them in place (`owned`).
   */
  private plain: LinkState;
  private docs: LinkState | undefined;
  private closed = false;

  constructor(readonly index: DescriptorSetIndex) {
    this.label = index.label;
    this.plain = { linker: createLinker({ label: this.label, owned: true }), given: new Set() };
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
      this.docs ??= {
        linker: createLinker({ label: this.label, owned: true }),
        given: new Set(),
        sourceInfo: true,
      };
      desc = this.link(this.docs, file).getFile(file);
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
    this.docs = undefined;
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

  /** A registry of `file` and what it needs, linked on first use. */
  private registryFor(file: string): Registry {
    let registry = this.registries.get(file);
    if (!registry) {
      registry = this.link(this.plain, file);
      this.registries.set(file, registry);
    }
    return registry;
  }

  /**
   * Links `root` and its imports that the set contains (with source info when the state asks). Names a file uses without importing their file (sloppy producers) are looked up in
   * the index and the files that declare them added, until everything resolves.
   */
  private link(state: LinkState, root: string): FileRegistry {
    const files: FileDescriptorProto[] = [];
    const give = (name: string) => {
      for (const n of this.index.closure(name)) {
        if (state.given.has(n)) continue;
        state.given.add(n);
        files.push(state.sourceInfo ? this.index.decode(n, true) : this.decodeStripped(n));
      }
    };
    give(root);
    for (let attempt = 0; ; attempt++) {
      try {
        return state.linker.link(files.splice(0), [root]);
      } catch (err) {
        if (err instanceof UnresolvedReferenceError && attempt < 16) {
          const before = state.given.size;
          for (const candidate of err.candidates) {
            const owner = this.index.findFileBySymbol(candidate);
            if (owner !== undefined) give(owner);
          }
          if (state.given.size > before) continue;
        }
        if (err instanceof ProtocallError) throw err;
        // Descriptors that decode but make no sense (a damaged set) can fail inside the runtime.
        throw new ProtocallError(
          `${this.label}: invalid descriptors in file "${root}": ${errorMessage(err)}`,
        );
      }
    }
  }
}
