// The flags of `protocall curl` and how each value is read, shared by the command-line parser and by
// the .rpc request file (whose request options are these flags' long names without the dashes), so
// both produce the same CurlOptions from the same text.

import { parseAuthSpec } from "../auth-spec";
import { ProtocallError } from "../errors";
import { parseDuration } from "./duration";
import type { CurlOptions, LogFormat, Protocol, ReflectProtocol } from "./options";
import { parseChunkSize, parseStreamFile } from "./stream-file";

export type FlagKind = "bool" | "string" | "strings" | "float" | "duration";

/** The CurlOptions field a flag sets (the URL is the positional argument, not a flag). */
export type CurlFlagField = Exclude<keyof CurlOptions, "url">;

/** One flag as the table declares it. */
interface CurlFlagDef {
  name: string;
  short?: string;
  kind: FlagKind;
  /** Shown in --help after the flag name (`string`, `float`, ...). */
  help: string;
  /** Default shown in --help, if any. */
  defaultText?: string;
  /** Inherited (global) flag: listed under "Global Flags". */
  global?: boolean;
  /** A flag of protocall's own, which `buf curl` does not have (every other flag is buf's). */
  protocallOnly?: boolean;
  /**
   * The option it sets: a bool, string or number field is set to the value, a list field (`strings`)
   * gets it appended. "Copy as" reads the options back to a command line through this field
   * (copy-as.ts), so every flag but --help has one.
   */
  field?: CurlFlagField;
  /** Sets the field when that needs a check or a conversion (allowed values, trimming). */
  apply?(o: CurlOptions, value: string | boolean | number): void;
}

export interface CurlFlag extends CurlFlagDef {
  apply(o: CurlOptions, value: string | boolean | number): void;
}

const protocols: readonly Protocol[] = ["connect", "grpc", "grpcweb"];
const reflectProtocols: readonly ReflectProtocol[] = ["grpc-v1", "grpc-v1alpha"];
const logFormats: readonly LogFormat[] = ["text", "color", "json"];

