// The call pipeline: the one way a call is made, whichever front end asks for it.
//
//   1. open the target   describeTarget (validate, URL, headers, credentials, User-Agent), then the
//                        transport and the resolver (server reflection, --schema values, the front
//                        end's fallback sources), from the Connections the front end gives
//   2. resolve           list services / methods, or find the method (once more with fresh schemas
//                        when a kept one does not have it)
//   3. stream requests   the -d documents, Any types in them loaded by "@type"
//   4. format responses  each message as `protocall curl` prints it (Any, extensions), handed to the
//                        front end as it arrives, and written to the -o file
//   5. describe failure  describeFailure: the text `protocall curl` prints and the facts behind it
//
// `--timeout` bounds the whole call as in `buf curl` (call-context.ts owns it): every setup step
// (schema loading, dialing, the TLS handshake, reflection) ends when it expires, and the RPC gets what
// is left as its deadline, which the transport enforces in Go's words.
// `protocall curl` and `protocall run` render the result to stdout and stderr (src/cli/run-curl.ts); the
// editor's session adds only caching and its fallback sources (call-session.ts).

import type { DescMethod, JsonValue } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { ProtocallError } from "../errors";
import type { RegistryAccess } from "../schema/registry-modules";
import { schemaResolutionOrder } from "../schema/resolution-order";
import type { Resolver } from "../schema/resolver";
import type { SchemaSource } from "../schema/types";
import { CallContext, type SetupPhase, SetupTimeout } from "./call-context";
import type { Connections, ResolverSettings } from "./connections";
import { type CallFailure, type CallPhase, decodeFailureDetails, describeFailure, oneLine } from "./failure";
import { invokeMethod } from "./invoke";
import type { InputIo } from "./io";
import { messageTypes } from "./message-types";
import type { CurlOptions } from "./options";
import { type OutputSink, openOutputFile } from "./output-sink";
import { withProxyOverride } from "./proxy-choice";
import { openRequestData, type RequestDocument, requestDataLabel } from "./request-data";
import type { StreamProgress } from "./stream-progress";
import { type CallTarget, describeTarget, inMode, reflectionSource } from "./target";
import type { CurlTransport } from "./transport";
import { isListMode } from "./url";
import type { VerboseLog } from "./verbose";

export interface PipelineOptions {
  /** The verbose transcript (`protocall curl -v` writes it to stderr, the editor to its log). */
  log: VerboseLog;
  /** Where transports and resolvers come from: fresh for the call, or kept (the editor's session). */
  connections: Connections;
  /** Product token for the default User-Agent, e.g. `protocall/1.0.0`. */
  product?: string;
  /** Ends the call early (Ctrl-C, the editor's Cancel): it fails as canceled. */
  signal?: AbortSignal;
  /**
   * The front end's workspace sources (the editor's): asked after reflection when the options name no
   * --schema, as schemaResolutionOrder says.
   */
  fallbackSources?: readonly SchemaSource[];
  /** Longest wait for one reflection answer, in milliseconds (default 30 s). */
  reflectionTimeoutMs?: number;
  /** The editor's sign-ins (Webhooks view), for `--schema REMOTE/owner/module`. */
  registries?: RegistryAccess;
  /** Decode the error details of a failed RPC to JSON (the editor shows them). */
  decodeDetails?: boolean;
  /** The method, once resolved. */
  onMethod?(method: DescMethod): void;
  /** The response headers, when they arrive. */
  onHeaders?(headers: Headers): void;
  /**
   * Each response message as proto JSON with implicit fields at their defaults (what assertions
   * read; message-types.ts `responseValue`). Only computed when given.
   */
  onMessageValue?(value: JsonValue): void;
  /**
   * Each response message as formatted JSON (without a newline), as it arrives. A promise makes the
   * call wait (backpressure); return undefined whenever possible, so a long stream stays cheap.
   */
  onMessage?(json: string): void | Promise<void>;
  /** The bytes of a `--stream-file` sent so far (stream-file.ts), as the call takes each chunk. */
  onStreamProgress?(progress: StreamProgress): void;
  /**
   * The request documents to send instead of the -d data: a live stream the front end feeds one
   * message at a time (live-requests.ts), ended when it half-closes.
   */
  requests?: AsyncIterable<RequestDocument>;
}

