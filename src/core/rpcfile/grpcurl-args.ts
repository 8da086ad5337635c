// A `grpcurl` command line (the words after `grpcurl`) as CurlOptions: the inverse of copyAsGrpcurl
// (copy-as.ts). grpcurl parses flags with Go's flag package: `-flag` or `--flag`, a value as the next
// word or after `=`, booleans only as `-flag` or `-flag=false`; then the address (`host:port`), and the
// method (`pkg.Service/Method` or `pkg.Service.Method`) or `list`. The call becomes gRPC to
// http(s)://address/pkg.Service/Method (http with -plaintext). Flags with no equivalent in a request
// are named in `notes`, or refused when the request would mean something else.
import { ProtocallError } from "../errors";
import { type CurlOptions, defaultCurlOptions } from "../invoke/options";

type Kind = "bool" | "string";

/** grpcurl's flags that a request can express, and what each does to the options. */
const flags: Record<string, { kind: Kind; apply(o: CurlOptions, value: string, s: GrpcurlState): void }> = {
  plaintext: { kind: "bool", apply: (_o, v, s) => void (s.plaintext = v === "true") },
  insecure: { kind: "bool", apply: (o, v) => void (o.insecure = v === "true") },
  "emit-defaults": { kind: "bool", apply: (o, v) => void (o.emitDefaults = v === "true") },
  v: { kind: "bool", apply: (o, v) => void (o.verbose = v === "true") },
  vv: { kind: "bool", apply: (o, v) => void (o.verbose = v === "true") },
  unix: { kind: "bool", apply: (_o, v, s) => void (s.unix = v === "true") },
  "use-reflection": { kind: "bool", apply: (o, v) => void (o.reflect = v === "true") },
  d: { kind: "string", apply: (o, v) => void (o.data = v) },
  H: {
    kind: "string",
    apply: (o, v, s) => {
      o.headers.push(v);
      s.reflectAll = true;
    },
  },
  "rpc-header": { kind: "string", apply: (o, v) => void o.headers.push(v) },
  "reflect-header": { kind: "string", apply: (o, v) => void o.reflectHeaders.push(v) },
  authority: { kind: "string", apply: (o, v) => void o.headers.push(`Host: ${v}`) },
  "user-agent": { kind: "string", apply: (o, v) => void (o.userAgent = v) },
  cacert: { kind: "string", apply: (o, v) => void (o.cacert = v) },
  cert: { kind: "string", apply: (o, v) => void (o.cert = v) },
  key: { kind: "string", apply: (o, v) => void (o.key = v) },
  servername: { kind: "string", apply: (o, v) => void (o.servername = v) },
  "max-time": { kind: "string", apply: (o, v) => void (o.timeoutMs = seconds(v, "-max-time") * 1000) },
  "connect-timeout": {
    kind: "string",
    apply: (o, v) => void (o.connectTimeout = seconds(v, "-connect-timeout")),
  },
  "keepalive-time": {
    kind: "string",
    apply: (o, v) => void (o.keepaliveTime = seconds(v, "-keepalive-time")),
  },
  proto: { kind: "string", apply: (_o, v, s) => void s.protos.push(v) },
  protoset: { kind: "string", apply: (_o, v, s) => void s.protosets.push(v) },
  "import-path": { kind: "string", apply: (_o, v, s) => void s.importPaths.push(v) },
  format: {
    kind: "string",
    apply: (_o, v) => {
      if (v !== "json")
        throw new ProtocallError(`grpcurl -format ${v} has no equivalent: requests read and print JSON`);
    },
  },
};

/** Flags a request does without: kept out, with a note. */
const ignored: Record<string, Kind> = {
  "allow-unknown-fields": "bool",
  "format-error": "bool",
  "expand-headers": "bool",
  "msg-template": "bool",
  "max-msg-sz": "string",
  "protoset-out": "string",
  "proto-out-dir": "string",
  "alts-handshaker-service": "string",
  "alts-target-service-account": "string",
};

