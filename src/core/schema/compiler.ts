// Builds a directory of .proto files to a binary FileDescriptorSet with the real compiler (buf, or a
// configured protoc), caching results by a hash of the inputs.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { ProtocallError } from "../errors";
import { bufBuildArgs, bufBuildFailure, nameMissingImports } from "./buf-build";
import { BuildCache, buildKey, defaultBuildCacheDir } from "./build-cache";
import { CompilerError } from "./compiler-diagnostics";
import { findBuf, findOnPath } from "./find-buf";
import { protocArgs, protocFailure, protocLocator } from "./protoc-build";
import { enclosingWorkspace, findBuildRoot, listProtoFiles } from "./workspace";

export { type CompilerDiagnostic, CompilerError } from "./compiler-diagnostics";
export { findBuf } from "./find-buf";

export interface CompilerRun {
  /** The exit code, or null when the process was killed by a signal. */
  readonly code: number | null;
  readonly stdout: Uint8Array;
  readonly stderr: string;
}

/** Runs a compiler process; replaceable so callers can observe or wrap runs. */
export type CompilerRunner = (
  file: string,
  args: readonly string[],
  options: {
    cwd: string;
    env?: NodeJS.ProcessEnv;
    signal?: AbortSignal;
    /** How long the compiler may run before it is stopped (default 120 s). */
    timeoutMs?: number;
  },
) => Promise<CompilerRun>;

export interface BuildOptions {
  /** Leave out source code info (comments and spans). */
  excludeSourceInfo?: boolean;
  /** The buf binary to use instead of the bundled one. */
  bufPath?: string;
  /** false: without bufPath, use the buf on PATH rather than the bundled one. */
  useBundledBuf?: boolean;
  /** Compile with this protoc instead of buf: a path, or a bare name looked up on PATH (`protoc`). */
  protocPath?: string;
  /** protoc only: import directories, relative to the directory built (default: that directory). */
  includePaths?: string[];
  /** Restrict the build to these files or directories (relative to the directory built, or absolute). */
  paths?: string[];
  /** The on-disk cache directory (default `<tmpdir>/protocall-build-cache-<uid>`); false for memory only. */
  cacheDir?: string | false;
  /** The directory a relative `dir` is resolved against (default process.cwd()). */
  cwd?: string;
  /** Environment for finding buf on PATH and for the compiler process (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Runs the compiler (default: spawns it). */
  runner?: CompilerRunner;
  /** Stops the compiler when it aborts (a command's --timeout, a cancel). */
  signal?: AbortSignal;
}

export interface BuildResult {
  /** A serialized google.protobuf.FileDescriptorSet, imports included. */
  bytes: Uint8Array;
  /** True when no compiler ran because an identical build was cached. */
  fromCache: boolean;
}

/** A compile longer than this is stopped, so a stuck compiler can never hang a caller. */
const compileTimeoutMs = 120_000;

/** Builds that are running, by cache key, so concurrent requests for the same build share one run. */
const inFlight = new Map<string, Promise<Uint8Array>>();

/**
 * Builds `dir` (a buf workspace or module, or a plain folder of .proto files) to a FileDescriptorSet.
 * `dir` may also be a single .proto file: it is built within its workspace (see findBuildRoot),
 * restricted to that file and its imports.
 * Throws CompilerError (a ProtocallError with `diagnostics`) when .proto files have errors, and
 * ProtocallError for everything else the user can fix (missing directory, no compiler, bad config).
 */
export async function buildWorkspace(dir: string, options: BuildOptions = {}): Promise<BuildResult> {
  const cwd = options.cwd ?? process.cwd();
  const root = resolve(cwd, dir);
  const st = await stat(root).catch(() => undefined);
  if (!st) throw new ProtocallError(`cannot build ${dir}: the directory does not exist`);
  if (st.isFile() && root.endsWith(".proto")) {
    // A single file builds within its workspace, restricted to it (and what it imports).
    const found = await findBuildRoot(root);
    const rel = relative(cwd, found.root);
    const shown = rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? found.root : rel;
    return buildWorkspace(shown, { ...options, cwd, paths: [found.path, ...(options.paths ?? [])] });
  }
  if (!st.isDirectory()) {
    throw new ProtocallError(
      `cannot build ${dir}: it is not a directory; give the folder that holds the .proto files`,
    );
  }
  const paths = await normalizePaths(root, dir, options.paths ?? []);
  const env = options.env ?? process.env;
  const runner = options.runner ?? runCompiler;
  const run: CompilerRunner = (file, args, o) => runner(file, args, { ...o, env, signal: options.signal });
  const cache = new BuildCache(options.cacheDir === undefined ? defaultBuildCacheDir() : options.cacheDir);

  const protoc = options.protocPath ? await findProtoc(options.protocPath, env) : undefined;
  const compiler =
    protoc ?? (await findBuf({ bufPath: options.bufPath, env, useBundled: options.useBundledBuf }));
  const includePaths = protoc
    ? (options.includePaths?.length ? options.includePaths : [root]).map((p) => resolve(root, p))
    : [];
  const hashDirs = protoc ? [root, ...includePaths] : [await enclosingWorkspace(root)];
  const key = await buildKey({
    dirs: hashDirs,
    compiler,
    options: {
      kind: protoc ? "protoc" : "buf",
      root,
      paths,
      includePaths,
      excludeSourceInfo: options.excludeSourceInfo === true,
    },
  });

  const cached = await cache.get(key);
  if (cached) return { bytes: cached, fromCache: true };
  let running = inFlight.get(key);
  if (running) return { bytes: await running, fromCache: true };
  running = (async () => {
    const bytes = protoc
      ? await compileWithProtoc(
          protoc,
          root,
          dir,
          cwd,
          includePaths,
          paths,
          options.excludeSourceInfo === true,
          run,
        )
      : await compileWithBuf(compiler, root, dir, cwd, paths, options.excludeSourceInfo === true, run);
    await cache.set(key, bytes);
    return bytes;
  })();
  inFlight.set(key, running);
  try {
    return { bytes: await running, fromCache: false };
  } finally {
    inFlight.delete(key);
  }
}

