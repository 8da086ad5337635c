// What the mock serves, taken from the schema sources every command uses (open-schema.ts: workspace
// builds, descriptor sets, registry modules): every service with its methods, the files reflection
// serves, and a registry for JSON (Any fields, error details). Services are linked when first needed
// (by a stub, a call or reflection), so a large descriptor set starts as fast as its index reads.
import type { DescFile, DescMessage, DescMethod, DescService, Registry } from "@bufbuild/protobuf";
import { createMutableRegistry } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb";
import { ProtocallError } from "../errors";
import type { SchemaSource } from "../schema/types";

export interface MockSchema {
  /** Every service the schema defines (resolved or not), sorted. */
  readonly serviceNames: readonly string[];
  /** The services resolved so far (all of them for a schema built from services). */
  readonly services: readonly DescService[];
  /** Methods of the resolved services, by `package.Service/Method`. */
  readonly methods: ReadonlyMap<string, DescMethod>;
  /** The resolved services' files (their imports are reached through `dependencies`). */
  readonly files: readonly DescFile[];
  /** Every message of those files and their imports, and the google.rpc error details. */
  readonly registry: Registry;
  /** A message type by full name, from the registry. */
  message(name: string): DescMessage | undefined;
  /**
   * Links a service on first use (a large schema is not linked at start-up, as the schema engine
   * links lazily everywhere); undefined when the schema has no such service.
   */
  resolve(name: string): Promise<DescService | undefined>;
  /** Links every service (reflection of the whole schema needs them all). */
  resolveAll(): Promise<void>;
}

/** The path of a method: `package.Service/Method`. */
export function methodKey(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

/** Services the mock always serves itself (reflection of what it serves, and its own health). */
const ownServices = /^(grpc\.reflection\.(v1|v1alpha)\.ServerReflection|grpc\.health\.v1\.Health)$/;

/**
 * The schema of the sources (the first source that defines a name wins). Only the names of the
 * services are read now; each service is linked when a stub or a call first needs it.
 */
export async function loadMockSchema(sources: readonly SchemaSource[]): Promise<MockSchema> {
  const owner = new Map<string, SchemaSource>();
  for (const source of sources) {
    for (const name of await source.listServices()) {
      if (!owner.has(name) && !ownServices.test(name)) owner.set(name, source);
    }
  }
  if (owner.size === 0) {
    const labels = sources.map((s) => s.label).join(", ");
    throw new ProtocallError(
      `the schema (${labels || "none given"}) defines no service to serve; give --schema with the .proto files, descriptor set or module that define them`,
    );
  }
  return lazySchema([...owner.keys()].sort(), async (name) => {
    const found = await owner.get(name)?.findType(name);
    return found?.kind === "service" ? found : undefined;
  });
}

/** The mock schema of services already loaded (reflection and health services left to the mock). */
export function mockSchemaOf(given: readonly DescService[]): MockSchema {
  const services = given.filter((s) => !ownServices.test(s.typeName));
  const byName = new Map(services.map((s) => [s.typeName, s]));
  const schema = lazySchema([...byName.keys()].sort(), async (name) => byName.get(name));
  for (const s of services) schema.add(s);
  return schema;
}

function lazySchema(
  serviceNames: string[],
  find: (name: string) => Promise<DescService | undefined>,
): MockSchema & { add(service: DescService): void } {
  const services: DescService[] = [];
  const methods = new Map<string, DescMethod>();
  const files: DescFile[] = [];
  const registry = createMutableRegistry(file_google_rpc_error_details);
  const linked = new Set<DescFile>();
  const pending = new Map<string, Promise<DescService | undefined>>();
  const names = new Set(serviceNames);
  const visit = (f: DescFile) => {
    if (linked.has(f)) return;
    linked.add(f);
    for (const d of f.dependencies) visit(d);
    for (const t of nestedTypes(f)) {
      if (t.kind === "message" || t.kind === "enum" || t.kind === "extension") registry.add(t);
    }
  };
  const add = (service: DescService) => {
    if (services.includes(service)) return;
    services.push(service);
    for (const m of service.methods) methods.set(methodKey(m), m);
    if (!files.includes(service.file)) files.push(service.file);
    visit(service.file);
  };
  const resolve = (name: string): Promise<DescService | undefined> => {
    const done = services.find((s) => s.typeName === name);
    if (done) return Promise.resolve(done);
    if (!names.has(name)) return Promise.resolve(undefined);
    let p = pending.get(name);
    if (!p) {
      p = find(name).then((s) => {
        if (s) add(s);
        return s;
      });
      pending.set(name, p);
    }
    return p;
  };
  return {
    serviceNames,
    services,
    methods,
    files,
    registry,
    message: (name) => registry.getMessage(name),
    resolve,
    async resolveAll() {
      for (const name of serviceNames) await resolve(name);
    },
    add,
  };
}