interface GrpcurlState {
  plaintext: boolean;
  unix: boolean;
  reflectAll: boolean;
  protos: string[];
  protosets: string[];
  importPaths: string[];
}

function seconds(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0) {
    throw new ProtocallError(`grpcurl ${flag} takes seconds, e.g. ${flag} 2.5; got "${value}"`);
  }
  return n;
}

/**
 * The options of a grpcurl command (its words after `grpcurl`); `input`: the file of a `< file`
 * redirection (grpcurl's `-d @` reads it). Throws ProtocallError for what a request cannot express.
 */
export function grpcurlToCurlOptions(
  args: readonly string[],
  input?: string,
): { options: CurlOptions; notes: string[] } {
  const o = defaultCurlOptions();
  o.protocol = "grpc";
  const s: GrpcurlState = {
    plaintext: false,
    unix: false,
    reflectAll: false,
    protos: [],
    protosets: [],
    importPaths: [],
  };
  const notes: string[] = [];
  const positionals = readFlags(args, o, s, notes);
  const [address, verb, symbol, ...extra] = positionals;
  if (!address) throw new ProtocallError("the grpcurl command names no server address (host:port)");
  if (extra.length > 0) throw new ProtocallError(`the grpcurl command has extra words: ${extra.join(" ")}`);
  if (verb === "describe")
    throw new ProtocallError("grpcurl describe has no request equivalent: use the Services view");
  let path = "";
  if (verb === "list") {
    if (symbol) o.listMethods = true;
    else o.listServices = true;
    if (symbol) notes.push(`protocall lists the methods of every service, not only ${symbol}`);
  } else if (verb) {
    const dot = verb.lastIndexOf(".");
    path = verb.includes("/") ? `/${verb}` : dot > 0 ? `/${verb.slice(0, dot)}/${verb.slice(dot + 1)}` : "";
    if (!path) throw new ProtocallError(`"${verb}" is not a method: write it as package.Service/Method`);
    if (symbol) throw new ProtocallError(`the grpcurl command has extra words: ${symbol}`);
  } else {
    throw new ProtocallError(
      "the grpcurl command names no method: add package.Service/Method after the address",
    );
  }
  if (s.unix) {
    o.unixSocket = address;
    o.url = `http://localhost${path}`;
  } else {
    o.url = `${s.plaintext ? "http" : "https"}://${address}${path}`;
  }
  if (s.reflectAll) o.reflectHeaders.unshift("*");
  if (o.data === "@") o.data = input !== undefined ? `@${input}` : "@-";
  o.schemas.push(...schemas(s));
  return { options: o, notes };
}

/** Applies the flags; returns the positional words. */
function readFlags(args: readonly string[], o: CurlOptions, s: GrpcurlState, notes: string[]): string[] {
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq < 0 ? body : body.slice(0, eq);
    const kind = flags[name]?.kind ?? ignored[name];
    if (!kind)
      throw new ProtocallError(
        `grpcurl flag -${name} is not known: check the command, or leave the flag out`,
      );
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (kind === "bool") value = "true";
    else if (i + 1 < args.length) value = args[++i];
    else throw new ProtocallError(`grpcurl flag -${name} needs a value`);
    if (kind === "bool" && value !== "true" && value !== "false") {
      throw new ProtocallError(`grpcurl flag -${name} is true or false, not "${value}"`);
    }
    const flag = flags[name];
    if (flag) flag.apply(o, value, s);
    else notes.push(`grpcurl -${name} has no equivalent in a request and was left out`);
  }
  return positionals;
}

/** Schema files as `--schema` values: protosets, then .proto files under their import path. */
function schemas(s: GrpcurlState): string[] {
  const out = [...s.protosets];
  const base = s.importPaths[0];
  for (const p of s.protos) {
    out.push(base && !p.startsWith("/") ? `${base.replace(/\/+$/, "")}/${p}` : p);
  }
  if (s.protos.length === 0) out.push(...s.importPaths);
  return out;
}
