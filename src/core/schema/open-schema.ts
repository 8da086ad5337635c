// Turns a `--schema` value into a schema source: stdin, a workspace directory, a .proto file, a
// descriptor-set file, or a module of a schema registry (`REMOTE/owner/module[:ref]`, fetched as buf
// fetches it and cached by commit by src/core/registry, which provides the opener: see
// registry-modules.ts). The registry code is loaded only when a value names a module.
import { existsSync } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { ProtocallError } from "../errors";
import { buildWorkspace } from "./compiler";
import { decompressSchemaBytes, detectCompression } from "./compressed-input";
import { readSchemaInput } from "./descriptor-set";
import { openDescriptorSetBytes, openDescriptorSetFile } from "./descriptor-set-source";
import { looksLikeModuleRef, parseModuleRef } from "./module-ref";
import { moduleOpener } from "./registry-modules";
import type { FileSource } from "./types";

export interface OpenSchemaOptions {
  /** The directory relative values are resolved against. */
  cwd: string;
  /** Read in full when the value is `-`. */
  stdin: NodeJS.ReadableStream;
  /** The buf binary to build with instead of the bundled one. */
  bufPath?: string;
  /** The on-disk build cache directory, or false for memory only (default: under the OS temp dir). */
  cacheDir?: string | false;
  /**
   * Environment for finding buf on PATH and running it, and for registry modules: tokens
   * (PROTOCALL_TOKEN, BUF_TOKEN, NETRC, HOME), trust (SSL_CERT_FILE) and the cache directory
   * (PROTOCALL_CACHE_DIR, XDG_CACHE_HOME) (default process.env).
   */
  env?: NodeJS.ProcessEnv;
  /** The compiler when it is protoc (default: buf); see workspaceBuildOptions. */
  protocPath?: string;
  /** Stops a compiler run or a registry fetch when it aborts. */
  signal?: AbortSignal;
  /** Registry modules: API tokens the editor holds, by remote (`host[:port]`); before the environment's. */
  registryTokens?: Readonly<Record<string, string>>;
  /** Registry modules: CAs (PEM) the editor trusts for a registry, by remote; added to the trust. */
  registryCas?: Readonly<Record<string, string>>;
  /** Registry modules: an extra PEM file of trusted CAs (curl's --cacert), relative to cwd. */
  cacert?: string;
  /** Registry modules: Protocall's cache directory instead of the user's; false for none. */
  registryCacheDir?: string | false;
}

/**
 * Opens the schema a `--schema` value names:
 * - `-`: a descriptor set, image or plugin request read from stdin;
 * - a directory: a workspace build of it (buf.yaml, buf.work.yaml, or a plain folder of .proto files);
 * - a `.proto` file: a build of that file (and its imports) within its workspace;
 * - any other file: a descriptor-set file (binary, buf image, JSON, or plugin request; by content),
 *   possibly compressed as buf writes images named .gz or .zst (by content too);
 * - `REMOTE/owner/module[:ref]` that is not a local path: that registry module (see looksLikeModuleRef).
 * Throws ProtocallError (CompilerError for .proto errors) with the value in the message.
 */
export async function openSchema(spec: string, options: OpenSchemaOptions): Promise<FileSource> {
  if (spec === "") throw new ProtocallError("--schema needs a value: a directory, a file, or - for stdin");
  if (spec === "-") {
    const label = "descriptor set from stdin";
    return openDescriptorSetBytes(
      decompressSchemaBytes(await readSchemaInput("-", options.stdin), label),
      label,
    );
  }
  const path = resolve(options.cwd, spec);
  const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT" || err.code === "ENOTDIR") return undefined;
    throw new ProtocallError(`cannot read schema ${spec}: ${err.code ?? err.message}`);
  });
  if (!st) {
    const ref = parseModuleRef(spec);
    if (ref) {
      const openModule = await moduleOpener();
      return openModule(ref, {
        env: options.env,
        cwd: options.cwd,
        tokens: options.registryTokens,
        cas: options.registryCas,
        caFile: options.cacert,
        cacheDir: options.registryCacheDir,
        bufPath: options.bufPath,
        signal: options.signal,
      });
    }
    throw new ProtocallError(
      `schema ${spec} does not exist; give a directory of .proto files, a .proto file, a descriptor-set file, a registry module (REMOTE/owner/module[:ref]), or - for stdin`,
    );
  }
  const build = {
    cwd: options.cwd,
    bufPath: options.bufPath,
    protocPath: options.protocPath,
    cacheDir: options.cacheDir,
    env: options.env,
    signal: options.signal,
  };
  if (st.isDirectory()) {
    const { bytes } = await buildWorkspace(spec, build);
    return openDescriptorSetBytes(bytes, `workspace ${spec}`);
  }
  if (spec.endsWith(".proto")) {
    const { bytes } = await buildWorkspace(spec, build);
    return openDescriptorSetBytes(bytes, `schema ${spec}`);
  }
  if (await isCompressed(path)) {
    const label = `descriptor set ${path}`;
    return openDescriptorSetBytes(
      decompressSchemaBytes(await readSchemaInput(path, options.stdin), label),
      label,
    );
  }
  return openDescriptorSetFile(path);
}

/** Whether a file starts with the magic bytes of gzip or zstd (buf's .gz and .zst images). */
async function isCompressed(path: string): Promise<boolean> {
  let file: FileHandle | undefined;
  try {
    file = await open(path, "r");
    const head = new Uint8Array(4);
    const { bytesRead } = await file.read(head, 0, 4, 0);
    return detectCompression(head.subarray(0, bytesRead)) !== undefined;
  } catch {
    return false; // reading it as a descriptor set reports what is wrong with it
  } finally {
    await file?.close();
  }
}

/**
 * Where a schema value of a setting or a `@schema` line points: an absolute path, or a registry module
 * (`REMOTE/owner/module[:ref]`) as written when no file or directory of that name exists.
 */
export function schemaLocation(baseDir: string, spec: string): string {
  const path = resolve(baseDir, spec);
  return looksLikeModuleRef(spec) && !existsSync(path) ? spec : path;
}
