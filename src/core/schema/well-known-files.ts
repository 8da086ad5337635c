// The well-known .proto files that ship with @bufbuild/protobuf, by file name. Every schema can use
// them without supplying them: the linker adds the ones a schema imports, and the well-known types
// source resolves their types last.
//
// Building a file's descriptor (decoding its embedded FileDescriptorProto and creating its registry)
// costs milliseconds each, and most calls use none of them: names are listed here, and a file is
// built when it is first asked for (the CLI bundles initialise each generated module on first use).
import type { DescFile } from "@bufbuild/protobuf";
import {
  file_google_protobuf_any,
  file_google_protobuf_api,
  file_google_protobuf_compiler_plugin,
  file_google_protobuf_cpp_features,
  file_google_protobuf_descriptor,
  file_google_protobuf_duration,
  file_google_protobuf_empty,
  file_google_protobuf_field_mask,
  file_google_protobuf_go_features,
  file_google_protobuf_java_features,
  file_google_protobuf_source_context,
  file_google_protobuf_struct,
  file_google_protobuf_timestamp,
  file_google_protobuf_type,
  file_google_protobuf_wrappers,
} from "@bufbuild/protobuf/wkt";

/** Import path of each well-known file → its descriptor (read on first use). */
const fileByName: ReadonlyMap<string, () => DescFile> = new Map<string, () => DescFile>([
  ["google/protobuf/any.proto", () => file_google_protobuf_any],
  ["google/protobuf/api.proto", () => file_google_protobuf_api],
  ["google/protobuf/compiler/plugin.proto", () => file_google_protobuf_compiler_plugin],
  ["google/protobuf/cpp_features.proto", () => file_google_protobuf_cpp_features],
  ["google/protobuf/descriptor.proto", () => file_google_protobuf_descriptor],
  ["google/protobuf/duration.proto", () => file_google_protobuf_duration],
  ["google/protobuf/empty.proto", () => file_google_protobuf_empty],
  ["google/protobuf/field_mask.proto", () => file_google_protobuf_field_mask],
  ["google/protobuf/go_features.proto", () => file_google_protobuf_go_features],
  ["google/protobuf/java_features.proto", () => file_google_protobuf_java_features],
  ["google/protobuf/source_context.proto", () => file_google_protobuf_source_context],
  ["google/protobuf/struct.proto", () => file_google_protobuf_struct],
  ["google/protobuf/timestamp.proto", () => file_google_protobuf_timestamp],
  ["google/protobuf/type.proto", () => file_google_protobuf_type],
  ["google/protobuf/wrappers.proto", () => file_google_protobuf_wrappers],
]);

/**
 * The first component of every package a well-known file declares (`google.protobuf`,
 * `google.protobuf.compiler`, and `pb` of the language feature files): a name outside these cannot
 * be a well-known symbol, so looking it up never needs the files built.
 */
export const WELL_KNOWN_PACKAGE_ROOTS: ReadonlySet<string> = new Set(["google", "pb"]);

/** The well-known files, keyed by their import path (`google/protobuf/timestamp.proto`). */
export interface WellKnownFiles {
  /** Whether `name` is a well-known file (without building it). */
  has(name: string): boolean;
  /** The built file (built on first use). */
  get(name: string): DescFile | undefined;
  /** Every well-known file, all built. */
  values(): IterableIterator<DescFile>;
  /** Every import path. */
  keys(): IterableIterator<string>;
}

const built = new Map<string, DescFile>();

function get(name: string): DescFile | undefined {
  let file = built.get(name);
  if (!file) {
    file = fileByName.get(name)?.();
    if (file === undefined) return undefined;
    built.set(name, file);
  }
  return file;
}

const files: WellKnownFiles = {
  has: (name) => fileByName.has(name),
  get,
  keys: () => fileByName.keys(),
  *values() {
    for (const name of fileByName.keys()) yield get(name) as DescFile;
  },
};

/** The well-known files, keyed by their import path; each built when first asked for. */
export function wellKnownFiles(): WellKnownFiles {
  return files;
}
