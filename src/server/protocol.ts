// What the editor extension and the language server agree on, in one file both import: the commands
// the code lenses run, the settings (initializationOptions and the `protocall` configuration section),
// and every custom LSP message as a typed `RequestType` constant with its parameters' check, so a
// method name or a shape cannot drift between the two ends. The server checks parameters on arrival
// (`checkedRequest` in custom-requests.ts) and answers bad ones with an InvalidParams error.
// Nothing here imports the server: the extension imports this file without pulling the server in.
import { RequestType, RequestType0 } from "vscode-languageserver-protocol";
import { arrayOf, type Check, isBoolean, isString, objectOf, oneOf, optional } from "./param-checks";

export type { ServerSettings } from "../core/analysis/settings";

/** "▶ Send": arguments `[documentUri: string, requestIndex: number]`. */
export const sendCommand = "protocall.send";
/** "Copy as curl": arguments `[documentUri: string, requestIndex: number]`. */
export const copyAsCurlCommand = "protocall.copyAsCurl";
/** "▶ Call this stub" above a stub of a mock's stub file: arguments `[documentUri: string, stubIndex: number]`. */
export const callStubCommand = "protocall.mock.callStub";
/** "Load Test…": arguments `[documentUri: string, requestIndex: number]`. */
export const loadTestCommand = "protocall.loadTest";
/** Request (no params, returns null): drop every cached schema, reflection included, and check all files again. */
export const refreshRequest = new RequestType0<null, void>("protocall/refreshSchemas");

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

/** Request: the Services view's sources (the workspace's, then the given servers). */
export const serviceSourcesRequest = new RequestType<ServiceSourcesParams, ServiceSourcesResult, void>(
  "protocall/serviceSources",
);
/** Request: the children of a source, a package or a service. */
export const serviceChildrenRequest = new RequestType<ServiceChildrenParams, ServiceChildrenResult, void>(
  "protocall/serviceChildren",
);
/** Request: the `.rpc` text of a new request for a method. */
export const serviceRequestTextRequest = new RequestType<
  ServiceRequestTextParams,
  ServiceRequestTextResult,
  void
>("protocall/serviceRequestText");

// ---- Parameter checks (one per request with parameters) -------------------------------------------

const optionalString = optional(isString);

/** The check of one `protocall.servers` entry. */
export const checkServiceServer: Check = objectOf<ServiceServer>({
  url: isString,
  name: optionalString,
  headers: optional(arrayOf(isString)),
  protocol: optional(oneOf("connect", "grpc", "grpcweb")),
  http2PriorKnowledge: optional(isBoolean),
  insecure: optional(isBoolean),
  cacert: optionalString,
  cert: optionalString,
  key: optionalString,
  servername: optionalString,
  reflectProtocol: optional(oneOf("grpc-v1", "grpc-v1alpha")),
});

/** The parameters' check of each custom request, by method. */
export const paramsChecks: Record<string, Check> = {
  [serviceSourcesRequest.method]: objectOf<ServiceSourcesParams>({ servers: arrayOf(checkServiceServer) }),
  [serviceChildrenRequest.method]: objectOf<ServiceChildrenParams>({
    source: isString,
    server: optional(checkServiceServer),
    parent: optional(
      objectOf<NonNullable<ServiceChildrenParams["parent"]>>({
        kind: oneOf("package", "service"),
        name: isString,
      }),
    ),
  }),
  [serviceRequestTextRequest.method]: objectOf<ServiceRequestTextParams>({
    source: isString,
    server: optional(checkServiceServer),
    method: isString,
    baseUrl: isString,
  }),
};
