// Looks up any fully qualified name — service, method, message, field, oneof, enum, enum value,
// extension — in schema sources that hand out whole files (FileSource), for hover and navigation.
//
// Sources find files by the names they index (services, messages, enums, extensions); fields,
// methods, oneofs and enum values live inside those. So the name is tried as it is, then each
// enclosing scope (`pkg.Msg.field` → `pkg.Msg`), and the element is resolved inside the file found.
// Only that file is decoded with its source info (a lazy descriptor set decodes nothing else).
import { createRegistry, type DescFile, type Registry } from "@bufbuild/protobuf";
import { type LookupResult, lookup } from "./lookup";
import type { FileSource } from "./types";

export interface SourceLookupResult extends LookupResult {
  /**
   * The element's file and everything it imports: pass it to renderDocs so that custom options are
   * shown by name (their extensions are declared in the imports).
   */
  readonly registry: Registry;
  /** The label of the source that defined the element. */
  readonly source: string;
}

/**
 * Finds an element by fully qualified name (a leading dot is allowed) in one source. Returns
 * undefined when the source does not define it; a failing source (unreadable, unreachable) throws.
 * Enum values are found under their enum (`pkg.Enum.VALUE`) and, within a message, in the
 * message's scope (`pkg.Msg.VALUE`).
 */
export async function lookupInSource(
  source: FileSource,
  name: string,
): Promise<SourceLookupResult | undefined> {
  const fullName = name.startsWith(".") ? name.slice(1) : name;
  if (fullName === "") return undefined;
  for (let scope = fullName; scope !== ""; scope = scope.slice(0, Math.max(0, scope.lastIndexOf(".")))) {
    const file = await source.findFile(scope);
    if (file === undefined) continue;
    const registry = fileRegistry(file);
    const found = lookup(registry, fullName);
    // The innermost scope a source knows is where the name would be declared: if it is not there,
    // the source does not define it.
    return found === undefined ? undefined : { ...found, registry, source: source.label };
  }
  return undefined;
}

/** The same over several sources in order; the first that defines the name wins. */
export async function lookupInSources(
  sources: readonly FileSource[],
  name: string,
): Promise<SourceLookupResult | undefined> {
  for (const source of sources) {
    const found = await lookupInSource(source, name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A registry of a file and its transitive imports. */
function fileRegistry(file: DescFile): Registry {
  const files: DescFile[] = [];
  const seen = new Set<string>();
  const stack = [file];
  while (stack.length > 0) {
    const f = stack.pop() as DescFile;
    if (seen.has(f.name)) continue;
    seen.add(f.name);
    files.push(f);
    stack.push(...f.dependencies);
  }
  return createRegistry(...files);
}