const flagDefs: readonly CurlFlagDef[] = [
  {
    name: "cacert",
    kind: "string",
    help: "Path to a PEM file of trusted certificate authorities, used instead of the system's roots to verify the server. Only for https URLs; not with --insecure",
    field: "cacert",
  },
  {
    name: "cert",
    short: "E",
    kind: "string",
    help: "Path to a PEM client certificate for mutual TLS. Only for https URLs; needs --key",
    field: "cert",
  },
  {
    name: "connect-timeout",
    kind: "float",
    help: "Time limit, in seconds, to establish a connection. No limit if absent",
    field: "connectTimeout",
  },
  {
    name: "data",
    short: "d",
    kind: "string",
    help: "Request data: zero or more JSON documents, one per request message (exactly one for unary and server-streaming methods). '@<path>' reads the file at <path>, '@-' reads stdin. If -H names the same file, it holds the headers, a blank line, then the body. Stdin cannot be used when the schema comes from stdin",
    field: "data",
  },
  {
    name: "stream-file",
    kind: "string",
    protocallOnly: true,
    help: "(protocall only) Send a file as a client or bidi stream, read as it is sent: FIELD=PATH makes one request message per chunk of the file (see --stream-chunk), with the chunk in the bytes field FIELD. Not with -d",
    field: "streamFile",
    apply: (o, v) => {
      parseStreamFile(v as string);
      o.streamFile = v as string;
    },
  },
  {
    name: "stream-chunk",
    kind: "string",
    protocallOnly: true,
    help: "(protocall only) Bytes per message of --stream-file: a number, or with KiB or MiB",
    defaultText: '"64KiB"',
    field: "streamChunk",
    apply: (o, v) => {
      o.streamChunk = parseChunkSize(String(v));
    },
  },
  {
    name: "emit-defaults",
    kind: "bool",
    help: "Print fields with default values in JSON responses",
    field: "emitDefaults",
  },
  {
    name: "header",
    short: "H",
    kind: "strings",
    help: "A request header, \"name: value\". Repeatable. '@<path>' reads headers from a file (one per line; blank lines and lines starting with # are skipped), '@-' from stdin. Values are never split at commas",
    field: "headers",
  },
  {
    name: "help",
    short: "h",
    kind: "bool",
    help: "Help for curl",
  },
  {
    name: "http2-prior-knowledge",
    kind: "bool",
    help: "Always use HTTP/2, even over plain-text http (h2c). Implied for http URLs when the protocol is grpc or server reflection is used, since both need HTTP/2 (verbose output says so)",
    field: "http2PriorKnowledge",
  },
  {
    name: "http3",
    kind: "bool",
    help: "Use HTTP/3. Not supported: Node.js has no QUIC in its stable API, so this flag fails with an error instead of silently using another protocol",
    field: "http3",
  },
  {
    name: "insecure",
    short: "k",
    kind: "bool",
    help: "Do not verify the server's certificate. Only for https URLs",
    field: "insecure",
  },
  {
    name: "keepalive-time",
    kind: "float",
    help: "Time, in seconds, between TCP keepalive probes",
    defaultText: "60",
    field: "keepaliveTime",
  },
  {
    name: "key",
    kind: "string",
    help: "Path to the PEM private key of the client certificate. Only for https URLs; needs --cert",
    field: "key",
  },
  {
    name: "list-methods",
    kind: "bool",
    help: "List the methods (service/Method, one per line) and exit. With reflection the URL is the base URL, without service or method; without reflection it may be omitted",
    field: "listMethods",
  },
  {
    name: "list-services",
    kind: "bool",
    help: "List the services (one per line) and exit. Same URL rules as --list-methods",
    field: "listServices",
  },
  {
    name: "netrc",
    short: "n",
    kind: "bool",
    help: "Send credentials from ~/.netrc (or the file in $NETRC) for the URL's host as a basic Authorization header. Fails if the file has no entry for the host (host:port first, then default). Ignored if --user or an Authorization header is given",
    field: "netrc",
  },
  {
    name: "netrc-file",
    kind: "string",
    help: "Like --netrc, with this file. Cannot be combined with --netrc",
    field: "netrcFile",
  },
  {
    name: "no-keepalive",
    kind: "bool",
    help: "Disable TCP keepalive (on by default)",
    field: "noKeepalive",
  },
  {
    name: "output",
    short: "o",
    kind: "string",
    help: "File to write the response messages to, instead of stdout",
    field: "output",
  },
  {
    name: "protocol",
    kind: "string",
    help: 'RPC protocol: "connect", "grpc" or "grpcweb"',
    defaultText: '"connect"',
    field: "protocol",
    apply: (o, v) => {
      const p = v as string;
      if (!(protocols as readonly string[]).includes(p)) {
        throw new ProtocallError(
          `invalid --protocol "${p}": it must be one of "connect", "grpc", or "grpcweb"`,
        );
      }
      o.protocol = p as Protocol;
    },
  },
  {
    name: "reflect",
    kind: "bool",
    help: "Use server reflection to get the schema. On by default; --schema turns it off unless --reflect is given too, in which case reflection is asked first",
    defaultText: "true",
    field: "reflect",
  },
  {
    name: "reflect-header",
    kind: "strings",
    help: "A header for reflection requests only, \"name: value\". Repeatable; needs reflection. '*' sends all --header headers too; '@<path>' and '@-' read headers from a file or stdin (not the data file)",
    field: "reflectHeaders",
  },
  {
    name: "reflect-protocol",
    kind: "string",
    help: 'Reflection protocol: "grpc-v1" or "grpc-v1alpha". By default grpc-v1 is tried, then grpc-v1alpha if the server does not implement it. Needs reflection',
    field: "reflectProtocol",
    apply: (o, v) => {
      const p = (v as string).trim().toLowerCase();
      if (p === "") {
        o.reflectProtocol = undefined;
        return;
      }
      if (!(reflectProtocols as readonly string[]).includes(p)) {
        throw new ProtocallError(
          `invalid --reflect-protocol "${v}": it must be one of "grpc-v1" or "grpc-v1alpha"`,
        );
      }
      o.reflectProtocol = p as ReflectProtocol;
    },
  },
  {
    name: "schema",
    kind: "strings",
    help: "Schema source: a directory of .proto files (a buf module or workspace), a .proto file, a descriptor set or buf image file (.binpb, .pb, .json), or '-' for a descriptor set or image on stdin. Repeatable; consulted in order. Turns off reflection unless --reflect is given",
    field: "schemas",
  },
  {
    name: "auth",
    kind: "string",
    help: 'Get the bearer token from an OAuth2 / OpenID provider: "oauth2 GRANT key=value ...", GRANT one of client_credentials, refresh_token, password, device_code, authorization_code; keys issuer (discovery) or token-url, client-id, client-secret, scope, audience, refresh-token, username, password, cache=FILE. Fetched once, renewed before it expires, used for reflection too; an Authorization header wins',
    field: "auth",
    protocallOnly: true,
    apply: (o, v) => {
      parseAuthSpec(v as string);
      o.auth = v as string;
    },
  },
  {
    name: "proxy",
    kind: "string",
    help: "HTTP proxy for every connection, http://[user:password@]host:port; TLS and HTTP/2 run end to end through a CONNECT tunnel. Replaces HTTPS_PROXY, HTTP_PROXY and ALL_PROXY; NO_PROXY, localhost and loopback addresses still go direct",
    field: "proxy",
    protocallOnly: true,
  },
  {
    name: "servername",
    kind: "string",
    help: "Server name for TLS (SNI and verification). Defaults to the Host header, else the URL's host. Only for https URLs",
    field: "servername",
  },
  {
    name: "unix-socket",
    kind: "string",
    help: "Connect to this Unix socket instead of the URL's host and port (TLS still applies to https URLs)",
    field: "unixSocket",
  },
  {
    name: "user",
    short: "u",
    kind: "string",
    help: 'Credentials "name:password" sent as a basic Authorization header. With no colon, the password is asked for on the terminal. Overrides netrc; ignored if an Authorization header is given',
    field: "user",
  },
  {
    name: "user-agent",
    short: "A",
    kind: "string",
    help: "User agent to send. Ignored if a User-Agent header is given",
    field: "userAgent",
  },
  {
    name: "verbose",
    short: "v",
    kind: "bool",
    help: "Print connection details, request and response headers and body sizes on stderr (Authorization and Cookie values are redacted)",
    field: "verbose",
  },
  {
    name: "debug",
    kind: "bool",
    global: true,
    help: "Turn on debug logging",
    field: "debug",
  },
  {
    name: "log-format",
    kind: "string",
    global: true,
    help: "The log format [text,color,json]",
    defaultText: '"text"',
    field: "logFormat",
    apply: (o, v) => {
      const f = v as string;
      if (!(logFormats as readonly string[]).includes(f)) {
        throw new ProtocallError(`invalid --log-format "${f}": it must be one of text, color, or json`);
      }
      o.logFormat = f as LogFormat;
    },
  },
  {
    name: "timeout",
    kind: "duration",
    global: true,
    help: "Time until the whole command times out, such as 5s, 1m30s or 250ms: reading the schema, reflection and connecting count, and what is left is the RPC deadline; 0 means no timeout",
    field: "timeoutMs",
  },
];