export interface PipelineResult {
  ok: boolean;
  /** The described target, once the options were read. */
  target?: CallTarget;
  method?: DescMethod;
  /** For --list-services / --list-methods: the lines `protocall curl` prints (without newlines). */
  listing?: string[];
  /** The response headers and trailers of the RPC. */
  headers?: Headers;
  trailers?: Headers;
  /** Notes about the options (`protocall curl -v` prints them). */
  warnings: string[];
  failure?: CallFailure;
}

/** The request data of the options (-d, --stream-file), a file stream's progress going to the front end. */
function openData(
  o: CurlOptions,
  io: InputIo,
  target: { dataFromHeaderFile?: Parameters<typeof openRequestData>[2] },
  p: PipelineOptions,
) {
  return openRequestData(o, io, target.dataFromHeaderFile, p.onStreamProgress);
}

/** Runs one call through the pipeline. Never throws: a failure is described in the result. */
export async function runPipeline(o: CurlOptions, io: InputIo, p: PipelineOptions): Promise<PipelineResult> {
  const result: PipelineResult = { ok: false, warnings: [] };
  const log = p.log;
  const bounds = new CallContext(p.signal, o.timeoutMs, log);
  const bound = <T>(step: Promise<T>, phase: SetupPhase) => bounds.race(step, phase);
  let phase: CallPhase = "setup";
  let res: Resolver | undefined;
  let file: OutputSink | undefined;
  let failed: unknown;
  try {
    const target = await bound(describeTarget(o, io, p.product), "reading the options");
    result.target = target;
    for (const w of target.warnings) {
      result.warnings.push(w);
      log.info(w);
    }
    const { connection, url } = target;
    const transport = connection
      ? await bound(p.connections.transport(connection, log, target.splitHeader), "connecting")
      : undefined;

    const { settings, reflects, open } = schemaSources(o, io, p, target, transport, bounds.signal);
    let resolver = p.connections.resolver(settings, reflects ? connection : undefined, log, open);
    res = await bound(resolver.ready, "loading the schema");

    if (isListMode(o)) {
      result.listing = await bound(listing(res, o.listServices), "loading the schema");
      result.ok = true;
      return result;
    }

    const find = (r: Resolver) =>
      bound(
        schemaStep(() => r.findMethod(url.service ?? "", url.method ?? "")),
        "loading the schema",
      );
    let method: DescMethod;
    try {
      method = await find(res);
    } catch (err) {
      // A schema kept from an earlier call may be out of date (the server or the .proto files changed
      // since): look once more with a fresh one before reporting the method as unknown.
      if (resolver.fresh || !(err instanceof ProtocallError) || err instanceof SetupTimeout) throw err;
      log.info("Method not found in the cached schema: resolving the schema again");
      resolver = resolver.renew();
      res = await bound(resolver.ready, "loading the schema");
      method = await find(res);
    }
    result.method = method;
    p.onMethod?.(method);

    let callTransport = transport as CurlTransport;
    if (method.methodKind === "bidi_streaming" && connection && !url.secure && connection.mode === "h1") {
      // HTTP/1.1 cannot carry a bidi stream: h2c, as buf does.
      log.info("Using HTTP/2 prior knowledge over plain-text (h2c): a bidi stream needs HTTP/2");
      callTransport = await bound(
        p.connections.transport(inMode(connection, "h2"), log, target.splitHeader),
        "connecting",
      );
    }
    log.info(`Invoking RPC ${method.parent.typeName}.${method.name}`);
    const requests = p.requests ?? (await bound(openData(o, io, target, p), "opening the request data"));
    const types = await bound(
      messageTypes(res, method, { emitDefaults: o.emitDefaults, log }),
      "loading the schema",
    );
    const requestDocs = requests && types.requestsMayHoldAny ? withRequestTypes(requests, types) : requests;
    // -o: the messages go to the file (opened before the call, so a path that cannot be written
    // fails before anything is sent); output that can no longer be written ends the call.
    if (o.output) file = await bound(openOutputFile(o.output, io.cwd), "opening the output file");
    const out = file;
    const stop = new AbortController();
    const unwatch = out?.onBroken((err) => stop.abort(err));
    const signal = p.signal ? AbortSignal.any([p.signal, stop.signal]) : stop.signal;
    const onMessage = p.onMessage;
    const onValue = p.onMessageValue;
    const emit = (message: Parameters<typeof types.formatResponse>[0]): void | Promise<void> => {
      const json = types.formatResponse(message);
      onValue?.(types.responseValue(message));
      const toFile = out?.write(`${json}\n`);
      const toFront = onMessage?.(json);
      return toFile && toFront ? Promise.all([toFile, toFront]).then(() => {}) : (toFile ?? toFront);
    };
    const exclusive = p.connections.exclusive;
    const timeoutMs = bounds.remainingForCall();
    phase = "call";
    try {
      const { trailers } = await invokeMethod({
        transport: callTransport.transport,
        method,
        requests: requestDocs,
        requestLabel: requestsLabel(o, p.requests !== undefined),
        headers: target.headers,
        timeoutMs,
        signal,
        registry: () => types.requestRegistry(),
        // The fast paths decode and encode in the transport; they need it to themselves, and an
        // Any in a response needs its type loaded before the message can be decoded.
        tapResponses:
          exclusive && !types.responsesMayHoldAny
            ? (suffix, tap) => callTransport.tapResponses(suffix, tap)
            : undefined,
        tapRequests: exclusive ? (suffix, body) => callTransport.tapRequests(suffix, body) : undefined,
        onHeaders: (headers) => {
          result.headers = headers;
          p.onHeaders?.(headers);
        },
        // Synchronous unless output must wait or a type must be loaded first.
        onMessage: (message) => {
          const pending = types.prepareResponse(message);
          return pending ? pending.then(() => emit(message)) : emit(message);
        },
      });
      result.trailers = trailers;
    } finally {
      unwatch?.();
    }
    if (out) {
      file = undefined;
      await out.close();
      if (out.broken) throw outputError(out.broken);
    }
    result.ok = true;
    return result;
  } catch (err) {
    failed = file?.broken ? outputError(file.broken) : err;
    if (file) await file.close().catch(() => {});
    const failure = describeFailure(failed, phase);
    if (failure.code !== undefined) log.info(`RPC failed with code ${(failed as ConnectError).code}`);
    if (p.decodeDetails) await decodeFailureDetails(failure, res);
    result.failure = failure;
    return result;
  } finally {
    bounds.dispose();
    await p.connections.end(failed);
  }
}

