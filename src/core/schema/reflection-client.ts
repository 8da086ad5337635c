// Server reflection as a schema source: downloads file descriptors from a server over the
// grpc.reflection.v1 (or v1alpha) ServerReflectionInfo RPC and links them into descriptors.
//
// One bidirectional stream is opened on first use and reused for every look-up (list_services,
// file_containing_symbol, file_by_filename for each missing dependency, file_containing_extension).
// Look-ups are serialized: the server answers requests in order, one response per request. Every wait
// for a response is bounded, and the caller's AbortSignal ends the stream. In auto mode, a server
// without v1 (`unimplemented`, or an HTTP 404) is asked over v1alpha from then on; a stream that broke
// after having worked is reopened once. Received files go through the lenient, incremental linker
// (link.ts): servers send sloppy descriptors, and look-ups share the files already built.
import type {
  DescEnum,
  DescExtension,
  DescFile,
  DescMessage,
  DescService,
  FileRegistry,
  MessageInitShape,
} from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import type { FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import type {
  ServerReflectionRequestSchema,
  ServerReflectionResponse,
} from "../../gen/grpc/reflection/v1/reflection_pb";
import { ServerReflection as ServerReflectionV1 } from "../../gen/grpc/reflection/v1/reflection_pb";
import { ServerReflection as ServerReflectionV1alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb";
import { errorMessage, ProtocallError } from "../errors";
import { decodeFileDescriptorProto } from "./descriptor-decode";
import { createLinker, UnresolvedReferenceError } from "./link";
import type { FileSource } from "./types";
import { wellKnownFiles } from "./well-known-files";

export type ReflectionVersion = "auto" | "grpc-v1" | "grpc-v1alpha";

export interface ReflectionSourceOptions {
  /** A Connect, gRPC or gRPC-Web transport; its baseUrl holds any path prefix. Needs HTTP/2. */
  transport: Transport;
  /** Headers sent on the reflection stream. */
  headers?: HeadersInit;
  /** `auto` (default) tries grpc-v1, then grpc-v1alpha when the server does not implement v1. */
  version?: ReflectionVersion;
  /** Names this source in messages, e.g. `reflection at http://localhost:8080`. */
  label?: string;
  /** Receives human-readable reflection steps (verbose output), e.g. `* Using server reflection …`. */
  log?: (line: string) => void;
  /** Ends the stream and fails pending look-ups. */
  signal?: AbortSignal;
  /** Longest wait for one response, in milliseconds (default 30 s). */
  timeoutMs?: number;
  /** Closes the stream after this long without a look-up (default 60 s); the next one reopens it. */
  idleTimeoutMs?: number;
}

export interface ReflectionSource extends FileSource {
  /** The reflection service in use once the stream is open, e.g. `grpc.reflection.v1.ServerReflection`. */
  readonly serviceName: string | undefined;
}

type RequestInit = MessageInitShape<typeof ServerReflectionRequestSchema>;
type Lookup = NonNullable<RequestInit["messageRequest"]>;
type HeadersInit = ConstructorParameters<typeof Headers>[0];

const SERVICE_NAMES = {
  v1: ServerReflectionV1.typeName,
  v1alpha: ServerReflectionV1alpha.typeName,
} as const;

/** A request queue that the bidi stream reads from: push to send, end to half-close. */
class RequestQueue implements AsyncIterable<RequestInit> {
  private items: RequestInit[] = [];
  private waiter: ((r: IteratorResult<RequestInit>) => void) | undefined;
  private ended = false;

  push(item: RequestInit) {
    if (this.ended) return;
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  end() {
    this.ended = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<RequestInit> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item) return Promise.resolve({ value: item, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiter = resolve;
        });
      },
      return: () => {
        this.end();
        return Promise.resolve({ value: undefined, done: true });
      },
      throw: () => {
        this.end();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

/** One open ServerReflectionInfo stream. */
class ReflectionStream {
  readonly serviceName: string;
  private readonly requests = new RequestQueue();
  private readonly responses: AsyncIterator<ServerReflectionResponse>;
  private readonly abort = new AbortController();
  private readonly onOuterAbort = () => this.abort.abort();
  answered = 0;
  dead = false;

  constructor(
    readonly version: "v1" | "v1alpha",
    transport: Transport,
    headers: HeadersInit | undefined,
    private readonly outer: AbortSignal | undefined,
  ) {
    this.serviceName = SERVICE_NAMES[version];
    outer?.addEventListener("abort", this.onOuterAbort, { once: true });
    if (outer?.aborted) this.abort.abort();
    // The two versions have the same messages (only the package differs), so the v1 types serve both.
    const client = createClient(version === "v1" ? ServerReflectionV1 : ServerReflectionV1alpha, transport);
    const stream = client.serverReflectionInfo(this.requests, { headers, signal: this.abort.signal });
    this.responses = (stream as AsyncIterable<ServerReflectionResponse>)[Symbol.asyncIterator]();
  }

  /** Sends one request and waits (at most `timeoutMs`) for its response. */
  async call(request: Lookup, timeoutMs: number, describe: () => string): Promise<ServerReflectionResponse> {
    if (this.dead) throw new ConnectError("the reflection stream is closed", Code.Canceled);
    this.requests.push({ host: "", messageRequest: request });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(
          new ConnectError(`no answer to ${describe()} within ${timeoutMs / 1000} s`, Code.DeadlineExceeded),
        );
      }, timeoutMs);
    });
    try {
      const result = await Promise.race([this.responses.next(), timeout]);
      if (result.done) {
        throw new ConnectError(
          `the server ended the stream without answering ${describe()}`,
          Code.Unavailable,
        );
      }
      this.answered++;
      return result.value;
    } catch (err) {
      this.close();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  close() {
    if (this.dead) return;
    this.dead = true;
    this.outer?.removeEventListener("abort", this.onOuterAbort);
    this.requests.end();
    this.abort.abort();
    // Drain so a late stream error never becomes an unhandled rejection.
    this.responses.return?.().catch(() => {});
  }
}

function describeLookup(request: Lookup): string {
  switch (request.case) {
    case "listServices":
      return "list_services";
    case "fileByFilename":
      return `file_by_filename ${request.value}`;
    case "fileContainingSymbol":
      return `file_containing_symbol ${request.value}`;
    case "fileContainingExtension":
      return `file_containing_extension ${request.value.containingType} ${request.value.extensionNumber}`;
    case "allExtensionNumbersOfType":
      return `all_extension_numbers_of_type ${request.value}`;
    default:
      return "request";
  }
}

/**
 * The reflection stream a source shares between its look-ups: opened on first use, one request at a
 * time, with the v1 → v1alpha fallback of auto mode, reopened once when it broke while idle, and
 * closed after a while without requests.
 */
function reflectionChannel(
  options: ReflectionSourceOptions,
  label: string,
  log: (line: string) => void,
): {
  send(request: Lookup): Promise<ServerReflectionResponse>;
  serviceName(): string | undefined;
  close(): void;
} {
  const mode = options.version ?? "auto";
  const timeoutMs = options.timeoutMs ?? 30_000;
  let version: "v1" | "v1alpha" = mode === "grpc-v1alpha" ? "v1alpha" : "v1";
  let stream: ReflectionStream | undefined;
  let closed = false;
  let chain: Promise<unknown> = Promise.resolve();
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  let idleTimer: NodeJS.Timeout | undefined;
  let pending = 0;

  const wrap = (err: unknown, what: string): Error => {
    if (err instanceof ProtocallError) return err;
    const ce = ConnectError.from(err);
    return new ConnectError(
      `${label}: ${what} failed: ${ce.rawMessage}`,
      ce.code,
      ce.metadata,
      undefined,
      err,
    );
  };

  const open = (): ReflectionStream => {
    if (closed) throw new ProtocallError(`${label}: the reflection source is closed`);
    if (!stream || stream.dead) {
      stream = new ReflectionStream(version, options.transport, options.headers, options.signal);
      log(`* Using server reflection ${stream.serviceName}`);
    }
    return stream;
  };

  /** Sends one request on the shared stream, with the v1 → v1alpha fallback of auto mode. */
  const send = (request: Lookup): Promise<ServerReflectionResponse> => {
    const run = async (): Promise<ServerReflectionResponse> => {
      const describe = () => describeLookup(request);
      let reopened = false;
      for (;;) {
        const current = open();
        log(`* Reflection request: ${describe()}`);
        try {
          return await current.call(request, timeoutMs, describe);
        } catch (err) {
          const ce = ConnectError.from(err);
          const usable = !options.signal?.aborted && !closed;
          if (
            mode === "auto" &&
            current.version === "v1" &&
            current.answered === 0 &&
            ce.code === Code.Unimplemented &&
            usable
          ) {
            version = "v1alpha";
            log(
              `* Server does not implement ${current.serviceName}; falling back to ${SERVICE_NAMES.v1alpha}`,
            );
            continue;
          }
          // A stream that worked before may break while idle (a server restart, a connection age
          // limit): look-ups can be repeated, so open a new stream once.
          const broken = ce.code !== Code.Canceled && ce.code !== Code.DeadlineExceeded;
          if (!reopened && current.answered > 0 && broken && usable) {
            reopened = true;
            log(`* The reflection stream ended (${ce.rawMessage}); opening a new one`);
            continue;
          }
          throw wrap(err, describe());
        }
      }
    };
    clearTimeout(idleTimer);
    pending++;
    const result = chain.then(run).finally(() => {
      // Long-lived users (an editor) should not hold a stream open on the server forever.
      pending--;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        if (pending === 0) stream?.close();
      }, idleTimeoutMs);
      idleTimer.unref();
    });
    chain = result.catch(() => {});
    return result;
  };

  return {
    send,
    serviceName: () => stream?.serviceName,
    close() {
      closed = true;
      clearTimeout(idleTimer);
      stream?.close();
    },
  };
}

