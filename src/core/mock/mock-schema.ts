// What the mock serves, taken from the schema sources every command uses (open-schema.ts: workspace
// builds, descriptor sets, registry modules): every service with its methods, the files reflection
// serves, and a registry for JSON (Any fields, error details). Only the services' files and their
// imports are linked, so a large descriptor set costs little more than its services.
import type { DescFile, DescMessage, DescMethod, DescService, Registry } from "@bufbuild/protobuf";
import { createRegistry } from "@bufbuild/protobuf";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb";
import { ProtocallError } from "../errors";
import type { SchemaSource } from "../schema/types";

export interface MockSchema {
  readonly services: readonly DescService[];
  /** Methods by `package.Service/Method`. */
  readonly methods: ReadonlyMap<string, DescMethod>;
  /** The services' files (their imports are reached through `dependencies`). */
  readonly files: readonly DescFile[];
  /** Every message of those files and their imports, and the google.rpc error details. */
  readonly registry: Registry;
  /** A message type by full name, from the registry. */
  message(name: string): DescMessage | undefined;
}

/** The path of a method: `package.Service/Method`. */
export function methodKey(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

/** Loads every service of the sources (the first source that defines a name wins). */
export async function loadMockSchema(sources: readonly SchemaSource[]): Promise<MockSchema> {
  const services: DescService[] = [];
  const seen = new Set<string>();
  for (const source of sources) {
    for (const name of await source.listServices()) {
      if (seen.has(name)) continue;
      const found = await source.findType(name);
      if (found?.kind !== "service") continue;
      seen.add(name);
      services.push(found);
    }
  }
  const schema = mockSchemaOf(services);
  if (schema.services.length === 0) {
    const labels = sources.map((s) => s.label).join(", ");
    throw new ProtocallError(
      `the schema (${labels || "none given"}) defines no service to serve; give --schema with the .proto files, descriptor set or module that define them`,
    );
  }
  return schema;
}

/** Services the mock always serves itself (reflection of what it serves, and its own health). */
const ownServices = /^(grpc\.reflection\.(v1|v1alpha)\.ServerReflection|grpc\.health\.v1\.Health)$/;

/** The mock schema of services already loaded (reflection and health services left to the mock). */
export function mockSchemaOf(given: readonly DescService[]): MockSchema {
  const services = given.filter((s) => !ownServices.test(s.typeName));
  const methods = new Map<string, DescMethod>();
  for (const s of services) for (const m of s.methods) methods.set(methodKey(m), m);
  const files = [...new Set(services.map((s) => s.file))];
  const all = new Set<DescFile>();
  const visit = (f: DescFile) => {
    if (all.has(f)) return;
    all.add(f);
    for (const d of f.dependencies) visit(d);
  };
  for (const f of files) visit(f);
  const registry = createRegistry(...all, file_google_rpc_error_details);
  return {
    services,
    methods,
    files,
    registry,
    message: (name) => registry.getMessage(name),
  };
}
