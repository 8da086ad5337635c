// The options of one `protocall curl` invocation. The CLI flag parser and the .rpc file converter both
// produce this object, so a request file and a command line can never mean different things.
// Values are kept as the user gave them (`@file` references unread, durations parsed); the invoke
// core reads files and validates. `undefined` means "not given", which matters where an explicit
// value changes behaviour (for example --reflect with --schema).

export type Protocol = "connect" | "grpc" | "grpcweb";
export type ReflectProtocol = "grpc-v1" | "grpc-v1alpha";
export type LogFormat = "text" | "color" | "json";

export interface CurlOptions {
  /** The positional URL: `<base>/<package.Service>/<Method>`, or a base URL with the list flags. */
  url?: string;

  /** `--protocol`; default `connect`. */
  protocol: Protocol;
  /** `-d/--data`: inline JSON, `@file`, or `@-` for stdin. Undefined or "" = no data. */
  data?: string;
  /** `--stream-file FIELD=PATH`: a client stream of the file's chunks in the bytes field FIELD (stream-file.ts). */
  streamFile?: string;
  /** `--stream-chunk`: bytes per message of --stream-file (default 64 KiB). */
  streamChunk?: number;
  /** `-H/--header`, in order: `name: value`, `@file`, `@-`. Never split at commas. */
  headers: string[];
  /** `--emit-defaults`. */
  emitDefaults: boolean;
  /** `-o/--output`: file for response messages; stdout when undefined. */
  output?: string;

  /** `--schema`, in order: directory, proto file, descriptor set / image, `-` for stdin. */
  schemas: string[];
  /** `--reflect`; undefined = default (on unless --schema is given). */
  reflect?: boolean;
  /** `--reflect-header`, in order: `name: value`, `*`, `@file`, `@-`. */
  reflectHeaders: string[];
  /** `--reflect-protocol`, already trimmed and lower-cased; undefined = try v1, then v1alpha. */
  reflectProtocol?: ReflectProtocol;
  /** `--list-services`. */
  listServices: boolean;
  /** `--list-methods`. */
  listMethods: boolean;

  /** `--http2-prior-knowledge`. */
  http2PriorKnowledge: boolean;
  /** `--http3` (not supported by Node; rejected with a clear error). */
  http3: boolean;
  /** `--unix-socket`: dial this socket instead of the URL's host and port. */
  unixSocket?: string;
  /**
   * `--proxy`: the HTTP proxy every connection tunnels through (CONNECT), instead of the one
   * HTTPS_PROXY / HTTP_PROXY / ALL_PROXY name; NO_PROXY still applies (proxy-choice.ts).
   */
  proxy?: string;
  /** `--connect-timeout`, seconds; undefined = no limit. */
  connectTimeout?: number;
  /** `--keepalive-time`, seconds; undefined = default (60). */
  keepaliveTime?: number;
  /** `--no-keepalive`. */
  noKeepalive: boolean;
  /** Global `--timeout`, milliseconds; undefined or 0 = none. */
  timeoutMs?: number;

  /** `--cacert`: PEM file of trusted authorities (replaces the system roots). */
  cacert?: string;
  /** `-E/--cert`: PEM client certificate. */
  cert?: string;
  /** `--key`: PEM private key of the client certificate. */
  key?: string;
  /** `-k/--insecure`; undefined = not given. */
  insecure?: boolean;
  /** `--servername`: TLS SNI and verification name. */
  servername?: string;

  /** `-u/--user`: `user:password`, or `user` to prompt for the password. */
  user?: string;
  /** `-n/--netrc`. */
  netrc: boolean;
  /** `--netrc-file`. */
  netrcFile?: string;
  /**
   * `--auth`: how to get the bearer token from an OAuth2 / OpenID provider
   * (`oauth2 GRANT key=value ...`, src/core/auth-spec.ts).
   */
  auth?: string;
  /** `-A/--user-agent`. */
  userAgent?: string;

  /** `-v/--verbose`. */
  verbose: boolean;
  /** Global `--debug`. */
  debug: boolean;
  /** Global `--log-format`. */
  logFormat: LogFormat;
}

/** The options with every flag at its default. */
export function defaultCurlOptions(): CurlOptions {
  return {
    protocol: "connect",
    headers: [],
    emitDefaults: false,
    schemas: [],
    reflectHeaders: [],
    listServices: false,
    listMethods: false,
    http2PriorKnowledge: false,
    http3: false,
    noKeepalive: false,
    netrc: false,
    verbose: false,
    debug: false,
    logFormat: "text",
  };
}
