// The contract between the schema engine and everything that uses it (invoke, rpcfile, the language
// server, the extension). Every schema source — a descriptor-set file, a workspace build, a plugin
// request, server reflection, the well-known types — is a SchemaSource; a Resolver asks them in order.
import type {
  DescEnum,
  DescEnumValue,
  DescExtension,
  DescField,
  DescFile,
  DescMessage,
  DescMethod,
  DescOneof,
  DescService,
} from "@bufbuild/protobuf";

/** Any element that has a fully qualified name. */
export type NamedDesc =
  | DescService
  | DescMethod
  | DescMessage
  | DescField
  | DescOneof
  | DescEnum
  | DescEnumValue
  | DescExtension;

export interface SchemaSource {
  /** Says what the source is, for messages: `descriptor set api.binpb`, `reflection at http://…`. */
  readonly label: string;
  /** Fully qualified names of all services, sorted. */
  listServices(): Promise<string[]>;
  /**
   * Finds a service, message, enum or extension by fully qualified name (no leading dot), with
   * everything it references linked and ready to encode and decode. `undefined` when the source does
   * not define it; throws a ProtocallError when the source itself fails (unreadable, unreachable).
   */
  findType(name: string): Promise<DescService | DescMessage | DescEnum | DescExtension | undefined>;
  /** Finds an extension by the message it extends and its field number. */
  findExtension(extendee: string, number: number): Promise<DescExtension | undefined>;
  /** Releases connections or files. Safe to call more than once. */
  close(): Promise<void>;
}

/** A source that can also hand out whole files with their source info (for docs and navigation). */
export interface FileSource extends SchemaSource {
  /** The file that declares a fully qualified name, decoded with source info when it has any. */
  findFile(name: string): Promise<DescFile | undefined>;
}
