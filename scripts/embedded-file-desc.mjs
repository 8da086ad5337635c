// An esbuild plugin for the bundles: @bufbuild/protobuf's codegenv2/file.js (fileDesc(), which every
// generated _pb module and well-known file calls to build its descriptor) decodes the embedded
// FileDescriptorProto with src/core/schema/descriptor-decode.ts instead of
// fromBinary(FileDescriptorProtoSchema, ...). The library's way needs its descriptor of
// descriptor.proto built first (~12 ms of a cold start); the decoder gives the same result without it.
// Everything else in the module stays the library's own, imports included, so the order in which
// the library's modules initialise is unchanged (a generated file can be built while the package's
// index is still initialising). The build fails if an upgrade changed the lines this replaces.
// test/core/schema/embedded-file.test.ts bundles it and builds every generated file both ways.
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const decoder = join(dirname(fileURLToPath(import.meta.url)), "..", "src/core/schema/descriptor-decode.ts");

const replacements = [
  ['import { FileDescriptorProtoSchema } from "../wkt/google/protobuf/descriptor_pb.js";\n', ""],
  [
    'import { fromBinary } from "../from-binary.js";\n',
    `import { decodeFileDescriptorProto } from ${JSON.stringify(decoder)};\n`,
  ],
  [
    "fromBinary(FileDescriptorProtoSchema, base64Decode(b64))",
    "decodeFileDescriptorProto(base64Decode(b64))",
  ],
];

/** The library's codegenv2/file.js (ES module) with the decoder in place of fromBinary. */
export function patchFileDesc(text, file = "codegenv2/file.js") {
  let out = text;
  for (const [from, to] of replacements) {
    if (!out.includes(from)) {
      throw new Error(
        `${file} no longer contains ${JSON.stringify(from.trim())}: update scripts/embedded-file-desc.mjs for this @bufbuild/protobuf`,
      );
    }
    out = out.replace(from, to);
  }
  return out;
}

export const embeddedFileDesc = {
  name: "embedded-file-desc",
  setup(build) {
    build.onLoad(
      { filter: /[\\/]@bufbuild[\\/]protobuf[\\/]dist[\\/]esm[\\/]codegenv2[\\/]file\.js$/ },
      async (args) => ({
        contents: patchFileDesc(await readFile(args.path, "utf8"), args.path),
        loader: "js",
        resolveDir: dirname(args.path),
      }),
    );
  },
};
