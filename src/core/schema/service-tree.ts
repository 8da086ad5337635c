// The levels of a schema source's service tree, as the Services view shows them: packages, the
// services of a package, and a service's methods with their streaming kind, types, comments and
// declaration spans. Each level asks the source only for what it shows: packages and services come
// from the source's list of service names (a descriptor set answers from its index without decoding
// anything); a service's methods decode that one file with its source info.
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { normalizeComment } from "./docs";
import { findSpan, type SourceSpan, sourceInfo } from "./source-info";
import type { FileSource, NamedDesc } from "./types";

export type MethodKind = "unary" | "server_streaming" | "client_streaming" | "bidi_streaming";

export interface PackageEntry {
  /** The package name; "" for services declared without a package. */
  name: string;
  /** Fully qualified names of its services, sorted. */
  services: string[];
}

/** Where an element is declared: the file's name in the schema (`demo/v1/greet.proto`) and a span. */
export interface DeclarationSpan {
  file: string;
  span: SourceSpan;
}

export interface ElementDocs {
  /** The leading comment (or else the trailing one), indentation normalized; "" when none. */
  comment: string;
  /** The first line of `comment`. */
  summary: string;
  deprecated: boolean;
  /** The span of the element's name, else of its whole declaration, when the file has source info. */
  declaration?: DeclarationSpan;
}

export interface MethodEntry extends ElementDocs {
  /** Short name, `Greet`. */
  name: string;
  /** Fully qualified name, `demo.v1.GreetService.Greet`. */
  fullName: string;
  kind: MethodKind;
  /** Fully qualified input and output message names. */
  input: string;
  output: string;
  idempotency?: "no_side_effects" | "idempotent";
}

export interface ServiceEntry extends ElementDocs {
  name: string;
  fullName: string;
  /** The schema file that declares it. */
  file: string;
  methods: MethodEntry[];
}

/** The package of a fully qualified service name (services are always top-level declarations). */
export function packageOf(service: string): string {
  const dot = service.lastIndexOf(".");
  return dot < 0 ? "" : service.slice(0, dot);
}

/** Groups service names by package; packages sorted by name, services within them too. */
export function groupByPackage(services: readonly string[]): PackageEntry[] {
  const byPackage = new Map<string, string[]>();
  for (const s of services) {
    const pkg = packageOf(s);
    let list = byPackage.get(pkg);
    if (!list) byPackage.set(pkg, (list = []));
    list.push(s);
  }
  return [...byPackage.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, list]) => ({ name, services: list.sort() }));
}

/** The packages of a source with their services. Throws when the source fails (unreachable, unreadable). */
export async function listPackages(source: FileSource): Promise<PackageEntry[]> {
  return groupByPackage(await source.listServices());
}

/**
 * A service with its methods, from the file that declares it (with its source info, when it has
 * any). Undefined when the source does not define the service; throws when the source fails.
 */
export async function describeService(
  source: FileSource,
  fullName: string,
): Promise<ServiceEntry | undefined> {
  const file = await source.findFile(fullName);
  const service = file?.services.find((s) => s.typeName === fullName);
  if (!file || !service) return undefined;
  return {
    name: service.name,
    fullName,
    file: file.proto.name,
    ...elementDocs(service, service.deprecated),
    methods: service.methods.map(methodEntry),
  };
}

function methodEntry(m: DescMethod): MethodEntry {
  const entry: MethodEntry = {
    name: m.name,
    fullName: `${m.parent.typeName}.${m.name}`,
    kind: m.methodKind,
    input: m.input.typeName,
    output: m.output.typeName,
    ...elementDocs(m, m.deprecated),
  };
  // IdempotencyLevel: 1 no side effects, 2 idempotent.
  if (m.idempotency === 1) entry.idempotency = "no_side_effects";
  else if (m.idempotency === 2) entry.idempotency = "idempotent";
  return entry;
}

function elementDocs(desc: DescService | DescMethod, deprecated: boolean): ElementDocs {
  const info = sourceInfo(desc as NamedDesc);
  const raw = info.comments?.leading ?? info.comments?.trailing ?? "";
  const comment = normalizeComment(raw);
  const docs: ElementDocs = { comment, summary: comment.split("\n")[0].trim(), deprecated };
  if (info.location) {
    const file = desc.kind === "rpc" ? desc.parent.file : desc.file;
    // Field 1 of ServiceDescriptorProto and MethodDescriptorProto is the name.
    const span = findSpan(file, [...info.path, 1]) ?? info.location;
    docs.declaration = { file: file.proto.name, span };
  }
  return docs;
}
