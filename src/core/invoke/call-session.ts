// An in-process caller for front ends that run many requests (the editor's "Send"): the call pipeline
// (pipeline.ts), with structured results instead of stdout/stderr text, and warm: transports (their
// HTTP/1.1 pools and HTTP/2 sessions) and resolvers are kept across calls, keyed by the settings
// objects they are made from (settings-key.ts), and the editor's fallback sources (the workspace
// build) follow --schema. That caching is all this file adds; `refresh()` drops everything, for the
// calls that start after it: a call in flight keeps what it started with (its connection, its schema)
// until it ends, and only then is that closed.
// A call may also send a live stream (live-requests.ts): messages the editor queues while it runs.
import { Readable } from "node:stream";
import { createRegistry, type DescMethod, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorMessage } from "../errors";
import { looksLikeModuleRef } from "../schema/module-ref";
import type { RegistryAccess } from "../schema/registry-modules";
import { schemaResolutionOrder } from "../schema/resolution-order";
import type { Resolver } from "../schema/resolver";
import type { SchemaSource } from "../schema/types";
import { SetupTimeout } from "./call-context";
import type { CachedResolver, Connections } from "./connections";
import type { CallErrorDetail } from "./failure";
import { requestFromJson } from "./invoke";
import type { InputIo } from "./io";
import type { LiveRequests } from "./live-requests";
import type { CurlOptions } from "./options";
import { type PipelineResult, runPipeline } from "./pipeline";
import type { HeaderSplitter } from "./repeated-headers";
import { settingsKey } from "./settings-key";
import type { StreamProgress } from "./stream-progress";
import { type CurlTransport, createCurlTransport } from "./transport";
import { createVerboseLog, type VerboseLog } from "./verbose";

export type { CallErrorDetail } from "./failure";

export type HeaderPairs = [string, string][];

/** What a call needs from its surroundings: relative paths, `$NETRC`, `~/.netrc`. */
export interface CallIo {
  /** Relative paths of the options (`@file` data, TLS files, schemas) resolve against this. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  homedir: string;
  /**
   * What `-d @-` and `-H @-` read, and the terminal's password prompt for `--user name`; the editor
   * gives none (empty input, no prompt), `protocall run` gives its own.
   */
  stdin?: Pick<InputIo, "stdin" | "stdinIsTTY" | "promptPassword">;
  /** Where `--auth` bearer tokens come from (InputIo's). */
  tokens?: InputIo["tokens"];
}

/** Receives a call's progress as it happens. Every member is optional. */
export interface CallObserver {
  /** One line of the verbose transcript, as `protocall curl -v` prints it on stderr (no newline). */
  log?(line: string): void;
  /** The method, once the schema has resolved it (not called for listings). */
  method?(info: MethodInfo): void;
  /** The response headers, when they arrive. */
  headers?(headers: HeaderPairs): void;
  /**
   * Each response message as proto JSON with implicit fields at their defaults, what assertions read
   * (core/assertions/outcome.ts); only computed when this member is given.
   */
  value?(value: JsonValue, index: number): void;
  /** Each response message as formatted JSON (as `protocall curl` prints it), as it arrives. */
  message?(json: string, index: number): void;
  /** The bytes of a `--stream-file` sent so far, of the file's size (stream-progress.ts). */
  streamProgress?(progress: StreamProgress): void;
}

/** The resolved method, as the observer learns it. */
export interface MethodInfo {
  /** `package.Service/Method`. */
  name: string;
  kind: DescMethod["methodKind"];
  /** Checks a request message (JSON) against the input type: undefined when valid, else why not. */
  checkRequest(value: unknown): string | undefined;
  /** The resolved method itself (a load run encodes and decodes its requests with it). */
  descriptor: DescMethod;
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
   * editor's workspace build, taken once per call. The session never closes them; a lease's
   * `release()` is called when the call that took it ends (so its owner may close them then).
   */
  fallbackSources?: () => readonly SchemaSource[] | FallbackLease;
  /** Longest wait for one reflection answer, in milliseconds (default 30 s); read for each new schema. */
  reflectionTimeoutMs?: number | (() => number);
  /**
   * The editor's sign-ins (tokens and trusted CAs by remote), asked for each call that names a
   * registry module; its tokens come before PROTOCALL_TOKEN, BUF_TOKEN and the netrc.
   */
  registries?: () => Promise<RegistryAccess>;
}

/** Fallback sources held by one call: `release()` once the call ended. */
export interface FallbackLease {
  readonly sources: readonly SchemaSource[];
  release(): void;
}

