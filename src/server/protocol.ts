// What the editor extension and the language server agree on: the commands the code lenses run,
// the custom request that refreshes schemas, and the settings (initializationOptions and the
// `protocall` configuration section). Plain constants, so the extension can import them without
// pulling in the server.
export type { ServerSettings } from "./settings";

/** "▶ Send": arguments `[documentUri: string, requestIndex: number]`. */
export const sendCommand = "protocall.send";
/** "Copy as curl": arguments `[documentUri: string, requestIndex: number]`. */
export const copyAsCurlCommand = "protocall.copyAsCurl";
/** Request (no params, returns null): drop every cached schema, reflection included, and check all files again. */
export const refreshRequest = "protocall/refreshSchemas";

// ---- The Services view ----------------------------------------------------------------------------

/** A server of the Services view (an entry of the `protocall.servers` setting), read with reflection. */
export interface ServiceServer {
  url: string;
  name?: string;
  /** `Name: value` headers, also sent with reflection (as `protocall curl -H`). */
  headers?: string[];
  protocol?: "connect" | "grpc" | "grpcweb";
  http2PriorKnowledge?: boolean;
  insecure?: boolean;
  cacert?: string;
  cert?: string;
  key?: string;
  servername?: string;
  reflectProtocol?: "grpc-v1" | "grpc-v1alpha";
}

export type ServiceSourceKind = "workspace-build" | "descriptor-set" | "setting" | "server";

/** A source of the Services view. */
export interface ServiceSourceInfo {
  /** Names the source in `serviceChildren` requests: `build:<root>`, `set:<path>`, `setting:<path>`, `server:<url>`. */
  id: string;
  kind: ServiceSourceKind;
  label: string;
  /** The build root, file path or server URL. */
  origin: string;
  /** Why the source could not be opened (the message says how to fix it). */
  error?: string;
}

/** Params of `serviceSources`: the servers to list after the workspace's sources. */
export interface ServiceSourcesParams {
  servers: ServiceServer[];
}

export interface ServiceSourcesResult {
  sources: ServiceSourceInfo[];
}

/** A position in a document (zero-based), as LSP has it. */
export interface ServiceRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

/** A node below a source: a package, a service or a method. */
export type ServiceNode =
  | { kind: "package"; name: string; serviceCount: number }
  | {
      kind: "service";
      /** Fully qualified name. */
      name: string;
      label: string;
      comment?: string;
      deprecated?: boolean;
      /** The .proto file and span of the declaration, when the source has source info and the file is on disk. */
      location?: { uri: string; range: ServiceRange };
    }
  | {
      kind: "method";
      /** Fully qualified name, `pkg.Service.Method`. */
      name: string;
      label: string;
      service: string;
      streaming: "unary" | "server_streaming" | "client_streaming" | "bidi_streaming";
      input: string;
      output: string;
      comment?: string;
      deprecated?: boolean;
      idempotency?: "no_side_effects" | "idempotent";
      location?: { uri: string; range: ServiceRange };
    };

/** Params of `serviceChildren`: the children of a source (its packages), of a package or of a service. */
export interface ServiceChildrenParams {
  source: string;
  /** For a server source: its entry (servers are not kept by the language server). */
  server?: ServiceServer;
  /** Undefined for the source's own children. */
  parent?: { kind: "package" | "service"; name: string };
}

export interface ServiceChildrenResult {
  children: ServiceNode[];
  /** Why the children could not be listed (unreachable server, ...), with how to fix it. */
  error?: string;
}

/** Params of `serviceRequestText`: the `.rpc` text of a new request for a method. */
export interface ServiceRequestTextParams {
  source: string;
  server?: ServiceServer;
  /** Fully qualified method name. */
  method: string;
  /** The URL prefix written before `/pkg.Service/Method`: a server URL or `{{host}}`. */
  baseUrl: string;
}

export interface ServiceRequestTextResult {
  /** A request block (`### Method`, comments, URL, blank line, JSON skeleton), ending with a newline. */
  text?: string;
  error?: string;
}

/** Request: ServiceSourcesParams → ServiceSourcesResult. */
export const serviceSourcesRequest = "protocall/serviceSources";
/** Request: ServiceChildrenParams → ServiceChildrenResult. */
export const serviceChildrenRequest = "protocall/serviceChildren";
/** Request: ServiceRequestTextParams → ServiceRequestTextResult. */
export const serviceRequestTextRequest = "protocall/serviceRequestText";
