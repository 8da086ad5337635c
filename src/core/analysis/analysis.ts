// What the server knows about an open .rpc file: its parse (per version), each request's options as
// `protocall curl` reads them, its schema, its service and method. Computed once per document
// version and shared by diagnostics, hover and completion.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { DescMethod } from "@bufbuild/protobuf";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { errorMessage, ProtocallError } from "../errors";
import { type CurlOptions, defaultCurlOptions } from "../invoke/options";
import { isListMode } from "../invoke/url";
import { validateCurlOptions } from "../invoke/validate";
import { openRpcContext, type RpcContext } from "../rpcfile/context";
import { parseRpcFile } from "../rpcfile/parse";
import type { Diagnostic, RpcFile, RpcRequest } from "../rpcfile/types";
import { requestSchema } from "./request-schema";
import type { RequestSchema, SchemaStore, ServiceLookup } from "./schema-store";
import { resolvedNames, type UrlParts, urlParts } from "./url-parts";

export interface RequestInfo {
  request: RpcRequest;
  /** Diagnostics of converting the request (undefined variables, bad option values, ...). */
  conversion: Diagnostic[];
  /** The request's options as `protocall curl` reads them (without the body when that fails). */
  options?: CurlOptions;
  url?: UrlParts;
  /** Names from the URL with references substituted. */
  serviceName?: string;
  methodName?: string;
  schema?: RequestSchema;
  lookup?: ServiceLookup;
  method?: DescMethod;
}

export interface Analysis {
  uri: string;
  version: number;
  file: RpcFile;
  /** A problem with the environment file, shown at the top of the file. */
  contextProblem?: string;
  baseDir: string;
  requests: Map<number, Promise<RequestInfo>>;
  /** The schema store's generation `requests` were computed in (older ones read closed sources). */
  requestsGeneration: number;
  /** The environment and `.env` values, read once per version (null: unreadable). */
  context?: RpcContext | null;
}

/** Why `protocall curl` (and Send) would refuse the options before sending, if it would. */
function optionsProblem(o: CurlOptions): string | undefined {
  try {
    validateCurlOptions(o);
    return undefined;
  } catch (err) {
    return err instanceof ProtocallError ? err.message : undefined;
  }
}

export class Analyzer {
  private readonly cache = new Map<string, Analysis>();

  constructor(private readonly store: SchemaStore) {}

  /** The analysis of a document's current version (parsed now if it is not yet). */
  get(doc: TextDocument): Analysis {
    const cached = this.cache.get(doc.uri);
    if (cached && cached.version === doc.version) return cached;
    const file = parseRpcFile(doc.getText());
    const path = doc.uri.startsWith("file:") ? fileURLToPath(doc.uri) : undefined;
    const analysis: Analysis = {
      uri: doc.uri,
      version: doc.version,
      file,
      baseDir: path ? dirname(path) : process.cwd(),
      requests: new Map(),
      requestsGeneration: this.store.currentGeneration,
    };
    this.cache.set(doc.uri, analysis);
    return analysis;
  }

  forget(uri: string): void {
    this.cache.delete(uri);
  }

  /** Drops the per-request results (after the schema changed); parses are kept. */
  reset(): void {
    for (const a of this.cache.values()) {
      a.requests.clear();
      a.context = undefined;
      a.contextProblem = undefined;
    }
  }

  /** The selected environment's variables for a document (empty without one). */
  environment(doc: TextDocument): Readonly<Record<string, string>> {
    return this.context(this.get(doc), doc)?.environment ?? {};
  }

  /** The same in two layers: the selected environment's own values, and the `$shared` defaults. */
  environmentLayers(doc: TextDocument): RpcContext["environmentLayers"] {
    return this.context(this.get(doc), doc)?.environmentLayers ?? { selected: {}, shared: {} };
  }

  private context(a: Analysis, doc: TextDocument): RpcContext | undefined {
    if (a.context === undefined) a.context = this.openContext(a, doc) ?? null;
    return a.context ?? undefined;
  }

  private openContext(a: Analysis, doc: TextDocument): RpcContext | undefined {
    const settings = this.store.currentSettings;
    const filePath = doc.uri.startsWith("file:") ? fileURLToPath(doc.uri) : `${a.baseDir}/untitled.rpc`;
    try {
      return openRpcContext({
        filePath,
        environment: settings.environment,
        envFile: settings.envFile,
        processEnv: process.env,
      });
    } catch (err) {
      a.contextProblem = errorMessage(err);
      try {
        return openRpcContext({ filePath, processEnv: process.env });
      } catch {
        return undefined;
      }
    }
  }

  /** The request's info (its schema and method looked up once per version). */
  request(doc: TextDocument, request: RpcRequest): Promise<RequestInfo> {
    const a = this.get(doc);
    if (a.requestsGeneration !== this.store.currentGeneration) {
      a.requests.clear();
      a.requestsGeneration = this.store.currentGeneration;
    }
    let p = a.requests.get(request.index);
    if (!p) {
      p = this.compute(a, doc, request);
      a.requests.set(request.index, p);
    }
    return p;
  }

  private async compute(a: Analysis, doc: TextDocument, request: RpcRequest): Promise<RequestInfo> {
    const info: RequestInfo = { request, conversion: [] };
    if (request.url) info.url = urlParts(request.url);
    const ctx = this.context(a, doc);
    if (!ctx) return info;
    const known = new Set(a.file.diagnostics);
    // References to values that an earlier request captures are fine before anything has run.
    const full = ctx.toCurl(a.file, request, { pendingCaptures: "defer" });
    info.conversion = full.diagnostics.filter((d) => !known.has(d));
    // Without the body and the file's parse errors, for the schema even when the body is wrong.
    let options =
      full.options ??
      ctx.toCurl({ ...a.file, diagnostics: [] }, { ...request, body: [] }, { pendingCaptures: "defer" })
        .options;
    let names = options?.url ? resolvedNames(options.url) : {};
    if (!options) {
      // The request does not convert (an undefined variable, a bad option value): the workspace's
      // schema and the request's @schema values still check the body when the service and method
      // are written out.
      const service = info.url?.service?.text;
      const method = info.url?.method?.text;
      if (!service || !method || service.includes("{{") || method.includes("{{")) return info;
      options = defaultCurlOptions();
      options.reflect = false;
      for (const o of request.options) {
        if (o.name.text === "schema" && o.value && !o.value.text.includes("{{"))
          options.schemas.push(o.value.text);
      }
      names = { service, method };
    } else {
      info.options = options;
      // What Send refuses before it reads anything (`--reflect=false` without a schema, TLS flags on
      // an http URL, ...): the editor says it too, where the request starts.
      const invalid = optionsProblem(options);
      if (invalid && request.url) {
        info.conversion.push({
          severity: "error",
          message: invalid,
          range: request.url.range,
          code: "invalid-options",
        });
      }
    }
    if (isListMode(options)) return info;
    info.serviceName = names.service;
    info.methodName = names.method;
    info.schema = await requestSchema(this.store, options, a.baseDir);
    if (names.service) {
      info.lookup = await this.store.findService(info.schema, names.service);
      info.method = info.lookup.service?.methods.find((m) => m.name === names.method);
      if (info.lookup.service && !info.method && names.method) {
        // As the call's resolver does: a later source may define the same service with that method.
        info.method = await this.store.findLaterMethod(info.schema, names.service, names.method);
      }
    }
    return info;
  }
}