/** The protoc to run: a configured path that must exist, or a bare name found on PATH. */
async function findProtoc(configured: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (!/[\\/]/.test(configured)) {
    const onPath = await findOnPath(configured, env);
    if (onPath) return onPath;
    throw new ProtocallError(
      `${configured} was not found on PATH: install it, set the path of protoc (protocall.protocPath), or build with buf (protocall.compiler)`,
    );
  }
  const path = resolve(configured);
  if (!(await stat(path).catch(() => undefined))?.isFile()) {
    throw new ProtocallError(`the configured protoc ${configured} does not exist; fix its path`);
  }
  return path;
}

/** Makes `paths` relative to `root` with forward slashes; each must exist inside it. */
async function normalizePaths(root: string, dir: string, paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const abs = isAbsolute(p) ? p : resolve(root, p);
    const rel = relative(root, abs);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      throw new ProtocallError(
        `cannot build ${p}: it is outside ${dir}; build the directory that contains it`,
      );
    }
    if (!(await stat(abs).catch(() => undefined))) {
      throw new ProtocallError(`cannot build ${p}: no such file or directory in ${dir}`);
    }
    out.push(rel === "" ? "." : rel.split(sep).join("/"));
  }
  return out.sort();
}

async function compileWithBuf(
  buf: string,
  root: string,
  dir: string,
  cwd: string,
  paths: readonly string[],
  excludeSourceInfo: boolean,
  runner: CompilerRunner,
): Promise<Uint8Array> {
  const run = await runner(buf, bufBuildArgs({ excludeSourceInfo, paths: paths.filter((p) => p !== ".") }), {
    cwd: root,
  });
  if (run.code !== 0) {
    const failure = bufBuildFailure(run.stderr, dir, run.code);
    throw failure instanceof CompilerError
      ? await nameMissingImports(failure, cwd, await enclosingWorkspace(root))
      : failure;
  }
  return run.stdout;
}

async function compileWithProtoc(
  protoc: string,
  root: string,
  dir: string,
  cwd: string,
  includePaths: readonly string[],
  paths: readonly string[],
  excludeSourceInfo: boolean,
  runner: CompilerRunner,
): Promise<Uint8Array> {
  const files: string[] = [];
  for (const p of paths.length ? paths : ["."]) {
    const abs = resolve(root, p);
    if ((await stat(abs)).isDirectory()) files.push(...(await listProtoFiles(abs)));
    else files.push(abs);
  }
  const work = await mkdtemp(join(tmpdir(), "protocall-protoc-"));
  try {
    const out = join(work, "set.binpb");
    const run = await runner(protoc, protocArgs({ includePaths, files, out, excludeSourceInfo }), {
      cwd: root,
    });
    if (run.code !== 0) {
      throw protocFailure(run.stderr, dir, run.code, protocLocator(includePaths, cwd, dir));
    }
    return new Uint8Array(await readFile(out));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Spawns the compiler and collects its output; stops it after a generous timeout. */
export const runCompiler: CompilerRunner = (file, args, options) =>
  new Promise<CompilerRun>((resolvePromise, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
      signal: options.signal,
      killSignal: "SIGKILL",
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const limitMs = options.timeoutMs ?? compileTimeoutMs;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, limitMs);
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new ProtocallError(
          `cannot run the compiler ${file}: ${e.code ?? e.message}; check that it exists and is executable`,
          1,
          {
            cause: e,
          },
        ),
      );
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(
          new ProtocallError(`the compiler ${file} did not finish within ${limitMs / 1000}s and was stopped`),
        );
        return;
      }
      resolvePromise({
        code,
        stdout: new Uint8Array(Buffer.concat(out)),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
