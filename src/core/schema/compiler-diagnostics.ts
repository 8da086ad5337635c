// Compiler errors as structured diagnostics, parsed from `buf build --error-format=json` or from
// protoc's `file:line:column: message` lines, and the error a failed build throws.
import { isAbsolute, join } from "node:path";
import { ProtocallError } from "../errors";

export interface CompilerDiagnostic {
  /** The file as the user would type it: the build directory joined with the compiler's path. */
  readonly file: string;
  /** 1-based line; 0 when the compiler gave none. */
  readonly line: number;
  /** 1-based column; 0 when the compiler gave none. */
  readonly column: number;
  /** 1-based end line and column when the compiler gave a range. */
  readonly endLine?: number;
  readonly endColumn?: number;
  readonly message: string;
}

/** A build that failed on the user's .proto files; `diagnostics` holds one entry per compiler error. */
export class CompilerError extends ProtocallError {
  constructor(
    readonly diagnostics: readonly CompilerDiagnostic[],
    /** What was compiled, as the user named it (a directory or file). */
    readonly what: string,
    /** Advice beyond "fix the file", e.g. how to fetch missing dependencies. */
    readonly hint?: string,
  ) {
    const count = diagnostics.length === 1 ? "1 error" : `${diagnostics.length} errors`;
    const files = [...new Set(diagnostics.map((d) => d.file))];
    super(
      [
        `compiling ${what} failed with ${count}:`,
        ...diagnostics.map(formatDiagnostic),
        `fix ${files.length === 1 ? files[0] : "the files listed above"} and build again`,
        ...(hint ? [hint] : []),
      ].join("\n"),
    );
  }
}

/** `file:line:column: message`, the form editors and terminals link to. */
export function formatDiagnostic(d: CompilerDiagnostic): string {
  if (d.line === 0) return `${d.file}: ${d.message}`;
  return `${d.file}:${d.line}:${d.column}: ${d.message}`;
}

/** Prefixes a compiler-relative path with the directory the compiler ran in, as the user named it. */
function userPath(dir: string, path: string): string {
  if (isAbsolute(path) || dir === "" || dir === ".") return path;
  return join(dir, path);
}

/**
 * Parses the stderr of `buf build --error-format=json`: one JSON object per line
 * (`{"path","start_line","start_column","end_line","end_column","type","message"}`).
 * Lines that are not diagnostics (`Failure: …`) are returned in `other`.
 */
export function parseBufErrors(
  stderr: string,
  dir: string,
): { diagnostics: CompilerDiagnostic[]; other: string[] } {
  const diagnostics: CompilerDiagnostic[] = [];
  const other: string[] = [];
  for (const raw of stderr.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "") continue;
    const d = line.startsWith("{") ? parseBufJsonLine(line, dir) : undefined;
    if (d) diagnostics.push(d);
    else other.push(line);
  }
  return { diagnostics, other };
}

function parseBufJsonLine(line: string, dir: string): CompilerDiagnostic | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.message !== "string") return undefined;
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  const path = typeof v.path === "string" && v.path !== "" ? v.path : "<unknown file>";
  const d: CompilerDiagnostic = {
    file: userPath(dir, path),
    line: num(v.start_line),
    column: num(v.start_column),
    message: v.message,
  };
  if (num(v.end_line) > 0) return { ...d, endLine: num(v.end_line), endColumn: num(v.end_column) };
  return d;
}

/**
 * Parses protoc's stderr (its default `--error_format=gcc`): `file:line:column: message` or
 * `file: message`. Warnings (`file:line:column: warning: …`) are left out, as are lines that name no
 * file; those are returned in `other`.
 */
export function parseProtocErrors(
  stderr: string,
  dir: string,
): { diagnostics: CompilerDiagnostic[]; other: string[] } {
  const diagnostics: CompilerDiagnostic[] = [];
  const other: string[] = [];
  for (const raw of stderr.split(/\r?\n/)) {
    const line = raw.trimEnd();
    if (line.trim() === "") continue;
    const withPos = /^(.+?):(\d+):(\d+): (.*)$/.exec(line);
    if (withPos) {
      const message = withPos[4];
      if (/^warning: /.test(message)) continue;
      diagnostics.push({
        file: userPath(dir, withPos[1]),
        line: Number(withPos[2]),
        column: Number(withPos[3]),
        message,
      });
      continue;
    }
    const fileOnly = /^([^\s:][^:]*\.proto): (.*)$/.exec(line);
    if (fileOnly) {
      if (/^warning: /.test(fileOnly[2])) continue;
      diagnostics.push({ file: userPath(dir, fileOnly[1]), line: 0, column: 0, message: fileOnly[2] });
      continue;
    }
    other.push(line.trim());
  }
  return { diagnostics, other };
}
