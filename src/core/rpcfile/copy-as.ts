// "Copy as" commands: a request's CurlOptions as a shell command line for `protocall curl`, `buf curl`
// or `grpcurl`. The first two take the same flags, so their commands do exactly what the request does;
// grpcurl speaks only gRPC and has other flags, so its command is the closest equivalent, with notes
// on what it cannot express. Arguments are quoted for POSIX shells (sh, bash, zsh).
import { curlFlags } from "../invoke/curl-flags";
import { type CurlOptions, defaultCurlOptions } from "../invoke/options";

export interface CopiedCommand {
  /** One shell command line. */
  command: string;
  /** What the command cannot express, for the user to read; empty when it is exact. */
  notes: string[];
}

const safe = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Quotes one argument for a POSIX shell (single quotes; `'` written as `'\''`). */
export function shellQuote(arg: string): string {
  if (safe.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Joins arguments into a command line. */
export function shellJoin(args: readonly string[]): string {
  return args.map(shellQuote).join(" ");
}

/** Flags written in their short form in copied commands, as curl users write them. */
const shortInCommands: ReadonlySet<string> = new Set(["data", "header", "output"]);

const defaults = defaultCurlOptions();

/**
 * The `protocall curl` arguments (after `curl`) that parse back to exactly these options: every flag
 * of the table whose field differs from its default, in the table's order, then the URL. Derived
 * from the flag table (each flag's `field` and kind), so a new flag is copied without a change here.
 */
export function curlArguments(o: CurlOptions): string[] {
  const a: string[] = [];
  for (const flag of curlFlags) {
    if (flag.field === undefined) continue;
    const value = o[flag.field];
    const fallback = defaults[flag.field];
    const name = flag.short && shortInCommands.has(flag.name) ? `-${flag.short}` : `--${flag.name}`;
    switch (flag.kind) {
      case "strings":
        for (const item of value as string[]) a.push(name, item);
        break;
      case "bool":
        // Only true and false differ from a default; a tri-state flag (undefined: not given) is
        // written as --flag=false when explicitly off.
        if (value === true && fallback !== true) a.push(name);
        else if (value === false && fallback !== false) a.push(`${name}=false`);
        break;
      case "duration":
        if (value !== undefined && value !== fallback) a.push(name, `${value}ms`);
        break;
      default:
        if (value !== undefined && value !== fallback) a.push(name, String(value));
    }
  }
  if (o.url !== undefined) {
    if (o.url.startsWith("-")) a.push("--");
    a.push(o.url);
  }
  return a;
}

/** `protocall curl …`: exactly the request. */
export function copyAsProtocallCurl(o: CurlOptions): CopiedCommand {
  return { command: shellJoin(["protocall", "curl", ...curlArguments(o)]), notes: [] };
}

/**
 * `buf curl …`: the same flags. buf reads the values of its repeatable flags (-H, --reflect-header,
 * --schema) as CSV, so a value holding a comma or a double quote is written as one quoted CSV field;
 * and over plain http it needs HTTP/2 prior knowledge spelled out for gRPC and reflection.
 */
export function copyAsBufCurl(o: CurlOptions): CopiedCommand {
  const notes: string[] = [];
  const options: CurlOptions = {
    ...o,
    headers: o.headers.map(csvField),
    reflectHeaders: o.reflectHeaders.map(csvField),
    schemas: o.schemas.map(csvField),
  };
  const plain = o.url?.toLowerCase().startsWith("http://") ?? false;
  const reflection = o.reflect ?? o.schemas.length === 0;
  if (plain && !o.http2PriorKnowledge && (o.protocol === "grpc" || reflection)) {
    // protocall implies it for gRPC and reflection over http; older buf versions refuse without it.
    options.http2PriorKnowledge = true;
  }
  if (o.http3) notes.push("buf curl supports --http3; protocall does not");
  if (o.streamFile !== undefined) {
    notes.push(
      "buf curl has no --stream-file: it sends the -d documents instead; stream the file with protocall curl",
    );
  }
  if (o.auth !== undefined) {
    options.auth = undefined;
    notes.push(authNote("buf curl"));
  }
  // buf has no --proxy flag; it reads the proxy from the environment (Go's rules, as protocall's).
  let env = "";
  if (o.proxy !== undefined) {
    env = `${o.url?.toLowerCase().startsWith("http://") ? "HTTP_PROXY" : "HTTPS_PROXY"}=${shellQuote(o.proxy)} `;
    options.proxy = undefined;
  }
  return { command: env + shellJoin(["buf", "curl", ...curlArguments(options)]), notes };
}

/** What a copied command without --auth needs instead. */
function authNote(tool: string): string {
  return `${tool} cannot fetch an OAuth2 token (--auth): the command is copied without it; add the token yourself (-H "Authorization: Bearer TOKEN")`;
}

/** One CSV field as Go's encoding/csv reads it: quoted (with "" for ") when it holds , " or a line break. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** `grpcurl …`: the closest equivalent (grpcurl speaks gRPC only), with notes on what differs. */
export function copyAsGrpcurl(o: CurlOptions): CopiedCommand {
  const a: string[] = ["grpcurl"];
  const notes: string[] = [];
  let target: URL | undefined;
  try {
    target = o.url ? new URL(o.url) : undefined;
  } catch {
    notes.push(`the URL ${JSON.stringify(o.url)} is not valid`);
  }
  const secure = target?.protocol === "https:";
  if (target && !secure) a.push("-plaintext");
  if (o.auth !== undefined) notes.push(authNote("grpcurl"));
  if (o.insecure) a.push("-insecure");
  if (o.cacert !== undefined) a.push("-cacert", o.cacert);
  if (o.cert !== undefined) a.push("-cert", o.cert);
  if (o.key !== undefined) a.push("-key", o.key);
  if (o.servername !== undefined) a.push("-servername", o.servername);
  if (o.protocol !== "grpc") {
    notes.push(
      `grpcurl speaks only gRPC; the request uses ${o.protocol}, so the server must also serve gRPC`,
    );
  }

  // Headers: -H goes to the RPC and to reflection, -rpc-header to the RPC only.
  const reflectAll = o.reflectHeaders.includes("*");
  for (const h of o.headers) {
    if (h.startsWith("@")) {
      notes.push(`grpcurl cannot read headers from a file (${h}); add them with -H`);
      continue;
    }
    const colon = h.indexOf(":");
    const name = colon < 0 ? h : h.slice(0, colon).trim();
    const value = colon < 0 ? "" : h.slice(colon + 1).trim();
    if (name.toLowerCase() === "host") a.push("-authority", value);
    else if (name.toLowerCase() === "user-agent") a.push("-user-agent", value);
    else a.push(reflectAll ? "-H" : "-rpc-header", `${name}: ${value}`);
  }
  for (const h of o.reflectHeaders) {
    if (h === "*") continue;
    if (h.startsWith("@")) notes.push(`grpcurl cannot read reflection headers from a file (${h})`);
    else a.push("-reflect-header", h);
  }
  if (o.userAgent !== undefined && !o.headers.some((h) => /^\s*user-agent\s*:/i.test(h))) {
    a.push("-user-agent", o.userAgent);
  }
  if (o.user !== undefined) {
    // As protocall does: --user gives the RPC and the reflection requests an Authorization header,
    // each unless it already has one.
    const isAuth = (h: string) => /^\s*authorization\s*:/i.test(h);
    const rpc = !o.headers.some(isAuth);
    const reflection = !o.reflectHeaders.some(isAuth) && !(reflectAll && o.headers.some(isAuth));
    const value = `Authorization: Basic ${Buffer.from(o.user).toString("base64")}`;
    if (!o.user.includes(":"))
      notes.push("grpcurl cannot prompt for a password; give --user as name:password");
    else if (rpc && reflection) a.push("-H", value);
    else if (rpc) a.push("-rpc-header", value);
    else if (reflection) a.push("-reflect-header", value);
  }
  if (o.netrc || o.netrcFile !== undefined)
    notes.push("grpcurl does not read .netrc files; add an Authorization header");

  let redirectIn: string | undefined;
  if (o.data !== undefined && o.data !== "") {
    if (o.data === "@-") a.push("-d", "@");
    else if (o.data.startsWith("@")) {
      a.push("-d", "@");
      redirectIn = o.data.slice(1);
    } else a.push("-d", o.data);
  }
  if (o.emitDefaults) a.push("-emit-defaults");
  if (o.timeoutMs) a.push("-max-time", String(o.timeoutMs / 1000));
  if (o.connectTimeout !== undefined) a.push("-connect-timeout", String(o.connectTimeout));
  if (o.keepaliveTime !== undefined && !o.noKeepalive) a.push("-keepalive-time", String(o.keepaliveTime));
  if (o.noKeepalive) notes.push("grpcurl cannot turn TCP keepalive off");

  const reflection = o.reflect ?? o.schemas.length === 0;
  if (o.schemas.length > 0 && reflection) {
    notes.push("grpcurl uses either reflection or schema files, not both; this command uses the files");
  }
  for (const s of o.schemas) {
    if (s === "-") notes.push("grpcurl cannot read a schema from stdin");
    else if (s.endsWith(".proto")) {
      const slash = s.lastIndexOf("/");
      if (slash >= 0) a.push("-import-path", s.slice(0, slash) || "/", "-proto", s.slice(slash + 1));
      else a.push("-proto", s);
    } else if (/\.(binpb|pb|bin|protoset|desc)$/.test(s)) a.push("-protoset", s);
    else {
      a.push("-import-path", s);
      notes.push(`grpcurl needs each .proto file under ${s} named with -proto`);
    }
  }
  if (o.reflectProtocol !== undefined) notes.push("grpcurl chooses the reflection version itself");
  if (o.http3) notes.push("grpcurl has no HTTP/3");
  if (o.verbose) a.push("-v");

  if (o.unixSocket !== undefined) {
    a.push("-unix", o.unixSocket);
  } else if (target) {
    const port = target.port || (secure ? "443" : "80");
    a.push(`${target.hostname.includes(":") ? `[${target.hostname}]` : target.hostname}:${port}`);
  }
  const segments = target ? target.pathname.split("/").filter((s) => s !== "") : [];
  if (o.listServices || o.listMethods) {
    a.push("list");
    if (o.listMethods)
      notes.push("grpcurl lists the methods of one service at a time: add the service name after list");
    if (segments.length > 0) notes.push("grpcurl cannot call a server under a path prefix");
  } else if (segments.length >= 2) {
    a.push(`${segments[segments.length - 2]}/${segments[segments.length - 1]}`);
    if (segments.length > 2) notes.push("grpcurl cannot call a server under a path prefix");
  }
  let command = shellJoin(a);
  if (redirectIn !== undefined) command += ` < ${shellQuote(redirectIn)}`;
  if (o.output !== undefined) command += ` > ${shellQuote(o.output)}`;
  return { command, notes };
}
