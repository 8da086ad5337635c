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
import { wellKnownFiles } from "./well-known-files";

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

/** Creates the well-known types source. */
export function createWellKnownSource(): FileSource & { readonly wellKnown: true } {
  return {
    label: WELL_KNOWN_TYPES_LABEL,
    wellKnown: true,
    async listServices() {
      return [];
    },
    async findType(name: string): Promise<DescService | DescMessage | DescEnum | DescExtension | undefined> {
      return wellKnownRegistry().get(name);
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