export interface CallSession {
  /** Runs one call. Never throws: every failure is in the result. */
  /**
   * Runs one call. Never throws: every failure is in the result. With `live`, a client or bidi stream
   * sends the messages queued there (as they are queued, until it is closed) instead of its -d data.
   */
  call(
    o: CurlOptions,
    io: CallIo,
    observer?: CallObserver,
    signal?: AbortSignal,
    live?: LiveRequests,
  ): Promise<CallResult>;
  /**
   * Forgets every connection and resolved schema: the next call dials and resolves again. Calls in
   * flight go on with theirs, which are closed when the last of them ends.
   */
  refresh(): Promise<void>;
  /** Number of open transports and resolvers (for tests and diagnostics). */
  stats(): { transports: number; resolvers: number };
  /** Closes every connection and schema, those of calls in flight too (which then fail). */
  close(): Promise<void>;
}

interface TransportEntry {
  ready: Promise<CurlTransport>;
  /** Resolvers that reflect through this transport; they go when it goes. */
  resolvers: Map<string, Promise<Resolver>>;
}

/**
 * What calls in flight hold (transports, resolvers): something dropped from the session's caches
 * while a call holds it is closed when the last call holding it ends, not under the call (a closed
 * HTTP/2 session leaves a stream waiting for a response that never comes).
 */
class Holds<T extends object> {
  private readonly holders = new Map<T, number>();
  private readonly retired = new Map<T, () => Promise<void>>();

  hold(x: T): void {
    this.holders.set(x, (this.holders.get(x) ?? 0) + 1);
  }

  release(x: T): void {
    const n = (this.holders.get(x) ?? 1) - 1;
    if (n > 0) {
      this.holders.set(x, n);
      return;
    }
    this.holders.delete(x);
    const close = this.retired.get(x);
    if (close) {
      this.retired.delete(x);
      void close().catch(() => {});
    }
  }

  /** Closes what waits for its last holder now, held or not (the session is closing). */
  closeAll(): Promise<void> {
    const closes = [...this.retired.values()];
    this.retired.clear();
    return Promise.allSettled(closes.map((close) => close())).then(() => undefined);
  }

  /** Closes `x` now when no call holds it (and returns that closing), else once the last lets go. */
  retire(x: T, close: () => Promise<void>): Promise<void> {
    if (!this.holders.has(x)) return close();
    this.retired.set(x, close);
    return Promise.resolve();
  }
}

/** The resolved method as the observer learns it. */
function methodInfo(method: DescMethod): MethodInfo {
  return {
    name: `${method.parent.typeName}/${method.name}`,
    kind: method.methodKind,
    checkRequest: (value) => checkRequest(method, value),
    descriptor: method,
  };
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

  const heldTransports = new Holds<TransportEntry>();
  const heldResolvers = new Holds<Promise<Resolver>>();

  const dropTransport = (key: string) => {
    const entry = transports.get(key);
    if (!entry) return;
    transports.delete(key);
    // Its resolvers reflect through it: a call that holds one holds the transport too.
    void heldTransports.retire(entry, async () => {
      for (const r of entry.resolvers.values()) void closeResolver(r);
      await entry.ready.then((t) => t.close()).catch(() => {});
    });
  };

  /** The session's caches, as the pipeline sees them during one call. */
  const connectionsFor = (log: VerboseLog): Connections => {
    const used: string[] = [];
    // What this call holds until it ends.
    const entries = new Set<TransportEntry>();
    const resolvers = new Set<Promise<Resolver>>();
    return {
      exclusive: false,
      transport(settings, _log, splitHeader) {
        current = log;
        currentSplit = splitHeader;
        const key = settingsKey(settings);
        used.push(key);
        let entry = transports.get(key);
        if (!entry) {
          const ready = createCurlTransport({ ...settings, log: sharedLog, splitHeader: sharedSplit });
          entry = { ready, resolvers: new Map() };
          transports.set(key, entry);
          ready.catch(() => {
            if (transports.get(key)?.ready === ready) transports.delete(key);
          });
        }
        if (!entries.has(entry)) {
          entries.add(entry);
          heldTransports.hold(entry);
        }
        return entry.ready;
      },
      resolver(settings, via, _log, open) {
        const map = (via && transports.get(settingsKey(via))?.resolvers) ?? schemaResolvers;
        return cachedResolver(map, settingsKey(settings), () => open(sharedLog), resolvers, heldResolvers);
      },
      async end(failure) {
        if (current === log) current = quiet;
        // A connection that failed, or that could not be set up in time, is not kept.
        const suspect = failure instanceof ConnectError && suspectCodes.has(failure.code);
        if (suspect || failure instanceof SetupTimeout) {
          for (const key of used) dropTransport(key);
        }
        for (const r of resolvers) heldResolvers.release(r);
        for (const e of entries) heldTransports.release(e);
      },
    };
  };

  const session: CallSession = {
    async call(o, io, observer = {}, signal, live) {
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
      const timeout = options.reflectionTimeoutMs;
      const moduleSchema = o.schemas.some((spec) => looksLikeModuleRef(spec));
      const registries = moduleSchema ? await options.registries?.().catch(() => undefined) : undefined;
      const asksWorkspace = schemaResolutionOrder(o, { workspace: true }).some((s) => s.kind === "workspace");
      const fallback = asksWorkspace ? options.fallbackSources?.() : undefined;
      const fallbackSources =
        fallback === undefined ? [] : "release" in fallback ? fallback.sources : fallback;
      const r = await runPipeline(o, pipelineIo(io), {
        log,
        connections: connectionsFor(log),
        product: options.product,
        signal,
        fallbackSources,
        reflectionTimeoutMs: typeof timeout === "function" ? timeout() : timeout,
        registries,
        decodeDetails: true,
        requests: live,
        ...observing(result, observer),
      }).finally(() => {
        if (fallback !== undefined && "release" in fallback) fallback.release();
      });
      live?.end();
      return finishResult(result, r, started);
    },
    async refresh() {
      for (const k of [...transports.keys()]) dropTransport(k);
      const resolvers = [...schemaResolvers.values()];
      schemaResolvers.clear();
      await Promise.allSettled(resolvers.map((r) => heldResolvers.retire(r, () => closeResolver(r))));
    },
    stats() {
      let resolvers = schemaResolvers.size;
      for (const e of transports.values()) resolvers += e.resolvers.size;
      return { transports: transports.size, resolvers };
    },
    async close() {
      // Calls still running end with the connection closed under them.
      await session.refresh();
      await Promise.all([heldTransports.closeAll(), heldResolvers.closeAll()]);
    },
  };
  return session;
}

