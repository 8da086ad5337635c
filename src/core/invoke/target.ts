// The first step of every call: from the options to the target they describe. It validates the
// options, parses the URL, reads the headers, adds credentials (`-u`, netrc) and the User-Agent to
// the RPC and the reflection headers, and derives the plain settings that everything opened for the
// call is made from: the connection (protocol, HTTP mode, TLS, keepalive, timeouts, Unix socket)
// and the schema (reflection at the base URL with its headers, then the --schema values). Opening
// goes through the same settings objects in `protocall curl`, the editor's Send and the language
// server, so none of them can drop a setting, and caches key on the objects themselves
// (settings-key.ts).

import { checkHeaderValues } from "../header-line";
import type { ReflectionSource } from "../schema/reflection-client";
import { applyCredentials } from "./credentials";
import { type HeaderList, hasHeader, readCurlHeaders } from "./headers";
import type { InputIo } from "./io";
import type { CurlOptions } from "./options";
import { chooseProxy } from "./proxy-choice";
import { type HeaderSplitter, headerSplitter } from "./repeated-headers";
import { CONNECT_ES } from "./request-headers";
import {
  type CurlTransport,
  chooseHttpMode,
  createCurlTransport,
  curlTransportSettings,
  type HttpMode,
  type TransportSettings,
} from "./transport";
import { type CurlUrl, parseCurlUrl, usesReflection } from "./url";
import { validateCurlOptions } from "./validate";
import { createVerboseLog } from "./verbose";

/** The User-Agent sent when the options set none: `connect-es/2.1.2 protocall/1.2.3`. */
export function defaultUserAgent(product = "protocall"): string {
  return `${CONNECT_ES} ${product}`;
}

/** Everything a connection is made from (the transport's settings without its log). */
export type ConnectionSettings = Omit<TransportSettings, "log" | "splitHeader">;

/** Server reflection of a target: where, with which headers, which protocol version. */
export interface ReflectionSettings {
  /** The base URL reflection is asked at. */
  baseUrl: string;
  /** The reflection headers, credentials and User-Agent included. */
  headers: HeaderList;
  version: "auto" | "grpc-v1" | "grpc-v1alpha";
}

/** Everything a call's resolver is made from: reflection (over the call's connection), then --schema values. */
export interface SchemaSettings {
  reflection?: ReflectionSettings;
  /** The --schema values, in order, relative to `cwd`. */
  schemas: string[];
  cwd: string;
}

export interface CallTarget {
  options: CurlOptions;
  url: CurlUrl;
  /** Notes about the options, as `protocall curl -v` prints them. */
  warnings: string[];
  /** The RPC headers, credentials and User-Agent included (Host is in `connection.authority`). */
  headers: HeaderList;
  /** The connection, in the HTTP mode the options choose; undefined without a URL. */
  connection?: ConnectionSettings;
  schema: SchemaSettings;
  /** Repeated header names that are sent as separate fields (see repeated-headers.ts). */
  splitHeader: HeaderSplitter;
  /** The request data when -H and -d name the same file (see readCurlHeaders). */
  dataFromHeaderFile?: AsyncIterable<Uint8Array> & { firstLine?: number };
}

/**
 * Describes the target of a call. Throws ProtocallError for options that cannot work, unreadable
 * header files and credentials that cannot be had (`-u name` without a terminal to ask on).
 */
export async function describeTarget(o: CurlOptions, io: InputIo, product?: string): Promise<CallTarget> {
  const { warnings } = validateCurlOptions(o);
  const url = parseCurlUrl(o);
  const reflection = usesReflection(o);
  const h = await readCurlHeaders(o, io);
  const userAgent = defaultUserAgent(product);
  const headers = h.headers;
  const netrcNote = await applyCredentials(headers, o, io);
  if (netrcNote) warnings.unshift(...netrcNote.split("\n"));
  if (!hasHeader(headers, "user-agent")) headers.push(["User-Agent", userAgent]);
  checkHeaderValues(headers);
  checkHeaderValues(h.reflectHeaders);
  const target: CallTarget = {
    options: o,
    url,
    warnings,
    headers,
    schema: { schemas: o.schemas, cwd: io.cwd },
    splitHeader: headerSplitter(headers, h.reflectHeaders),
    dataFromHeaderFile: h.dataFromHeaderFile,
  };
  if (url.url) {
    const { mode } = chooseHttpMode(o, url.secure, reflection);
    target.connection = curlTransportSettings(o, {
      baseUrl: url.baseUrl,
      mode,
      authority: h.authority,
      cwd: io.cwd,
      proxy: o.unixSocket ? undefined : chooseProxy(new URL(url.baseUrl), o.proxy, io.env),
    });
    if (reflection) {
      const reflectHeaders: HeaderList = [...h.reflectHeaders];
      await applyCredentials(reflectHeaders, o, io);
      if (!hasHeader(reflectHeaders, "user-agent")) reflectHeaders.push(["User-Agent", userAgent]);
      target.schema.reflection = {
        baseUrl: url.baseUrl,
        headers: reflectHeaders,
        version: o.reflectProtocol ?? "auto",
      };
    }
  }
  return target;
}

/** The same connection in another HTTP mode (a bidi stream over plain http needs HTTP/2). */
export function inMode(c: ConnectionSettings, mode: HttpMode): ConnectionSettings {
  return { ...c, mode };
}

export interface ReflectionOptions {
  /** Reflection steps for the verbose transcript. */
  log?: (line: string) => void;
  /** Longest wait for one reflection answer, in milliseconds. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The reflection source of a target, over a transport of its connection. */
export async function reflectionSource(
  r: ReflectionSettings,
  transport: CurlTransport,
  o: ReflectionOptions = {},
): Promise<ReflectionSource> {
  const { createReflectionSource } = await import("../schema/reflection-client");
  return createReflectionSource({
    transport: transport.transport,
    headers: r.headers,
    version: r.version,
    label: `reflection at ${r.baseUrl}`,
    log: o.log,
    timeoutMs: o.timeoutMs,
    signal: o.signal,
  });
}

/**
 * A reflection source with a connection of its own, closed with the source: how the language server
 * and the Services view read a server's schema (with the same settings a call would use).
 */
export async function openReflection(
  connection: ConnectionSettings,
  r: ReflectionSettings,
  o: ReflectionOptions = {},
): Promise<ReflectionSource> {
  const transport = await createCurlTransport({
    ...connection,
    log: createVerboseLog(false, () => {}),
    splitHeader: headerSplitter(r.headers),
  });
  const source = await reflectionSource(r, transport, o);
  const close = source.close.bind(source);
  source.close = async () => {
    await close().catch(() => {});
    transport.close();
  };
  return source;
}