/** Throws the ConnectError an error_response stands for. */
function checkError(label: string, response: ServerReflectionResponse, what: string): void {
  if (response.messageResponse.case === "errorResponse") {
    const { errorCode, errorMessage: message } = response.messageResponse.value;
    const code = errorCode in Code && errorCode !== 0 ? (errorCode as Code) : Code.Unknown;
    throw new ConnectError(`${label}: ${what}: ${message || "error without a message"}`, code);
  }
}

/** Decodes one file of a file_descriptor_response; it must have a name. */
function decodeFile(label: string, bytes: Uint8Array, what: string): FileDescriptorProto {
  let file: FileDescriptorProto;
  try {
    file = decodeFileDescriptorProto(bytes);
  } catch (err) {
    throw new ProtocallError(
      `${label}: the server answered ${what} with a file descriptor that cannot be decoded (${errorMessage(err)})`,
    );
  }
  if (!file.name) {
    throw new ProtocallError(`${label}: the server answered ${what} with a file descriptor that has no name`);
  }
  return file;
}

/** Creates a schema source backed by server reflection. Nothing is sent until the first look-up. */
/**
 * What a reflection source has received and linked: the files (each decoded once), the types and
 * extensions of the linked ones (so later look-ups need no round trip), and the names the server did
 * not know. Look-ups that answer with files go through `fetchFiles`, which also asks for the files
 * they import and, for a name they use that no file received defines, the file of each name it may
 * stand for.
 */
