// fileDesc() of @bufbuild/protobuf/codegenv2, which every generated _pb module calls to build its
// file's descriptor, with descriptor-decode.ts in place of fromBinary(FileDescriptorProtoSchema).
// The library's own needs descriptor.proto built first (~12 ms of a cold start, for a gRPC
// reflection call, a well-known type or any generated module); this one does not. The bundles use
// it in place of the library's (esbuild.mjs, `embeddedFileDesc`); the result is the same
// (test/core/schema/embedded-file.test.ts builds every generated and well-known file both ways).
import { createFileRegistry, type DescFile } from "@bufbuild/protobuf";
import { protoCamelCase } from "@bufbuild/protobuf/reflect";
import { base64Decode } from "@bufbuild/protobuf/wire";
import type { DescriptorProto } from "@bufbuild/protobuf/wkt";
import { decodeFileDescriptorProto, isDescriptorFieldSet } from "./descriptor-decode";

/** Generated descriptors leave out JSON names that follow from the field name: put them back. */
function restoreJsonNames(message: DescriptorProto): void {
  for (const field of message.field) {
    if (!isDescriptorFieldSet(field, "jsonName")) field.jsonName = protoCamelCase(field.name);
  }
  message.nestedType.forEach(restoreJsonNames);
}

/** Builds a generated file's descriptor from its embedded, base64-encoded FileDescriptorProto. */
export function fileDesc(b64: string, imports?: DescFile[]): DescFile {
  const root = decodeFileDescriptorProto(base64Decode(b64));
  root.messageType.forEach(restoreJsonNames);
  root.dependency = imports?.map((f) => f.proto.name) ?? [];
  const registry = createFileRegistry(root, (name) => imports?.find((f) => f.proto.name === name));
  const file = registry.getFile(root.name);
  if (!file) throw new Error(`embedded file ${root.name} did not build`);
  return file;
}
