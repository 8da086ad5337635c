// `protocall curl` end to end: validate, read headers and credentials, resolve the schema (server
// reflection first when it is on, then each --schema, then the well-known types), then list services
// or methods, or call the method and print each response as it arrives. RPC failures print the
// Connect error JSON and return the gRPC code × 8; every other failure prints one line and returns 1.
import { createWriteStream } from "node:fs";
import { STATUS_CODES } from "node:http";
import { resolve } from "node:path";
import type { Writable } from "node:stream";
import {
  createRegistry,
  type DescExtension,
  type DescMessage,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { errorMessage, ProtocallError } from "../errors";
import type { Resolver } from "../schema/resolver";
import type { SchemaSource } from "../schema/types";
import { applyCredentials } from "./credentials";
import { type HeaderList, hasHeader, readCurlHeaders, sourceLabel } from "./headers";
import { invokeMethod } from "./invoke";
import type { InputIo } from "./io";
import type { CurlOptions } from "./options";
import { collectAnyTypeNames, createMessageFormatter, reachesAny } from "./output";
import { headerSplitter } from "./repeated-headers";
import { openRequestData } from "./request-data";
import { formatRpcError, rpcExitCode } from "./rpc-error";
import { type CurlTransport, chooseHttpMode, createCurlTransport, curlTransportSettings } from "./transport";
import { findUnknownFields, reachesExtendable, unknownFieldSize } from "./unknown-fields";
import { isListMode, parseCurlUrl, usesReflection } from "./url";
import { validateCurlOptions } from "./validate";
import { createVerboseLog, type VerboseLog } from "./verbose";

export interface CurlIo extends InputIo {
  stdout: Writable;
  stderr: Writable;
  /** Product token for the default User-Agent, e.g. `protocall/1.0.0`. */
  product?: string;
  /** Ends the call early (Ctrl-C); the call then fails as canceled. */
  signal?: AbortSignal;
}

/** Version of the Connect implementation, for the default User-Agent. */
const CONNECT_ES = "connect-es/2.2.0";

/** Runs one `protocall curl`; returns the exit code. Never throws. */
export async function runCurl(o: CurlOptions, io: CurlIo): Promise<number> {
  const log = createVerboseLog(o.verbose, (text) => io.stderr.write(text));
  let phase: "setup" | "call" = "setup";
  let registry: (typeName: string) => DescMessage | undefined = () => undefined;
  let resolver: Resolver | undefined;
  let transport: CurlTransport | undefined;
  let out: OutputSink | undefined;
  try {
    const { warnings } = validateCurlOptions(o);
    for (const w of warnings) log.info(w);
    const u = parseCurlUrl(o);
    const reflection = usesReflection(o);

    const h = await readCurlHeaders(o, io);
    const headers = h.headers;
    await applyCredentials(headers, o, io);
    const userAgent = `${CONNECT_ES} ${io.product ?? "protocall"}`;
    if (!hasHeader(headers, "user-agent")) headers.push(["User-Agent", userAgent]);

    if (u.url) {
      const { mode } = chooseHttpMode(o, u.secure, reflection);
      transport = await createCurlTransport({
        ...curlTransportSettings(o, { baseUrl: u.baseUrl, mode, authority: h.authority, cwd: io.cwd }),
        log,
        splitHeader: headerSplitter(headers, h.reflectHeaders),
      });
    }

    // Schema sources, in order: reflection, then each --schema.
    const sources: SchemaSource[] = [];
    if (reflection && transport) {
      const reflectHeaders: HeaderList = [...h.reflectHeaders];
      await applyCredentials(reflectHeaders, o, io);
      if (!hasHeader(reflectHeaders, "user-agent")) reflectHeaders.push(["User-Agent", userAgent]);
      const { createReflectionSource } = await import("../schema/reflection-client");
      sources.push(
        createReflectionSource({
          transport: transport.transport,
          headers: reflectHeaders,
          version: o.reflectProtocol ?? "auto",
          label: `reflection at ${u.baseUrl}`,
          log: (line) => log.line(line),
          signal: io.signal,
        }),
      );
    }
    if (o.schemas.length > 0) {
      const { openSchema } = await import("../schema/open-schema");
      for (const spec of o.schemas)
        sources.push(await openSchema(spec, { cwd: io.cwd, stdin: io.stdin, env: io.env }));
    }
    const { createResolver } = await import("../schema/resolver");
    resolver = createResolver(sources);
    const res = resolver;

    if (isListMode(o)) {
      const services = await schemaStep(() => res.listServices());
      let text: string;
      if (o.listServices) {
        text = services.map((s) => `${s}\n`).join("");
      } else {
        const lines: string[] = [];
        for (const name of services) {
          const service = await schemaStep(() => res.findService(name));
          const methods = service.methods.map((m) => m.name).sort(compareStrings);
          for (const m of methods) lines.push(`${name}/${m}\n`);
        }
        text = lines.join("");
      }
      await writeAll(io.stdout, text);
      return 0;
    }

    const method = await schemaStep(() => res.findMethod(u.service ?? "", u.method ?? ""));
    if (method.methodKind === "bidi_streaming" && transport?.useH2cForBidi()) {
      log.info("Using HTTP/2 prior knowledge over plain-text (h2c): a bidi stream needs HTTP/2");
    }
    log.info(`Invoking RPC ${method.parent.typeName}.${method.name}`);
    const requests = await openRequestData(o, io, h.dataFromHeaderFile);
    out = o.output ? await openOutputFile(o.output, io.cwd) : new OutputSink(io.stdout, false);
    const sink = out;
    // Output that can no longer be written (a closed pipe, a full disk) ends the call.
    const stop = new AbortController();
    sink.onBroken = (err) => stop.abort(err);
    const signal = io.signal ? AbortSignal.any([io.signal, stop.signal]) : stop.signal;

    // google.protobuf.Any inside requests and responses resolves through the same sources.
    let anyNames = new Set<string>();
    let anyRegistry: Registry = await res.registry([]);
    registry = (name) => anyRegistry.getMessage(name);
    const ensureAnyTypes = async (desc: DescMessage, message: Message) => {
      const names = collectAnyTypeNames(desc, message, registry);
      let missing = false;
      for (const n of names) if (!anyNames.has(n)) missing = true;
      if (!missing) return;
      anyNames = new Set([...anyNames, ...names]);
      anyRegistry = await res.registry([...anyNames]);
      // Types packed inside newly found types.
      const more = collectAnyTypeNames(desc, message, registry);
      if ([...more].some((n) => !anyNames.has(n))) {
        anyNames = new Set([...anyNames, ...more]);
        anyRegistry = await res.registry([...anyNames]);
      }
    };
    // Any in request JSON: load the types named by "@type" before each document is converted.
    let requestRegistry: Registry = createRegistry(await res.registry([]), method.parent.file);
    const requestAnyNames = new Set<string>();
    const requestDocs =
      requests && reachesAny(method.input)
        ? (async function* () {
            for await (const doc of requests) {
              const names = collectJsonTypeNames(doc.value);
              if (names.some((n) => !requestAnyNames.has(n))) {
                for (const n of names) requestAnyNames.add(n);
                requestRegistry = createRegistry(
                  await res.registry([...requestAnyNames]),
                  method.parent.file,
                );
              }
              yield doc;
            }
          })()
        : requests;

    phase = "call";
    const curl = transport as CurlTransport;
    const output = method.output;
    const emitDefaults = o.emitDefaults;
    const mayHoldAny = reachesAny(output);
    // Extensions print as "[pkg.ext]" once a source defines them; other undeclared fields are
    // dropped, and verbose mode reports their size. Only scanned when that can matter.
    const extensions = new Map<string, DescExtension | null>();
    const scanUnknown = o.verbose || reachesExtendable(output);
    const resolveExtension = (d: DescMessage, no: number) =>
      extensions.get(`${d.typeName}:${no}`) ?? undefined;
    // Synchronous (undefined) when the message has no undeclared field or all are known already.
    const prepareUnknown = (message: Message): Promise<void> | undefined => {
      const found = findUnknownFields(output, message);
      if (found.length === 0) return undefined;
      const report = () => {
        let dropped = 0;
        for (const { extendee, field } of found) {
          if (!extensions.get(`${extendee.typeName}:${field.no}`)) dropped += unknownFieldSize(field);
        }
        if (dropped > 0) {
          log.line(
            `Response message (${output.typeName}) contained ${dropped} bytes of unrecognized fields.`,
          );
        }
      };
      const missing = found.filter(
        ({ extendee, field }) => !extensions.has(`${extendee.typeName}:${field.no}`),
      );
      if (missing.length === 0) return void report();
      return (async () => {
        for (const { extendee, field } of missing) {
          const key = `${extendee.typeName}:${field.no}`;
          if (extensions.has(key)) continue;
          extensions.set(key, (await res.findExtension(extendee.typeName, field.no)) ?? null);
        }
        report();
      })();
    };
    const formatter = createMessageFormatter({
      emitDefaults,
      resolveAny: (name) => registry(name),
      resolveExtension,
    });
    const format = (message: Message) => formatter(output, message);
    await invokeMethod({
      transport: curl.transport,
      method,
      requests: requestDocs,
      requestLabel: o.data?.startsWith("@") ? sourceLabel(o.data.slice(1)) : "--data",
      headers,
      timeoutMs: o.timeoutMs ? o.timeoutMs : undefined,
      signal,
      registry: () => requestRegistry,
      // The fast path decodes synchronously; an Any inside needs its type loaded first.
      tapResponses: mayHoldAny ? undefined : (suffix, tap) => curl.tapResponses(suffix, tap),
      tapRequests: (suffix, body) => curl.tapRequests(suffix, body),
      // Synchronous unless output must wait (backpressure) or an Any needs its type loaded: a long
      // stream should not pay for a promise per message.
      onMessage: (message) => {
        const write = () => {
          if (mayHoldAny) {
            return ensureAnyTypes(output, message).then(() => sink.write(`${format(message)}\n`));
          }
          return sink.write(`${format(message)}\n`);
        };
        const pending = scanUnknown ? prepareUnknown(message) : undefined;
        return pending ? pending.then(write) : write();
      },
    });
    await sink.close();
    if (sink.broken) throw sink.broken;
    out = undefined;
    return 0;
  } catch (err) {
    const broken = out?.broken;
    if (out) await out.close().catch(() => {});
    if (broken) {
      // As a command killed by SIGPIPE (`protocall curl ... | head`): quietly, 128 + 13.
      if (broken.code === "EPIPE") return 141;
      await writeAll(io.stderr, `protocall: cannot write the output: ${broken.message}\n`);
      return 1;
    }
    return await report(err, phase, io, log);
  } finally {
    transport?.close();
    await resolver?.close().catch(() => {});
  }
}

/** Runs a schema step; RPC errors of reflection become plain failures (exit 1), as in buf. */
async function schemaStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof ConnectError) {
      throw new ProtocallError(
        `server reflection failed: ${oneLine(err.rawMessage || err.message)} (${codeName(err)})`,
      );
    }
    if (err instanceof ProtocallError && /\n/.test(err.message)) {
      throw new ProtocallError(oneLine(err.message), err.exitCode);
    }
    throw err;
  }
}

