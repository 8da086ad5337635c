// The well-known types (google/protobuf/*.proto) as a schema source. Always available and consulted
// last, so `google.protobuf.Timestamp`, `google.protobuf.Any` and friends resolve without any schema.
import {
  createRegistry,
  type DescEnum,
  type DescExtension,
  type DescMessage,
  type DescService,
  type Registry,
} from "@bufbuild/protobuf";
import type { FileSource } from "./types";
import { WELL_KNOWN_PACKAGE_ROOTS, wellKnownFiles } from "./well-known-files";

export const WELL_KNOWN_TYPES_LABEL = "well-known types";

let registry: Registry | undefined;

/**
 * One registry of all well-known types, built once. It holds the runtime's own descriptors, so
 * `google.protobuf.Timestamp` here is the very TimestampSchema that the JSON helpers know.
 */
export function wellKnownRegistry(): Registry {
  if (!registry) registry = createRegistry(...wellKnownFiles().values());
  return registry;
}

/** Whether `typeName` can name a well-known type (answered without building them). */
export function mayBeWellKnown(typeName: string): boolean {
  const dot = typeName.indexOf(".");
  return WELL_KNOWN_PACKAGE_ROOTS.has(dot < 0 ? typeName : typeName.slice(0, dot));
}

/**
 * `own` with the well-known types behind it: what `createRegistry(wellKnownRegistry(), own)` holds,
 * but the well-known types are built only when a name that can be one of theirs is not in `own`, or
 * when the registry is listed.
 */
export function withWellKnownTypes(own: Registry): Registry {
  // A name `own` defines is answered by `own` alone (as the later input of createRegistry wins).
  const pick = (name: string) =>
    own.get(name) !== undefined || !mayBeWellKnown(name) ? own : wellKnownRegistry();
  return {
    kind: "registry",
    get: (name) => pick(name).get(name),
    getMessage: (name) => pick(name).getMessage(name),
    getEnum: (name) => pick(name).getEnum(name),
    getExtension: (name) => pick(name).getExtension(name),
    getService: (name) => pick(name).getService(name),
    // Extensions are found by the extendee's name and the field number.
    getExtensionFor: (extendee, no) =>
      own.getExtensionFor(extendee, no) ??
      (mayBeWellKnown(extendee.typeName) ? wellKnownRegistry().getExtensionFor(extendee, no) : undefined),
    *[Symbol.iterator]() {
      for (const desc of wellKnownRegistry()) if (own.get(desc.typeName) === undefined) yield desc;
      yield* own;
    },
  };
}

/** Creates the well-known types source. */
export function createWellKnownSource(): FileSource & { readonly wellKnown: true } {
  return {
    label: WELL_KNOWN_TYPES_LABEL,
    wellKnown: true,
    async listServices() {
      return [];
    },
    async findType(name: string): Promise<DescService | DescMessage | DescEnum | DescExtension | undefined> {
      return mayBeWellKnown(name) ? wellKnownRegistry().get(name) : undefined;
    },
    async findExtension(extendee: string, number: number) {
      const message = wellKnownRegistry().getMessage(extendee);
      return message ? wellKnownRegistry().getExtensionFor(message, number) : undefined;
    },
    async findFile(name: string) {
      return wellKnownRegistry().get(name)?.file;
    },
    async close() {},
  };
}