/** The cached resolver for `key` (made by `create` when there is none), held by `held` of a call. */
function cachedResolver(
  map: Map<string, Promise<Resolver>>,
  key: string,
  create: () => Promise<Resolver>,
  held: Set<Promise<Resolver>>,
  holds: Holds<Promise<Resolver>>,
): CachedResolver {
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
  if (!held.has(ready)) {
    held.add(ready);
    holds.hold(ready);
  }
  return {
    ready,
    fresh,
    renew() {
      if (map.get(key) === ready) map.delete(key);
      void holds.retire(ready, () => closeResolver(ready));
      return cachedResolver(map, key, create, held, holds);
    },
  };
}

function closeResolver(r: Promise<Resolver>): Promise<void> {
  return r.then((res) => res.close()).catch(() => {});
}

/** The pipeline's input side of a session call. Without io.stdin (the editor): `-d @-` and `-H @-` read nothing, and no password prompt. */
function pipelineIo(io: CallIo): InputIo {
  return {
    cwd: io.cwd,
    env: io.env,
    homedir: io.homedir,
    stdin: io.stdin?.stdin ?? Readable.from([]),
    stdinIsTTY: io.stdin?.stdinIsTTY ?? false,
    promptPassword: io.stdin?.promptPassword,
    tokens: io.tokens,
  };
}

/** The pipeline's callbacks of a session call: each fills `result` and tells the observer. */
function observing(result: CallResult, observer: CallObserver) {
  return {
    onMethod: (method: DescMethod) => {
      const info = methodInfo(method);
      result.method = info.name;
      result.methodKind = info.kind;
      observer.method?.(info);
    },
    onHeaders: (headers: Headers) => {
      result.headers = pairs(headers);
      observer.headers?.(result.headers);
    },
    onMessage: (json: string) => {
      result.messages.push(json);
      observer.message?.(json, result.messages.length - 1);
    },
    onMessageValue: observer.value && ((value: JsonValue) => observer.value?.(value, result.messages.length)),
    onStreamProgress: observer.streamProgress,
  };
}

/** A session call's result from what the pipeline said. */
function finishResult(result: CallResult, r: PipelineResult, started: number): CallResult {
  result.warnings = r.warnings;
  result.listing = r.listing;
  if (r.trailers) result.trailers = pairs(r.trailers);
  const failure = r.failure;
  if (failure) {
    result.code = failure.code;
    result.exitCode = failure.exitCode;
    result.error = { message: failure.message, details: failure.details, text: failure.text };
    // A failed call that sent no headers of its own (a unary error, a trailers-only response)
    // carries what the server sent in the error's metadata.
    if (result.headers.length === 0 && failure.metadata) result.headers = pairs(failure.metadata);
  } else {
    result.ok = true;
    result.code = "ok";
    result.exitCode = 0;
  }
  result.durationMs = performance.now() - started;
  return result;
}

/** Why a JSON value is not a valid request of the method, or undefined when it is. */
function checkRequest(method: DescMethod, value: unknown): string | undefined {
  try {
    requestFromJson(
      method.input,
      { value, line: 1, column: 1, index: 0 },
      "message",
      createRegistry(method.parent.file),
    );
    return undefined;
  } catch (err) {
    return errorMessage(err).replace(/^message:1:1: request message #1 is /, "");
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
