// The `buf build` invocation: its arguments, and what its exit status and stderr mean.
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { ProtocallError } from "../errors";
import { readBufYaml } from "./buf-config";
import { type CompilerDiagnostic, CompilerError, parseBufErrors } from "./compiler-diagnostics";

export interface BufBuildArgsOptions {
  /** Leave out source code info (comments and spans). */
  readonly excludeSourceInfo?: boolean;
  /** Restrict the build to these files or directories, relative to the directory built. */
  readonly paths?: readonly string[];
}

/**
 * Arguments for `buf build`, run with the workspace directory as its working directory: builds `.`
 * to a binary FileDescriptorSet on stdout, imports included, errors as JSON lines on stderr.
 */
export function bufBuildArgs(options: BufBuildArgsOptions = {}): string[] {
  const args = ["build", ".", "--error-format=json", "-o", "-#format=binpb"];
  if (options.excludeSourceInfo) args.push("--exclude-source-info");
  for (const path of options.paths ?? []) args.push("--path", path);
  return args;
}

/**
 * Turns a failed `buf build` into an error: CompilerError with diagnostics when buf reported errors in
 * .proto files, else a ProtocallError with buf's own message.
 * @param dir the directory built, as the user named it (diagnostic paths are prefixed with it)
 */
export function bufBuildFailure(stderr: string, dir: string, exitCode: number | null): ProtocallError {
  const { diagnostics, other } = parseBufErrors(stderr, dir);
  if (diagnostics.length > 0) return new CompilerError(diagnostics, dir);
  const text = other.map((line) => line.replace(/^Failure:\s*/, "")).join("; ");
  if (/had no \.proto files/.test(text)) {
    return new ProtocallError(
      `${dir} has no .proto files to build; point at a directory that contains .proto files or a buf.yaml`,
    );
  }
  return new ProtocallError(
    `buf build of ${dir} failed${exitCode === null ? "" : ` (exit ${exitCode})`}: ${text || "no error message"}; ` +
      "fix the workspace configuration (buf.yaml, buf.work.yaml) or the files it names",
  );
}

/**
 * buf says only "imported file does not exist"; this names the import, read from the line the
 * diagnostic points at, so the message alone tells the user what is missing.
 */
export async function nameMissingImports(
  error: CompilerError,
  cwd: string,
  workspace: string,
): Promise<CompilerError> {
  if (!error.diagnostics.some((d) => d.message === "imported file does not exist")) return error;
  const sources = new Map<string, string[] | undefined>();
  const diagnostics: CompilerDiagnostic[] = [];
  for (const d of error.diagnostics) {
    if (d.message !== "imported file does not exist" || d.line === 0) {
      diagnostics.push(d);
      continue;
    }
    if (!sources.has(d.file)) {
      const text = await readFile(resolve(cwd, d.file), "utf8").catch(() => undefined);
      sources.set(d.file, text?.split(/\r?\n/));
    }
    const line = sources.get(d.file)?.[d.line - 1] ?? "";
    const name = /import\s+(?:public\s+|weak\s+)?["']([^"']+)["']/.exec(line)?.[1];
    diagnostics.push(name ? { ...d, message: `imported file "${name}" does not exist` } : d);
  }
  return new CompilerError(diagnostics, error.what, await dependencyHint(workspace));
}

/** When buf.yaml declares dependencies, missing imports may be dependencies buf has not fetched. */
async function dependencyHint(workspace: string): Promise<string | undefined> {
  // A hint only: a buf.yaml that cannot be read gives none (buf's own error says why).
  const config = await readBufYaml(resolve(workspace)).catch(() => undefined);
  if (!config?.deps.length) return undefined;
  const hasLock = await readFile(resolve(workspace, "buf.lock"), "utf8").then(
    () => true,
    () => false,
  );
  return hasLock
    ? `if an import comes from a dependency in ${resolve(workspace, "buf.yaml")}, run \`buf dep update\` there and check that buf can reach its registry`
    : `${resolve(workspace, "buf.yaml")} declares dependencies but there is no buf.lock; run \`buf dep update\` there to resolve them`;
}
