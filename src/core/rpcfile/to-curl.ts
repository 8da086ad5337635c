// A parsed `.rpc` request → the CurlOptions that `protocall curl` would build from the same request
// given as flags: options through the curl flag table, the verb as --protocol, headers as `-H "name:
// value"`, the body (documents and included files) as inline `-d` data, the URL as the positional.
// References are resolved first (in assertion values too); every problem is a diagnostic with its range, and a request with an
// error yields no options at all, so nothing unresolved is ever sent.
import { isAbsolute, resolve } from "node:path";
import { findJsonProblem } from "../invoke/json-error";
import { type CurlOptions, defaultCurlOptions, type Protocol } from "../invoke/options";
import { looksLikeModuleRef } from "../schema/module-ref";
import { type RpcAssertion, resolveAssertionValues } from "./assertion-syntax";
import { type LocalFile, optionFiles, specialFile } from "./local-files";
import { applyOption, optionFlag } from "./option-value";
import { positionIn } from "./parse";
import type { Diagnostic, RpcFile, RpcOption, RpcRequest, RpcVerb } from "./types";
import type { VariableResolver } from "./variables";

export interface ToCurlContext {
  /** The directory of the .rpc file: includes and relative paths in options are resolved against it. */
  baseDir: string;
  /** Resolves `{{...}}` references (one resolver per request, so a file variable has one value). */
  variables: VariableResolver;
  /** Reads an included file; throws (any error) when it cannot. */
  readFile(path: string): string;
}

export interface CurlConversion {
  /** Undefined when there is an error among the diagnostics. */
  options?: CurlOptions;
  /** The request's `# @assert` options with `{{...}}` in their values resolved (with `options`). */
  assertions?: RpcAssertion[];
  diagnostics: Diagnostic[];
  /** The local files the request reads (includes, `@data`, header files) and writes (`@output`). */
  files: LocalFile[];
  /**
   * For each part of the request's body (a JSON document or an include), the 1-based line of
   * `options.data` where its text starts: the documents from that line up to the next part's are its
   * own (an include may hold several).
   */
  bodyLines?: number[];
}

const verbProtocols: Record<RpcVerb, Protocol> = { GRPC: "grpc", "GRPC-WEB": "grpcweb", CONNECT: "connect" };

/** Options whose value is a local path, made absolute so the command works from any directory. */
const pathOptions = new Set(["cacert", "cert", "key", "netrc-file", "output", "unix-socket"]);
/** Options whose `@path` value names a local file. */
const fileReferenceOptions = new Set(["data", "header", "reflect-header"]);

/** The name shown for a request: its name, else `request N (line L)`. */
export function requestLabel(request: RpcRequest): string {
  return (
    request.name?.text ??
    `request ${request.index + 1} (line ${(request.requestLine ?? request.range).start.line + 1})`
  );
}