/**
 * One line, whatever a lower layer said: OpenSSL's multi-line errors become Go's short wording where
 * it is known (`remote error: tls: certificate required`).
 */
function oneLine(text: string): string {
  const alert = text.match(
    /[0-9A-F]+:error:[0-9A-F]+:SSL routines:[^:]*:(?:tlsv1[0-9]? |sslv3 )?alert ([a-z ]+):[^\n]*(?:\n\s*SSL alert number \d+)?/,
  );
  const cleaned = alert ? text.replace(alert[0], `remote error: tls: ${alert[1]}`) : text;
  return cleaned.replace(/\s*\n\s*/g, " ").trim();
}

function codeName(err: ConnectError): string {
  return err.message.match(/^\[([a-z_]+)\]/)?.[1] ?? String(err.code);
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

async function report(err: unknown, phase: "setup" | "call", io: CurlIo, log: VerboseLog): Promise<number> {
  if (err instanceof ConnectError && phase === "call") {
    log.info(`RPC failed with code ${err.code}`);
    let shown = err;
    const status = /^HTTP (\d{3})$/.exec(err.rawMessage);
    if (status || /SSL routines/.test(err.rawMessage)) {
      // Worded as buf words them: `HTTP status 505 HTTP Version Not Supported`, Go's TLS alerts.
      const text = status
        ? `HTTP status ${status[1]} ${STATUS_CODES[Number(status[1])] ?? ""}`.trimEnd()
        : oneLine(err.rawMessage);
      shown = new ConnectError(text, err.code, err.metadata, undefined, err.cause);
      shown.details = err.details;
    }
    await writeAll(io.stderr, formatRpcError(shown));
    return rpcExitCode(err);
  }
  if (io.env.PROTOCALL_DEBUG && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
  if (err instanceof ProtocallError) {
    await writeAll(io.stderr, `protocall: ${err.message}\n`);
    return err.exitCode;
  }
  if (err instanceof ConnectError) {
    await writeAll(io.stderr, `protocall: ${err.rawMessage || err.message}\n`);
    return 1;
  }
  await writeAll(io.stderr, `protocall: unexpected error: ${errorMessage(err)}\n`);
  return 1;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function writeAll(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (text === "") return resolve();
    stream.write(text, () => resolve());
  });
}

async function openOutputFile(path: string, cwd: string): Promise<OutputSink> {
  const full = resolve(cwd, path);
  const stream = createWriteStream(full);
  await new Promise<void>((ok, fail) => {
    stream.once("open", () => ok());
    stream.once("error", (err: NodeJS.ErrnoException) =>
      fail(
        new ProtocallError(
          `--output ${path}: cannot write ${full}: ${err.code ?? err.message}; check the path`,
        ),
      ),
    );
  });
  return new OutputSink(stream, true);
}

/**
 * Batches response text into few large writes and respects backpressure: a full stream makes the
 * caller wait, so a fast server stream never piles up in memory. Output that waits is flushed on the
 * next turn of the event loop, so interactive streams print at once.
 */
class OutputSink {
  private parts: string[] = [];
  private size = 0;
  private scheduled = false;

  /** The write error, once the output is broken. */
  broken: NodeJS.ErrnoException | undefined;
  onBroken: ((err: Error) => void) | undefined;

  constructor(
    private readonly stream: Writable,
    private readonly owned: boolean,
  ) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (this.broken) return;
      this.broken = err;
      this.parts = [];
      this.size = 0;
      this.onBroken?.(err);
    });
  }

  /** Queues text; returns a promise only when the caller must wait for the stream to drain. */
  write(text: string): Promise<void> | undefined {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= 65536) {
      if (!this.flushNow()) return waitDrain(this.stream);
    } else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flushNow();
      });
    }
    return undefined;
  }

  private flushNow(): boolean {
    if (this.broken) {
      this.parts = [];
      this.size = 0;
      return true;
    }
    if (this.size === 0) return true;
    const text = this.parts.length === 1 ? this.parts[0] : this.parts.join("");
    this.parts = [];
    this.size = 0;
    return this.stream.write(text);
  }

  async close(): Promise<void> {
    this.flushNow();
    if (this.broken) return;
    if (this.owned) {
      await new Promise<void>((resolve, reject) => {
        this.stream.once("error", reject);
        this.stream.end(() => resolve());
      });
    } else {
      await new Promise<void>((resolve) => {
        this.stream.write("", () => resolve());
        this.stream.once("error", () => resolve());
      });
    }
  }
}

function waitDrain(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      stream.off("error", done);
      resolve();
    };
    stream.once("drain", done);
    stream.once("close", done);
    stream.once("error", done);
  });
}
