// The protoc invocation, for users who configure protoc instead of buf: its arguments, following
// protoc's documented command line (`-I <dir> … --include_imports --include_source_info -o <file>
// <files>`), and what its exit status and stderr mean.
import { existsSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { ProtocallError } from "../errors";
import { CompilerError, parseProtocErrors } from "./compiler-diagnostics";

export interface ProtocArgsOptions {
  /** Import directories, in order (`-I`). Input files must lie inside one of them. */
  readonly includePaths: readonly string[];
  /** The .proto files to compile, as absolute paths inside an include path. */
  readonly files: readonly string[];
  /** Where protoc writes the FileDescriptorSet (protoc cannot write it to stdout). */
  readonly out: string;
  /** Leave out `--include_source_info`. */
  readonly excludeSourceInfo?: boolean;
}

export function protocArgs(options: ProtocArgsOptions): string[] {
  if (options.includePaths.length === 0) {
    throw new ProtocallError("protoc needs at least one include path (-I)");
  }
  if (options.files.length === 0) {
    throw new ProtocallError(
      `no .proto files to compile under ${options.includePaths.join(", ")}; add .proto files or name them`,
    );
  }
  const args: string[] = [];
  for (const dir of options.includePaths) args.push("-I", dir);
  // Without --include_imports the set lacks the files it imports and cannot be loaded.
  args.push("--include_imports");
  if (!options.excludeSourceInfo) args.push("--include_source_info");
  args.push("-o", options.out);
  // Absolute paths never start with "-", so protoc cannot mistake a file for a flag.
  args.push(...options.files);
  return args;
}

/**
 * Turns a failed protoc run into an error: CompilerError with diagnostics parsed from its
 * `file:line:column: message` lines, else a ProtocallError with protoc's own message.
 * @param dir the directory built, as the user named it (relative diagnostic paths are joined to it)
 * @param locate maps protoc's file names (relative to the include path that holds them) to the paths
 *   users open; see protocLocator. Names it cannot place are kept as protoc wrote them.
 */
export function protocFailure(
  stderr: string,
  dir: string,
  exitCode: number | null,
  locate?: (file: string) => string | undefined,
): ProtocallError {
  const parsed = parseProtocErrors(stderr, locate ? "" : dir);
  const { other } = parsed;
  const diagnostics = locate
    ? parsed.diagnostics.map((d) => ({ ...d, file: locate(d.file) ?? d.file }))
    : parsed.diagnostics;
  if (diagnostics.length > 0) return new CompilerError(diagnostics, dir);
  return new ProtocallError(
    `protoc failed on ${dir}${exitCode === null ? "" : ` (exit ${exitCode})`}: ${other.join("; ") || "no error message"}; ` +
      "check the include paths and files",
  );
}

/**
 * protoc names files by their path inside the include path (-I) that holds them, not by the path
 * the user knows. This finds each such name in the include paths, in order, and returns it relative
 * to `cwd` (absolute when `dir`, the directory built, was given absolute or the file lies outside
 * `cwd`); undefined for a name no include path holds (an import that does not exist).
 */
export function protocLocator(
  includePaths: readonly string[],
  cwd: string,
  dir: string,
): (file: string) => string | undefined {
  return (file) => {
    if (isAbsolute(file)) return file;
    for (const include of includePaths) {
      const abs = resolve(cwd, include, file);
      if (!existsSync(abs)) continue;
      const rel = relative(cwd, abs);
      return isAbsolute(dir) || rel.startsWith("..") || isAbsolute(rel) ? abs : rel;
    }
    return undefined;
  };
}
