// Compiles a downloaded module with its dependencies to one FileDescriptorSet, with the same compiler
// as workspace builds (the real buf): the .proto files are written to a temporary buf v2 workspace,
// one directory per module (m0 the module asked for, m1… its dependencies), and `buf build m0` builds
// the module and what its files import, exactly the files `buf build REMOTE/owner/module` would hold
// (a dependency's files that nothing imports are left out, as buf leaves them out).
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ProtocallError } from "../errors";
import { bufBuildArgs, bufBuildFailure } from "../schema/buf-build";
import { findBuf, runCompiler } from "../schema/compiler";
import { CompilerError, formatDiagnostic } from "../schema/compiler-diagnostics";
import type { ModuleFile } from "./b5-digest";

export interface CompileModule {
  /** `remote/owner/module:commit`, for messages. */
  readonly name: string;
  readonly files: readonly ModuleFile[];
}

export interface CompileOptions {
  readonly bufPath?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Stops the compiler (a command's --timeout, a cancel). */
  readonly signal?: AbortSignal;
}

/**
 * How long buf may take: a module is compiled once per commit and may hold thousands of files (the
 * googleapis tree takes minutes on a busy machine), so well beyond a workspace build's limit; a
 * caller's --timeout or cancel still stops it.
 */
const moduleCompileTimeoutMs = 15 * 60_000;

/**
 * Compiles `root` with `deps` (their .proto files only). Throws a ProtocallError naming the module and
 * the first error when the files do not compile.
 */
export async function compileModule(
  root: CompileModule,
  deps: readonly CompileModule[],
  options: CompileOptions = {},
): Promise<Uint8Array> {
  const env = options.env ?? process.env;
  const buf = await findBuf({ bufPath: options.bufPath, env });
  const work = await mkdtemp(join(tmpdir(), "protocall-module-"));
  try {
    const modules = [root, ...deps];
    const lines = ["version: v2", "modules:"];
    for (let i = 0; i < modules.length; i++) {
      lines.push(`  - path: m${i}`);
      const protos = modules[i].files.filter((f) => f.path.endsWith(".proto"));
      await writeFiles(join(work, `m${i}`), protos);
    }
    await writeFile(join(work, "buf.yaml"), `${lines.join("\n")}\n`);
    const args = bufBuildArgs().map((a) => (a === "." ? "m0" : a));
    const run = await runCompiler(buf, args, {
      cwd: work,
      env,
      signal: options.signal,
      timeoutMs: moduleCompileTimeoutMs,
    });
    if (run.code !== 0) {
      const failure = bufBuildFailure(run.stderr, "", run.code);
      if (failure instanceof CompilerError) {
        const d = failure.diagnostics[0];
        const m = /^m(\d+)\/(.*)$/.exec(d.file.replaceAll("\\", "/"));
        const where = m ? `${modules[Number(m[1])]?.name ?? "?"}: ${m[2]}` : d.file;
        const more = failure.diagnostics.length > 1 ? ` (and ${failure.diagnostics.length - 1} more)` : "";
        throw new ProtocallError(
          `registry module ${root.name} does not compile: ${formatDiagnostic({ ...d, file: where })}${more}; the module as pushed has errors, so push a fixed version`,
        );
      }
      throw new ProtocallError(
        `compiling registry module ${root.name} failed: ${failure.message.replace(/\s*\n\s*/g, "; ")}`,
      );
    }
    return run.stdout;
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Writes files under `dir`, creating each directory once. */
async function writeFiles(dir: string, files: readonly ModuleFile[]): Promise<void> {
  const made = new Set<string>();
  for (const f of files) {
    const path = join(dir, f.path);
    const parent = dirname(path);
    if (!made.has(parent)) {
      await mkdir(parent, { recursive: true });
      made.add(parent);
    }
    await writeFile(path, f.content);
  }
}