class ReflectedFiles {
  readonly files = new Map<string, FileDescriptorProto>();
  readonly knownTypes = new Map<string, DescService | DescMessage | DescEnum | DescExtension>();
  readonly knownExtensions = new Map<string, DescExtension>();
  private readonly rememberedFiles = new Set<string>();
  /** Received files not handed to the linker yet. */
  private readonly unlinked: FileDescriptorProto[] = [];
  /** Received files whose imports have not been checked yet. */
  private readonly depsToCheck: FileDescriptorProto[] = [];
  private readonly linker: ReturnType<typeof createLinker>;
  readonly missingSymbols = new Set<string>();
  /** Names asked for to complete a reference (each at most once). */
  private readonly askedFor = new Set<string>();
  readonly missingExtensions = new Set<string>();

  constructor(
    private readonly label: string,
    private readonly log: (line: string) => void,
    private readonly send: (request: Lookup) => Promise<ServerReflectionResponse>,
  ) {
    this.linker = createLinker({ label, owned: true });
  }

  /** Decodes the files of a file_descriptor_response and stores the new ones. */
  addFiles(response: ServerReflectionResponse, what: string): FileDescriptorProto[] {
    const label = this.label;
    if (response.messageResponse.case !== "fileDescriptorResponse") {
      throw new ProtocallError(
        `${label}: the server answered ${what} with ${response.messageResponse.case ?? "an empty response"} instead of file descriptors`,
      );
    }
    const out: FileDescriptorProto[] = [];
    for (const bytes of response.messageResponse.value.fileDescriptorProto) {
      const file = decodeFile(label, bytes, what);
      if (!this.files.has(file.name)) {
        this.files.set(file.name, file);
        this.log(`* Server reflection has resolved file "${file.name}"`);
        this.unlinked.push(file);
        this.depsToCheck.push(file);
      }
      out.push(file);
    }
    return out;
  }

