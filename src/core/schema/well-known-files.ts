// The well-known .proto files that ship with @bufbuild/protobuf, by file name. Every schema can use
// them without supplying them: the linker adds the ones a schema imports, and the well-known types
// source resolves their types last.
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

let byName: Map<string, DescFile> | undefined;

/** The well-known files, keyed by their import path (`google/protobuf/timestamp.proto`). */
export function wellKnownFiles(): ReadonlyMap<string, DescFile> {
  if (!byName) {
    byName = new Map();
    for (const file of [
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
    ]) {
      byName.set(file.proto.name, file);
    }
  }
  return byName;
}