/**
 * The call's schema sources, in the one order (resolution-order.ts): reflection unless --schema
 * without --reflect, then each --schema, then (without --schema) the front end's workspace sources.
 * `open` makes the resolver over them (the connections keep it for the settings it is made from).
 */
function schemaSources(
  o: CurlOptions,
  io: InputIo,
  p: PipelineOptions,
  target: CallTarget,
  transport: CurlTransport | undefined,
  signal: AbortSignal,
): { settings: ResolverSettings; reflects: boolean; open: (sourceLog: VerboseLog) => Promise<Resolver> } {
  const steps = schemaResolutionOrder(o, { workspace: (p.fallbackSources?.length ?? 0) > 0 });
  const fallback = steps.some((s) => s.kind === "workspace") ? (p.fallbackSources ?? []) : [];
  const settings: ResolverSettings = { ...target.schema, fallbackSources: fallback.length };
  const reflects = target.schema.reflection !== undefined && transport !== undefined;
  const open = async (sourceLog: VerboseLog): Promise<Resolver> => {
    const sources: SchemaSource[] = [];
    for (const step of steps) {
      if (step.kind === "reflection") {
        if (!reflects || !target.schema.reflection || !transport) continue;
        sources.push(
          await reflectionSource(target.schema.reflection, transport, {
            log: (line) => sourceLog.line(line),
            timeoutMs: p.reflectionTimeoutMs,
            signal: p.connections.exclusive ? signal : undefined,
          }),
        );
      } else if (step.kind === "schema") {
        const { openSchema } = await import("../schema/open-schema");
        sources.push(
          await openSchema(step.spec, {
            cwd: io.cwd,
            stdin: io.stdin,
            // A registry module's registry is reached through the call's --proxy as well.
            env: o.proxy ? withProxyOverride(io.env, { proxy: o.proxy }) : io.env,
            signal: p.connections.exclusive ? signal : undefined,
            // A registry module's registry is trusted as the call's server is.
            cacert: o.cacert,
            registryTokens: p.registries?.tokens,
            registryCas: p.registries?.cas,
          }),
        );
      } else for (const s of fallback) sources.push(borrowed(s));
    }
    const { createResolver } = await import("../schema/resolver");
    return createResolver(sources);
  };
  return { settings, reflects, open };
}

