// Serves any loaded schema over gRPC server reflection (grpc.reflection.v1 and/or v1alpha) on a
// Connect router, so every protocol the router speaks (Connect, gRPC, gRPC-Web) can reflect it.
import { type DescFile, type FileRegistry, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { type FileDescriptorProto, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import {
  file_grpc_reflection_v1_reflection,
  type ServerReflectionRequest,
  type ServerReflectionResponseSchema,
  ServerReflection as ServerReflectionV1,
} from "../../gen/grpc/reflection/v1/reflection_pb";
import {
  file_grpc_reflection_v1alpha_reflection,
  ServerReflection as ServerReflectionV1alpha,
} from "../../gen/grpc/reflection/v1alpha/reflection_pb";
import { linkFiles } from "./link";

export type ReflectionServiceVersion = "v1" | "v1alpha";

export interface ReflectionServerOptions {
  /** Which reflection services to register (default both). */
  versions?: ReflectionServiceVersion[];
}

type ResponseInit = MessageInitShape<typeof ServerReflectionResponseSchema>;

interface Index {
  files: Map<string, DescFile>;
  symbols: Map<string, DescFile>;
  extensions: Map<string, Map<number, DescFile>>;
  messages: Set<string>;
  services: string[];
  encoded: Map<DescFile, Uint8Array>;
}

/** What a reflection server can serve: descriptors to link, a registry, or generated files. */
export type ReflectionSchema = { files: FileDescriptorProto[] } | FileRegistry | readonly DescFile[];

function schemaFiles(schema: ReflectionSchema): Iterable<DescFile> {
  if (Array.isArray(schema)) return schema as readonly DescFile[];
  if ((schema as FileRegistry).kind === "registry") return (schema as FileRegistry).files;
  return linkFiles((schema as { files: FileDescriptorProto[] }).files, { label: "reflection schema" }).files;
}

function buildIndex(schemaFiles: Iterable<DescFile>, versions: ReflectionServiceVersion[]): Index {
  const index: Index = {
    files: new Map(),
    symbols: new Map(),
    extensions: new Map(),
    messages: new Set(),
    services: [],
    encoded: new Map(),
  };
  const reflectionFiles = versions.map((v) =>
    v === "v1" ? file_grpc_reflection_v1_reflection : file_grpc_reflection_v1alpha_reflection,
  );
  const addFile = (file: DescFile) => {
    if (index.files.has(file.proto.name)) return;
    index.files.set(file.proto.name, file);
    const symbol = (name: string) => {
      if (!index.symbols.has(name)) index.symbols.set(name, file);
    };
    for (const desc of nestedTypes(file)) {
      symbol(desc.typeName);
      switch (desc.kind) {
        case "message":
          index.messages.add(desc.typeName);
          for (const field of desc.fields) symbol(`${desc.typeName}.${field.name}`);
          for (const oneof of desc.oneofs) symbol(`${desc.typeName}.${oneof.name}`);
          break;
        case "enum":
          for (const value of desc.values) symbol(`${desc.typeName}.${value.name}`);
          break;
        case "service":
          index.services.push(desc.typeName);
          for (const method of desc.methods) symbol(`${desc.typeName}.${method.name}`);
          break;
        case "extension": {
          let byNumber = index.extensions.get(desc.extendee.typeName);
          if (!byNumber) index.extensions.set(desc.extendee.typeName, (byNumber = new Map()));
          if (!byNumber.has(desc.number)) byNumber.set(desc.number, file);
          break;
        }
      }
    }
    for (const dep of file.dependencies) addFile(dep);
  };
  for (const file of schemaFiles) addFile(file);
  for (const file of reflectionFiles) addFile(file);
  index.services = [...new Set(index.services)].sort();
  return index;
}

/** The requested file first, then its transitive imports not yet sent on this stream. */
function withDependencies(index: Index, file: DescFile, sent: Set<string>): Uint8Array[] {
  const out: Uint8Array[] = [];
  const queue: DescFile[] = [file];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const current = queue.shift() as DescFile;
    if (seen.has(current.proto.name)) continue;
    seen.add(current.proto.name);
    if (out.length === 0 || !sent.has(current.proto.name)) {
      sent.add(current.proto.name);
      let bytes = index.encoded.get(current);
      if (!bytes) {
        bytes = toBinary(FileDescriptorProtoSchema, current.proto);
        index.encoded.set(current, bytes);
      }
      out.push(bytes);
    }
    queue.push(...current.dependencies);
  }
  return out;
}

function answer(index: Index, request: ServerReflectionRequest, sent: Set<string>): ResponseInit {
  const base = { validHost: request.host, originalRequest: request };
  const notFound = (message: string): ResponseInit => ({
    ...base,
    messageResponse: { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: message } },
  });
  const files = (file: DescFile): ResponseInit => ({
    ...base,
    messageResponse: {
      case: "fileDescriptorResponse",
      value: { fileDescriptorProto: withDependencies(index, file, sent) },
    },
  });
  const req = request.messageRequest;
  switch (req.case) {
    case "listServices":
      return {
        ...base,
        messageResponse: {
          case: "listServicesResponse",
          value: { service: index.services.map((name) => ({ name })) },
        },
      };
    case "fileByFilename": {
      const file = index.files.get(req.value);
      return file ? files(file) : notFound(`file not found: ${req.value}`);
    }
    case "fileContainingSymbol": {
      const file = index.symbols.get(req.value.replace(/^\./, ""));
      return file ? files(file) : notFound(`symbol not found: ${req.value}`);
    }
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = req.value;
      const file = index.extensions.get(containingType.replace(/^\./, ""))?.get(extensionNumber);
      return file ? files(file) : notFound(`extension ${extensionNumber} of ${containingType} not found`);
    }
    case "allExtensionNumbersOfType": {
      const name = req.value.replace(/^\./, "");
      if (!index.messages.has(name)) return notFound(`message type not found: ${req.value}`);
      const numbers = [...(index.extensions.get(name)?.keys() ?? [])].sort((a, b) => a - b);
      return {
        ...base,
        messageResponse: {
          case: "allExtensionNumbersResponse",
          value: { baseTypeName: name, extensionNumber: numbers },
        },
      };
    }
    default:
      return {
        ...base,
        messageResponse: {
          case: "errorResponse",
          value: { errorCode: Code.InvalidArgument, errorMessage: "the request names no reflection query" },
        },
      };
  }
}

/**
 * Registers grpc.reflection.v1 and/or v1alpha ServerReflection on the router, answering from the given
 * schema: plain file descriptors (linked here, in any order), a FileRegistry, or generated files
 * (`file_*` descriptors; their imports are served too).
 */
export function registerReflection(
  router: ConnectRouter,
  schema: ReflectionSchema,
  options: ReflectionServerOptions = {},
): void {
  const versions = options.versions ?? ["v1", "v1alpha"];
  const index = buildIndex(schemaFiles(schema), versions);
  async function* serverReflectionInfo(requests: AsyncIterable<ServerReflectionRequest>) {
    const sent = new Set<string>();
    for await (const request of requests) {
      yield answer(index, request, sent);
    }
  }
  // Both versions have the same messages (only the package differs), so one handler serves both.
  if (versions.includes("v1")) router.service(ServerReflectionV1, { serverReflectionInfo });
  if (versions.includes("v1alpha")) {
    router.service(ServerReflectionV1alpha, {
      serverReflectionInfo: serverReflectionInfo as never,
    });
  }
}