  /** Asks for every dependency that has not arrived yet (well-known files come from the runtime). */
  async fetchMissingDependencies(): Promise<void> {
    const label = this.label;
    for (let file = this.depsToCheck.shift(); file !== undefined; file = this.depsToCheck.shift()) {
      for (const dep of file.dependency) {
        if (this.files.has(dep) || wellKnownFiles().has(dep)) continue;
        const what = `file_by_filename ${dep}`;
        const response = await this.send({ case: "fileByFilename", value: dep });
        if (
          response.messageResponse.case === "errorResponse" &&
          response.messageResponse.value.errorCode === Code.NotFound
        ) {
          throw new ProtocallError(
            `${label}: the server did not send file "${dep}", imported by "${file.name}" (${response.messageResponse.value.errorMessage || "not found"})`,
          );
        }
        checkError(label, response, what);
        this.addFiles(response, what);
        if (!this.files.has(dep)) {
          throw new ProtocallError(
            `${label}: the server answered ${what} without the file "${dep}", imported by "${file.name}"`,
          );
        }
      }
    }
  }

  /** Remembers every type of the files of a linked registry, so later look-ups need no round trip. */
  private remember(registry: FileRegistry): void {
    for (const file of registry.files) {
      if (this.rememberedFiles.has(file.proto.name)) continue;
      this.rememberedFiles.add(file.proto.name);
      for (const desc of nestedTypes(file)) {
        if (desc.kind === "extension") {
          const key = `${desc.extendee.typeName}#${desc.number}`;
          if (!this.knownExtensions.has(key)) this.knownExtensions.set(key, desc);
        } else if (!this.knownTypes.has(desc.typeName)) {
          this.knownTypes.set(desc.typeName, desc);
        }
      }
    }
  }

  /** Asks for the file of each candidate name until one arrives; returns the names of new files. */
  private async fetchCandidates(candidates: string[]): Promise<string[]> {
    for (const candidate of candidates) {
      if (this.missingSymbols.has(candidate) || this.askedFor.has(candidate)) continue;
      this.askedFor.add(candidate);
      const before = new Set(this.files.keys());
      const response = await this.send({ case: "fileContainingSymbol", value: candidate });
      if (
        response.messageResponse.case === "errorResponse" &&
        response.messageResponse.value.errorCode === Code.NotFound
      ) {
        this.missingSymbols.add(candidate);
        continue;
      }
      const what = `file_containing_symbol ${candidate}`;
      checkError(this.label, response, what);
      this.addFiles(response, what);
      await this.fetchMissingDependencies();
      const added = [...this.files.keys()].filter((n) => !before.has(n));
      if (added.length > 0) return added;
    }
    return [];
  }