/** Where the request messages come from, as errors about them name it. */
function requestsLabel(o: CurlOptions, live: boolean): string {
  if (live) return "live stream";
  if (o.streamFile) return `--stream-file ${o.streamFile}`;
  return o.data ? requestDataLabel(o.data) : "--data";
}

/** The request documents, each once the types an Any in it names are loaded. */
async function* withRequestTypes<D extends { value: unknown }>(
  requests: AsyncIterable<D>,
  types: { loadRequestTypes(value: D["value"]): Promise<unknown> | undefined },
): AsyncGenerator<D> {
  for await (const doc of requests) {
    const loading = types.loadRequestTypes(doc.value);
    if (loading) await loading;
    yield doc;
  }
}

/** The lines of --list-services (sorted service names) or --list-methods (`service/Method`). */
async function listing(res: Resolver, servicesOnly: boolean): Promise<string[]> {
  const services = await schemaStep(() => res.listServices());
  if (servicesOnly) return services;
  const lines: string[] = [];
  for (const name of services) {
    const service = await schemaStep(() => res.findService(name));
    for (const m of service.methods.map((x) => x.name).sort(compareStrings)) lines.push(`${name}/${m}`);
  }
  return lines;
}

/** Runs a schema step; RPC errors of reflection become plain failures (exit 1), as in buf. */
async function schemaStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof ConnectError) {
      const name = err.message.match(/^\[([a-z_]+)\]/)?.[1] ?? String(err.code);
      throw new ProtocallError(
        `server reflection failed: ${oneLine(err.rawMessage || err.message)} (${name})`,
      );
    }
    if (err instanceof ProtocallError && /\n/.test(err.message)) {
      throw new ProtocallError(oneLine(err.message), err.exitCode);
    }
    throw err;
  }
}

function outputError(err: NodeJS.ErrnoException): ProtocallError {
  return new ProtocallError(`cannot write the output: ${err.message}`);
}

/** A source someone else owns: the resolver may ask it, but closing the resolver leaves it open. */
function borrowed(source: SchemaSource): SchemaSource {
  return {
    // Read when asked: a lazy source may say more once it has opened (what it lacks).
    get label() {
      return source.label;
    },
    listServices: () => source.listServices(),
    findType: (name) => source.findType(name),
    findExtension: (extendee, number) => source.findExtension(extendee, number),
    close: async () => {},
  };
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