/** Converts one request of a parsed file to CurlOptions. */
export function requestToCurl(file: RpcFile, request: RpcRequest, ctx: ToCurlContext): CurlConversion {
  const diagnostics: Diagnostic[] = [];
  // Parse errors inside this request count too.
  for (const d of file.diagnostics) {
    if (d.severity === "error" && within(d.range.start.line, request)) diagnostics.push(d);
  }
  const o = defaultCurlOptions();
  const files: LocalFile[] = [];
  let bodyLines: number[] | undefined;
  const err = (message: string, range = request.range, code?: string) =>
    diagnostics.push(
      code ? { severity: "error", message, range, code } : { severity: "error", message, range },
    );

  let protocolOption: RpcOption | undefined;
  for (const option of request.options) {
    const flag = optionFlag(option.name.text);
    if (!flag) continue; // reported by the parser
    // A value the parser already refused is reported once.
    if (diagnostics.some((d) => d.range.start.line === option.range.start.line)) continue;
    const before = diagnostics.length;
    const value = option.value ? ctx.variables.resolve(option.value, diagnostics) : undefined;
    if (diagnostics.length > before) continue;
    try {
      applyOption(o, flag, value === undefined ? undefined : localPath(flag.name, value, ctx.baseDir));
      if (flag.name === "protocol") protocolOption = option;
    } catch (e) {
      err(
        e instanceof Error ? e.message : String(e),
        option.value?.range ?? option.name.range,
        "invalid-value",
      );
    }
  }
  if (request.verb) {
    const p = verbProtocols[request.verb.value];
    const explicit = protocolOption;
    if (explicit && o.protocol !== p) {
      err(
        `@protocol ${o.protocol} contradicts the verb ${request.verb.text}; keep one of them`,
        explicit.range,
        "conflicting-protocol",
      );
    }
    o.protocol = p;
  }

  if (request.url) o.url = ctx.variables.resolve(request.url, diagnostics);
  else err(`${requestLabel(request)} has no request line (URL)`, request.range, "missing-url");

  for (const h of request.headers) {
    const name = ctx.variables.resolve(h.name, diagnostics);
    const value = ctx.variables.resolve(h.value, diagnostics);
    if (/[\r\n]/.test(value)) {
      err(
        `the value of header "${name}" spans several lines after substitution; a header value must be one line`,
        h.value.range,
      );
      continue;
    }
    o.headers.push(`${name}: ${value}`);
  }

  if (request.body.length > 0) {
    const explicitData = request.options.find((x) => x.name.text === "data");
    if (explicitData) {
      err(
        "@data and a body both give the request data; remove one of them",
        explicitData.range,
        "conflicting-data",
      );
    }
    const parts: string[] = [];
    bodyLines = [];
    let line = 1;
    const add = (text: string) => {
      bodyLines?.push(line);
      parts.push(text);
      line += (text.match(/\n/g)?.length ?? 0) + 1; // parts are joined with "\n"
    };
    for (const part of request.body) {
      if (part.kind === "include") {
        const rel = ctx.variables.resolve(part.path, diagnostics);
        const full = isAbsolute(rel) ? rel : resolve(ctx.baseDir, rel);
        files.push({ path: full, access: "read", via: "<" });
        try {
          add(ctx.readFile(full));
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          const why =
            code === "ENOENT" ? "no such file" : (code ?? (e instanceof Error ? e.message : String(e)));
          err(
            `cannot read the included file ${full}: ${why}; the path is relative to the .rpc file`,
            part.path.range,
            "include-not-found",
          );
        }
        continue;
      }
      if (!part.text.includes("{{")) {
        add(part.text);
        continue;
      }
      const before = diagnostics.length;
      const deferred = ctx.variables.deferred;
      const text = ctx.variables.resolve({ text: part.text, range: part.range }, diagnostics);
      // A reference kept for a capture that has not run yet is checked when it has a value.
      if (diagnostics.length === before && ctx.variables.deferred === deferred) {
        const problem = jsonProblem(text);
        if (problem !== undefined) {
          err(
            `after substituting variables, this JSON document is invalid: ${problem.reason} (at offset ${problem.offset} of ${JSON.stringify(abbreviate(text))}); quote string values, as in "name": "{{name}}"`,
            { start: part.range.start, end: positionIn(part.text, part.range.start, 1) },
            "invalid-json",
          );
        }
      }
      add(text);
    }
    o.data = parts.join("\n");
  }

  const assertions = resolveAssertionValues(
    request.assertions,
    (token, out) => ctx.variables.resolve(token, out),
    diagnostics,
  );

  for (const f of optionFiles(o)) {
    files.push(f);
    const why = f.access === "read" ? specialFile(f.path) : undefined;
    if (!why) continue;
    const option = request.options.find((x) => `@${x.name.text}` === f.via);
    err(`${f.via} ${f.path}: ${why}; give a file`, option?.value?.range ?? option?.range, "not-a-file");
  }
  if (diagnostics.some((d) => d.severity === "error")) return { diagnostics, files };
  return { options: o, assertions, diagnostics, files, bodyLines };
}

function within(line: number, request: RpcRequest): boolean {
  return line >= request.range.start.line && line <= request.range.end.line;
}

function jsonProblem(text: string): { offset: number; reason: string } | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    return findJsonProblem(text) ?? { offset: 0, reason: "invalid JSON" };
  }
}

function abbreviate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Makes a local path in an option value absolute (relative paths are relative to the .rpc file). */
function localPath(option: string, value: string, baseDir: string): string {
  if (pathOptions.has(option)) return value === "" || isAbsolute(value) ? value : resolve(baseDir, value);
  if (fileReferenceOptions.has(option)) {
    if (!value.startsWith("@") || value === "@-" || value === "@") return value;
    const path = value.slice(1);
    return isAbsolute(path) ? value : `@${resolve(baseDir, path)}`;
  }
  if (option === "schema") return looksLocal(value) ? resolve(baseDir, value) : value;
  return value;
}

/**
 * Whether a --schema value is a local path rather than `-` or a registry module
 * (`REMOTE/owner/module[:ref]`, REMOTE a host with a dot or a port, or localhost).
 */
function looksLocal(value: string): boolean {
  if (value === "-" || value === "" || isAbsolute(value)) return false;
  if (value.startsWith(".")) return true;
  return !looksLikeModuleRef(value) || /\.(proto|binpb|pb|json|bin)$/.test(value);
}