/** Every flag of `protocall curl`, in the order --help lists them. */
export const curlFlags: readonly CurlFlag[] = flagDefs.map((f) => ({
  ...f,
  apply: f.apply ?? ((o, value) => setField(o, f, value)),
}));

function setField(o: CurlOptions, flag: CurlFlagDef, value: string | boolean | number): void {
  if (flag.field === undefined) return; // --help: read by the command line itself
  const options = o as unknown as Record<CurlFlagField, unknown>;
  if (flag.kind === "strings") (options[flag.field] as string[]).push(value as string);
  else options[flag.field] = value;
}

/** The flags by long name. */
export const curlFlagsByName: ReadonlyMap<string, CurlFlag> = new Map(curlFlags.map((f) => [f.name, f]));

/**
 * Converts a flag's raw value to its typed value: `true` (a bool flag given alone), a bool word, a
 * number of seconds or a duration. `shown` names the flag in error messages. Throws ProtocallError.
 */
export function convertFlagValue(
  flag: CurlFlag,
  raw: string | true,
  shown: string,
): string | boolean | number {
  switch (flag.kind) {
    case "bool":
      return parseBool(raw, shown);
    case "float":
      return parseFloatFlag(raw as string, shown);
    case "duration":
      return parseDuration(raw as string, shown);
    default:
      return raw as string;
  }
}

const trueValues = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const falseValues = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Reads a bool flag value as pflag does (1, t, true, 0, f, false, ...). */
export function parseBool(raw: string | true, shown: string): boolean {
  if (raw === true) return true;
  if (trueValues.has(raw)) return true;
  if (falseValues.has(raw)) return false;
  throw new ProtocallError(`invalid value "${raw}" for ${shown}: write ${shown}=true or ${shown}=false`);
}

const floatPattern = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function parseFloatFlag(raw: string, shown: string): number {
  const s = raw.trim();
  if (floatPattern.test(s)) return Number(s);
  if (/^[+-]?inf(inity)?$/i.test(s)) return s.startsWith("-") ? -Infinity : Infinity;
  throw new ProtocallError(
    `invalid value "${raw}" for ${shown}: it must be a number of seconds, such as 5 or 0.5`,
  );
}
