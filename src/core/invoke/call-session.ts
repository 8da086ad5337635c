// An in-process caller for front ends that run many requests (the editor's "Send"): the same steps as
// `protocall curl` (validate, headers and credentials, schema, call, format), but with structured
// results instead of stdout/stderr text, and warm: transports (their HTTP/1.1 pools and HTTP/2
// sessions) and resolved schemas are kept across calls, keyed by everything that shapes them (URL,
// protocol, HTTP mode, TLS options, reflection headers, schema sources). `refresh()` drops them all.
import { type FileHandle, open } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import {
  createRegistry,
  type DescExtension,
  type DescMessage,
  type DescMethod,
  fromBinary,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb";
import { errorMessage, ProtocallError } from "../errors";
import type { Resolver } from "../schema/resolver";
import type { SchemaSource } from "../schema/types";
import { applyCredentials } from "./credentials";
import { type HeaderList, hasHeader, readCurlHeaders, sourceLabel } from "./headers";
import { invokeMethod } from "./invoke";
import type { InputIo } from "./io";
import type { CurlOptions } from "./options";
import { collectAnyTypeNames, createMessageFormatter, reachesAny } from "./output";
import { type HeaderSplitter, headerSplitter } from "./repeated-headers";
import { openRequestData } from "./request-data";
import { formatRpcError, rpcExitCode } from "./rpc-error";
import {
  type CurlTransport,
  chooseHttpMode,
  createCurlTransport,
  curlTransportSettings,
  type HttpMode,
} from "./transport";
import { findUnknownFields, reachesExtendable } from "./unknown-fields";
import { isListMode, parseCurlUrl, usesReflection } from "./url";
import { validateCurlOptions } from "./validate";
import { createVerboseLog, type VerboseLog } from "./verbose";

/** Version of the Connect implementation, for the default User-Agent (as run-curl.ts sends it). */
const CONNECT_ES = "connect-es/2.2.0";

export type HeaderPairs = [string, string][];

/** What a call needs from its surroundings: relative paths, `$NETRC`, `~/.netrc`. */
export interface CallIo {
  /** Relative paths of the options (`@file` data, TLS files, schemas) resolve against this. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  homedir: string;
}

/** Receives a call's progress as it happens. Every member is optional. */
export interface CallObserver {
  /** One line of the verbose transcript, as `protocall curl -v` prints it on stderr (no newline). */
  log?(line: string): void;
  /** The method, once the schema has resolved it (not called for listings). */
  method?(info: { name: string; kind: DescMethod["methodKind"] }): void;
  /** The response headers, when they arrive. */
  headers?(headers: HeaderPairs): void;
  /** Each response message as formatted JSON (as `protocall curl` prints it), as it arrives. */
  message?(json: string, index: number): void;
}

/** An error detail: its type, its bytes (standard base64), and, when the type is known, its JSON. */
export interface CallErrorDetail {
  type: string;
  value: string;
  json?: string;
}

export interface CallResult {
  ok: boolean;
  /** The RPC status code name (`ok`, `not_found`, …); undefined for failures before or outside the RPC. */
  code?: string;
  /** What `protocall curl` would exit with: 0, the gRPC code × 8, or 1 for other failures. */
  exitCode: number;
  durationMs: number;
  /** `package.Service/Method`, once resolved. */
  method?: string;
  methodKind?: DescMethod["methodKind"];
  headers: HeaderPairs;
  /** Response messages, formatted JSON. */
  messages: string[];
  trailers: HeaderPairs;
  /** For `--list-services` / `--list-methods`: the lines `protocall curl` prints. */
  listing?: string[];
  error?: {
    message: string;
    details: CallErrorDetail[];
    /** What `protocall curl` prints on stderr for it (the error JSON, or `protocall: <message>`). */
    text: string;
  };
  /** Verbose warnings about the options (as `protocall curl -v` prints them). */
  warnings: string[];
}

export interface CallSessionOptions {
  /** Product token for the default User-Agent, e.g. `protocall/1.0.0`. */
  product?: string;
  /**
   * Sources asked after server reflection when the options name no schema (`--schema`), e.g. the
   * editor's workspace build. The session never closes them.
   */
  fallbackSources?: () => readonly SchemaSource[];
  /** Longest wait for one reflection answer, in milliseconds (default 30 s); read for each new schema. */
  reflectionTimeoutMs?: number | (() => number);
}

export interface CallSession {
  /** Runs one call. Never throws: every failure is in the result. */
  call(o: CurlOptions, io: CallIo, observer?: CallObserver, signal?: AbortSignal): Promise<CallResult>;
  /** Forgets every connection and resolved schema: the next call dials and resolves again. */
  refresh(): Promise<void>;
  /** Number of open transports and resolvers (for tests and diagnostics). */
  stats(): { transports: number; resolvers: number };
  close(): Promise<void>;
}

interface TransportEntry {
  ready: Promise<CurlTransport>;
  /** Resolvers that reflect through this transport; they go when it goes. */
  resolvers: Map<string, Promise<Resolver>>;
}

/** Codes after which a transport may hold a dead or poisoned connection: it is replaced. */
const suspectCodes = new Set([
  Code.Unavailable,
  Code.Internal,
  Code.Unknown,
  Code.Canceled,
  Code.DeadlineExceeded,
]);

export function createCallSession(options: CallSessionOptions = {}): CallSession {
  const transports = new Map<string, TransportEntry>();
  const schemaResolvers = new Map<string, Promise<Resolver>>();
  const userAgent = `${CONNECT_ES} ${options.product ?? "protocall"}`;

  // Transports and reflection sources outlive a call but log into the call that runs now: the
  // shared log forwards to it (calls that overlap on one connection may see each other's lines).
  const quiet = createVerboseLog(false, () => {});
  let current: VerboseLog = quiet;
  const sharedLog: VerboseLog = {
    get enabled() {
      return current.enabled;
    },
    info: (text) => current.info(text),
    line: (text) => current.line(text),
    nextRequest: () => current.nextRequest(),
  };
  // Likewise the repeated request headers to send as separate fields (see repeated-headers.ts).
  let currentSplit: HeaderSplitter = () => undefined;
  const sharedSplit: HeaderSplitter = (name, value) => currentSplit(name, value);

  const dropTransport = (key: string) => {
    const entry = transports.get(key);
    if (!entry) return;
    transports.delete(key);
    for (const r of entry.resolvers.values()) r.then((res) => res.close()).catch(() => {});
    entry.ready.then((t) => t.close()).catch(() => {});
  };

  const getTransport = (key: string, create: () => Promise<CurlTransport>): TransportEntry => {
    let entry = transports.get(key);
    if (!entry) {
      const ready = create();
      entry = { ready, resolvers: new Map() };
      transports.set(key, entry);
      ready.catch(() => {
        if (transports.get(key)?.ready === ready) transports.delete(key);
      });
    }
    return entry;
  };

  interface CachedResolver {
    ready: Promise<Resolver>;
    /** Whether this call created it (rather than an earlier call). */
    fresh: boolean;
    /** Forgets it and makes a new one. */
    renew(): CachedResolver;
  }
  const cached = (
    map: Map<string, Promise<Resolver>>,
    key: string,
    create: () => Promise<Resolver>,
  ): CachedResolver => {
    let r = map.get(key);
    const fresh = !r;
    if (!r) {
      r = create();
      map.set(key, r);
      const made = r;
      made.catch(() => {
        if (map.get(key) === made) map.delete(key);
      });
    }
    const ready = r;
    return {
      ready,
      fresh,
      renew() {
        if (map.get(key) === ready) map.delete(key);
        ready.then((old) => old.close()).catch(() => {});
        return cached(map, key, create);
      },
    };
  };

  const session: CallSession = {
    async call(o, io, observer = {}, signal) {
      const started = performance.now();
      const result: CallResult = {
        ok: false,
        exitCode: 1,
        durationMs: 0,
        headers: [],
        messages: [],
        trailers: [],
        warnings: [],
      };
      const log = createVerboseLog(o.verbose || observer.log !== undefined, (text) =>
        observer.log?.(text.endsWith("\n") ? text.slice(0, -1) : text),
      );
      current = log;
      let phase: "setup" | "call" = "setup";
      // Setup steps (dialing, reflection) end at once when the call is canceled.
      const until = <T>(step: Promise<T>): Promise<T> => abortable(step, signal);
      let transportKey: string | undefined;
      let res: Resolver | undefined;
      let outputFile: FileHandle | undefined;
      try {
        const { warnings } = validateCurlOptions(o);
        for (const w of warnings) {
          result.warnings.push(w);
          log.info(w);
        }
        const u = parseCurlUrl(o);
        const reflection = usesReflection(o);
        const inputIo: InputIo = {
          cwd: io.cwd,
          env: io.env,
          homedir: io.homedir,
          stdin: emptyStdin(),
          stdinIsTTY: false,
        };
        const h = await readCurlHeaders(o, inputIo);
        const headers = h.headers;
        await applyCredentials(headers, o, inputIo);
        if (!hasHeader(headers, "user-agent")) headers.push(["User-Agent", userAgent]);

        currentSplit = headerSplitter(headers, h.reflectHeaders);
        const { mode } = u.url ? chooseHttpMode(o, u.secure, reflection) : { mode: "h1" as HttpMode };
        const transportFor = (m: HttpMode): TransportEntry => {
          const settings = curlTransportSettings(o, {
            baseUrl: u.baseUrl,
            mode: m,
            authority: h.authority,
            cwd: io.cwd,
          });
          const key = JSON.stringify(settings);
          transportKey = key;
          return getTransport(key, () =>
            createCurlTransport({ ...settings, log: sharedLog, splitHeader: sharedSplit }),
          );
        };
        let entry = u.url ? transportFor(mode) : undefined;
        const curl = entry ? await until(entry.ready) : undefined;

        // Schema sources, in order: reflection, then each --schema, then (without --schema) the
        // fallback sources. Cached per transport and per set of schema values.
        let resolver: CachedResolver;
        const schemasKey = JSON.stringify([o.schemas, io.cwd]);
        const fallback = o.schemas.length === 0 ? (options.fallbackSources?.() ?? []) : [];
        if (reflection && entry && curl) {
          const reflectHeaders: HeaderList = [...h.reflectHeaders];
          await applyCredentials(reflectHeaders, o, inputIo);
          if (!hasHeader(reflectHeaders, "user-agent")) reflectHeaders.push(["User-Agent", userAgent]);
          const key = JSON.stringify([
            reflectHeaders,
            o.reflectProtocol ?? "auto",
            schemasKey,
            fallback.length,
          ]);
          resolver = cached(entry.resolvers, key, async () => {
            const { createReflectionSource } = await import("../schema/reflection-client");
            const sources: SchemaSource[] = [
              createReflectionSource({
                transport: curl.transport,
                headers: reflectHeaders,
                version: o.reflectProtocol ?? "auto",
                label: `reflection at ${u.baseUrl}`,
                log: (line) => sharedLog.line(line),
                timeoutMs:
                  typeof options.reflectionTimeoutMs === "function"
                    ? options.reflectionTimeoutMs()
                    : options.reflectionTimeoutMs,
              }),
              ...(await openSchemas(o.schemas, io)),
              ...fallback.map(borrowed),
            ];
            const { createResolver } = await import("../schema/resolver");
            return createResolver(sources);
          });
        } else {
          const key = JSON.stringify([schemasKey, fallback.length]);
          resolver = cached(schemaResolvers, key, async () => {
            const sources = [...(await openSchemas(o.schemas, io)), ...fallback.map(borrowed)];
            const { createResolver } = await import("../schema/resolver");
            return createResolver(sources);
          });
        }
        res = await until(resolver.ready);
        let schema = res;

        if (isListMode(o)) {
          const services = await until(schemaStep(() => schema.listServices()));
          const lines: string[] = [];
          if (o.listServices) lines.push(...services);
          else {
            for (const name of services) {
              const service = await until(schemaStep(() => schema.findService(name)));
              for (const m of service.methods.map((x) => x.name).sort()) lines.push(`${name}/${m}`);
            }
          }
          result.listing = lines;
          result.ok = true;
          result.exitCode = 0;
          result.code = "ok";
          return result;
        }

        let method: DescMethod;
        try {
          method = await until(schemaStep(() => schema.findMethod(u.service ?? "", u.method ?? "")));
        } catch (err) {
          // Schemas resolved by an earlier call may be out of date (the server or the .proto files
          // changed since): look once more with fresh ones before reporting the method as unknown.
          if (resolver.fresh || !(err instanceof ProtocallError)) throw err;
          log.info("Method not found in the cached schema: resolving the schema again");
          resolver = resolver.renew();
          res = await until(resolver.ready);
          schema = res;
          method = await until(schemaStep(() => schema.findMethod(u.service ?? "", u.method ?? "")));
        }
        result.method = `${method.parent.typeName}/${method.name}`;
        result.methodKind = method.methodKind;
        observer.method?.({ name: result.method, kind: method.methodKind });
        let callTransport = curl;
        if (method.methodKind === "bidi_streaming" && u.url && !u.secure && mode === "h1") {
          // HTTP/1.1 cannot carry a bidi stream: h2c, as run-curl switches with useH2cForBidi. A
          // transport of its own keeps the HTTP/1.1 one as it is for the other calls.
          log.info("Using HTTP/2 prior knowledge over plain-text (h2c): a bidi stream needs HTTP/2");
          entry = transportFor("h2");
          callTransport = await until(entry.ready);
        }
        log.info(`Invoking RPC ${method.parent.typeName}.${method.name}`);
        const requests = await openRequestData(o, inputIo, h.dataFromHeaderFile);
        const output = method.output;
        const types = await typesFor(schema, method);

        // google.protobuf.Any and extensions in responses resolve through the same sources.
        const mayHoldAny = reachesAny(output);
        const scanExtensions = reachesExtendable(output);
        const extensions = new Map<string, DescExtension | null>();
        const formatter = createMessageFormatter({
          emitDefaults: o.emitDefaults,
          resolveAny: (name) => types.any.getMessage(name),
          resolveExtension: (d: DescMessage, no: number) =>
            extensions.get(`${d.typeName}:${no}`) ?? undefined,
        });
        const prepare = async (message: Message) => {
          if (mayHoldAny)
            await types.loadAny(collectAnyTypeNames(output, message, (n) => types.any.getMessage(n)));
          if (scanExtensions) {
            for (const { extendee, field } of findUnknownFields(output, message)) {
              const key = `${extendee.typeName}:${field.no}`;
              if (!extensions.has(key))
                extensions.set(key, (await schema.findExtension(extendee.typeName, field.no)) ?? null);
            }
          }
        };
        const requestDocs =
          requests && reachesAny(method.input)
            ? (async function* () {
                for await (const doc of requests) {
                  await types.loadRequestAny(collectJsonTypeNames(doc.value));
                  yield doc;
                }
              })()
            : requests;

        // -o/--output: the messages also go to the file, as `protocall curl` writes them (opened
        // before the call, so a path that cannot be written fails before anything is sent).
        if (o.output) outputFile = await openOutput(o.output, io.cwd);

        phase = "call";
        const emit = (message: Message) => {
          const json = formatter(output, message);
          result.messages.push(json);
          observer.message?.(json, result.messages.length - 1);
        };
        const { trailers } = await invokeMethod({
          transport: (callTransport as CurlTransport).transport,
          method,
          requests: requestDocs,
          requestLabel: o.data?.startsWith("@") ? sourceLabel(o.data.slice(1)) : "--data",
          headers,
          timeoutMs: o.timeoutMs ? o.timeoutMs : undefined,
          signal,
          registry: () => types.request,
          onHeaders: (received) => {
            result.headers = pairs(received);
            observer.headers?.(result.headers);
          },
          // Synchronous unless an Any or an extension needs a look-up first.
          onMessage: (message) => {
            if (!mayHoldAny && !scanExtensions) return emit(message);
            return prepare(message).then(() => emit(message));
          },
        });
        result.trailers = pairs(trailers);
        result.ok = true;
        result.code = "ok";
        result.exitCode = 0;
        return result;
      } catch (err) {
        await describeFailure(err, phase, result, log, res);
        if (transportKey && err instanceof ConnectError && suspectCodes.has(err.code))
          dropTransport(transportKey);
        return result;
      } finally {
        if (outputFile) {
          const file = outputFile;
          try {
            await file.writeFile(result.messages.map((m) => `${m}\n`).join(""));
          } catch (err) {
            result.warnings.push(`--output ${o.output}: ${errorMessage(err)}`);
          } finally {
            await file.close().catch(() => {});
          }
        }
        result.durationMs = performance.now() - started;
        if (current === log) current = quiet;
      }
    },
    async refresh() {
      const keys = [...transports.keys()];
      for (const k of keys) dropTransport(k);
      const resolvers = [...schemaResolvers.values()];
      schemaResolvers.clear();
      await Promise.allSettled(resolvers.map((r) => r.then((res) => res.close())));
    },
    stats() {
      let resolvers = schemaResolvers.size;
      for (const e of transports.values()) resolvers += e.resolvers.size;
      return { transports: transports.size, resolvers };
    },
    async close() {
      await session.refresh();
    },
  };

  const typesCache = new WeakMap<DescMethod, MethodTypes>();
  const typesFor = async (res: Resolver, method: DescMethod): Promise<MethodTypes> => {
    let t = typesCache.get(method);
    if (!t) {
      t = await createMethodTypes(res, method);
      typesCache.set(method, t);
    }
    return t;
  };

  async function describeFailure(
    err: unknown,
    phase: "setup" | "call",
    result: CallResult,
    log: VerboseLog,
    res: Resolver | undefined,
  ): Promise<void> {
    if (err instanceof ConnectError && (phase === "call" || err.code === Code.Canceled)) {
      log.info(`RPC failed with code ${err.code}`);
      result.code = codeToString(err.code);
      result.exitCode = rpcExitCode(err);
      const status = /^HTTP (\d{3})$/.exec(err.rawMessage);
      const message = status ? `HTTP status ${status[1]}` : err.rawMessage;
      result.error = {
        message,
        details: await decodeDetails(err, res),
        text: formatRpcError(err),
      };
      // A failed call that sent no headers of its own (a unary error, a trailers-only response)
      // carries what the server sent in the error's metadata.
      if (result.headers.length === 0) result.headers = pairs(err.metadata);
      return;
    }
    let message: string;
    let exitCode = 1;
    if (err instanceof ProtocallError) {
      message = err.message;
      exitCode = err.exitCode;
    } else if (err instanceof ConnectError) {
      message = err.rawMessage || err.message;
    } else {
      message = `unexpected error: ${errorMessage(err)}`;
    }
    result.exitCode = exitCode;
    result.error = { message, details: [], text: `protocall: ${message}\n` };
  }

  return session;
}

async function openOutput(path: string, cwd: string): Promise<FileHandle> {
  const full = resolvePath(cwd, path);
  try {
    return await open(full, "w");
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new ProtocallError(
      `--output ${path}: cannot write ${full}: ${e.code ?? e.message}; check the path`,
    );
  }
}

/** Sources opened for `--schema` values. */
async function openSchemas(specs: string[], io: CallIo): Promise<SchemaSource[]> {
  if (specs.length === 0) return [];
  const { openSchema } = await import("../schema/open-schema");
  const out: SchemaSource[] = [];
  for (const spec of specs)
    out.push(await openSchema(spec, { cwd: io.cwd, stdin: emptyStdin(), env: io.env }));
  return out;
}

/** A source someone else owns: the resolver may ask it, but closing the resolver leaves it open. */
function borrowed(source: SchemaSource): SchemaSource {
  return {
    label: source.label,
    listServices: () => source.listServices(),
    findType: (name) => source.findType(name),
    findExtension: (extendee, number) => source.findExtension(extendee, number),
    close: async () => {},
  };
}

/** Registries for Any types in requests and responses of one method, grown as types are met. */
interface MethodTypes {
  any: Registry;
  request: Registry;
  loadAny(names: Set<string>): Promise<void>;
  loadRequestAny(names: string[]): Promise<void>;
}

async function createMethodTypes(res: Resolver, method: DescMethod): Promise<MethodTypes> {
  const anyNames = new Set<string>();
  const requestNames = new Set<string>();
  const base = await res.registry([]);
  const t: MethodTypes = {
    any: base,
    request: createRegistry(base, method.parent.file),
    async loadAny(names) {
      if ([...names].every((n) => anyNames.has(n))) return;
      for (const n of names) anyNames.add(n);
      t.any = await res.registry([...anyNames]);
    },
    async loadRequestAny(names) {
      if (names.every((n) => requestNames.has(n))) return;
      for (const n of names) requestNames.add(n);
      t.request = createRegistry(await res.registry([...requestNames]), method.parent.file);
    },
  };
  return t;
}

/** Decodes error details with the schema's types, then google.rpc's own. */
async function decodeDetails(err: ConnectError, res: Resolver | undefined): Promise<CallErrorDetail[]> {
  const raw = err.details.map((d) =>
    "desc" in d ? { type: d.desc.typeName, value: new Uint8Array() } : { type: d.type, value: d.value },
  );
  if (raw.length === 0) return [];
  let registry: Registry = createRegistry(file_google_rpc_error_details);
  if (res) {
    try {
      registry = createRegistry(await res.registry(raw.map((d) => d.type)), file_google_rpc_error_details);
    } catch {
      // the google.rpc types still decode
    }
  }
  const formatter = createMessageFormatter({ resolveAny: (n) => registry.getMessage(n) });
  return raw.map(({ type, value }) => {
    const detail: CallErrorDetail = { type, value: Buffer.from(value).toString("base64").replace(/=+$/, "") };
    const desc = registry.getMessage(type);
    if (desc) {
      try {
        detail.json = formatter(desc, fromBinary(desc, value));
      } catch {
        // shown by its bytes alone
      }
    }
    return detail;
  });
}

/** The step's result, or a `canceled` ConnectError as soon as the signal aborts. */
function abortable<T>(step: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return step;
  const canceled = () => new ConnectError("the call was canceled before it was sent", Code.Canceled);
  if (signal.aborted) return Promise.reject(canceled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(canceled());
    signal.addEventListener("abort", onAbort, { once: true });
    step.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** Runs a schema step; RPC errors of reflection become plain failures (exit 1), as in run-curl. */
async function schemaStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof ConnectError) {
      const name = err.message.match(/^\[([a-z_]+)\]/)?.[1] ?? String(err.code);
      throw new ProtocallError(`server reflection failed: ${err.rawMessage || err.message} (${name})`);
    }
    throw err;
  }
}

function pairs(headers: Headers): HeaderPairs {
  const out: HeaderPairs = [];
  headers.forEach((value, name) => {
    if (name === "set-cookie") for (const v of headers.getSetCookie()) out.push([name, v]);
    else out.push([name, value]);
  });
  return out;
}

/** The type names of the "@type" keys of a JSON value (google.protobuf.Any in request JSON). */
function collectJsonTypeNames(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const v of value) collectJsonTypeNames(v, out);
  } else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === "@type" && typeof v === "string") out.push(v.slice(v.lastIndexOf("/") + 1));
      else collectJsonTypeNames(v, out);
    }
  }
  return out;
}

/** The editor has no standard input: `-d @-` and `-H @-` read nothing. */
function emptyStdin(): NodeJS.ReadableStream {
  const { Readable } = require("node:stream") as typeof import("node:stream");
  return Readable.from([]);
}