  /**
   * Links the files a look-up needs: the files of its response and what they import (only these, so a
   * broken file elsewhere on the server does not get in the way; files built for earlier look-ups are
   * reused). A name those files use but no file received defines (servers that leave imports out) is
   * looked up with file_containing_symbol, trying each name it may stand for.
   */
  private async linkFor(roots: string[]): Promise<FileRegistry> {
    for (let attempt = 0; ; attempt++) {
      try {
        const registry = this.linker.link(this.unlinked.splice(0), roots);
        this.remember(registry);
        return registry;
      } catch (err) {
        if (!(err instanceof UnresolvedReferenceError)) throw err;
        const added = attempt < 16 ? await this.fetchCandidates(err.candidates) : [];
        if (added.length === 0) throw err;
      }
    }
  }

  /** Runs one look-up that answers with files; undefined when the server says NOT_FOUND. */
  async fetchFiles(request: Lookup): Promise<FileRegistry | undefined> {
    const what = describeLookup(request);
    const response = await this.send(request);
    if (
      response.messageResponse.case === "errorResponse" &&
      response.messageResponse.value.errorCode === Code.NotFound
    ) {
      return undefined;
    }
    checkError(this.label, response, what);
    const received = this.addFiles(response, what);
    await this.fetchMissingDependencies();
    return this.linkFor(received.map((f) => f.name));
  }
}

export function createReflectionSource(options: ReflectionSourceOptions): ReflectionSource {
  const label = options.label ?? "server reflection";
  const log = options.log ?? (() => {});
  const channel = reflectionChannel(options, label, log);
  const send = channel.send;
  const reflected = new ReflectedFiles(label, log, send);
  const { knownTypes, knownExtensions, missingSymbols, missingExtensions } = reflected;
  let services: string[] | undefined;

  /**
   * Runs look-ups one after another: each may take several requests (dependencies, names to
   * complete), and they share what has been received.
   */
  let busy: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(operation: () => Promise<T>): Promise<T> => {
    const result = busy.then(operation);
    busy = result.catch(() => {});
    return result;
  };

  const findType = async (name: string) => {
    const known = knownTypes.get(name);
    if (known) return known;
    return exclusive(async () => {
      const again = knownTypes.get(name);
      if (again) return again;
      if (missingSymbols.has(name)) return undefined;
      const registry = await reflected.fetchFiles({ case: "fileContainingSymbol", value: name });
      const desc = registry?.get(name);
      if (!desc) missingSymbols.add(name);
      return desc;
    });
  };

  return {
    label,
    get serviceName() {
      return channel.serviceName();
    },
    listServices: () =>
      exclusive(async () => {
        if (services) return services;
        const response = await send({ case: "listServices", value: "*" });
        checkError(label, response, "list_services");
        if (response.messageResponse.case !== "listServicesResponse") {
          throw new ProtocallError(
            `${label}: the server answered list_services with ${response.messageResponse.case ?? "an empty response"}`,
          );
        }
        services = [...new Set(response.messageResponse.value.service.map((s) => s.name))].sort();
        return services;
      }),
    findType,
    findExtension: (extendee: string, number: number) =>
      exclusive(async () => {
        const key = `${extendee}#${number}`;
        const known = knownExtensions.get(key);
        if (known) return known;
        if (missingExtensions.has(key)) return undefined;
        const registry = await reflected.fetchFiles({
          case: "fileContainingExtension",
          value: { containingType: extendee, extensionNumber: number },
        });
        const target = registry?.getMessage(extendee);
        const extension = target ? registry?.getExtensionFor(target, number) : undefined;
        if (!extension) missingExtensions.add(key);
        return extension;
      }),
    async findFile(name: string): Promise<DescFile | undefined> {
      return (await findType(name))?.file;
    },
    async close() {
      channel.close();
    },
  };
}
