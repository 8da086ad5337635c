// The workspace's schemas, the last step of a request's schema (resolution-order.ts) in the editor:
// the `protocall.schemas` entries, then for each workspace folder the build of each of its roots
// (buf.yaml, buf.work.yaml, folders of .proto files) and its descriptor-set files (`*.binpb`). One
// implementation for the language server (src/core/analysis/schema-store.ts) and the editor's Send
// (src/extension/send/workspace-sources.ts), so both read the same sources in the same order.
// Each entry stands alone: a root that fails to build, or a file that cannot be read, is reported
// with why and the others are still used.
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { errorMessage } from "../errors";
import { buildWorkspace, CompilerError } from "./compiler";
import { openDescriptorSetBytes, openDescriptorSetFile } from "./descriptor-set-source";
import { findBuf } from "./find-buf";
import { schemaLocation } from "./open-schema";
import type { FileSource } from "./types";
import { findWorkspaceRoots } from "./workspace";
import type { WorkspaceBuildOptions } from "./workspace-build-options";

/** A source of the workspace, or why it could not be opened. */
export interface WorkspaceSchema {
  /** What it is (the Services view lists the sources by this). */
  kind: "setting" | "workspace-build" | "descriptor-set";
  /** The configured location, the build root or the descriptor-set file. */
  origin: string;
  source?: FileSource;
  /** Why it could not be opened (first line: the summary). */
  problem?: string;
  /** The compiler's errors of a build that failed. */
  compilerError?: CompilerError;
}

export type OpenedSchema = Pick<WorkspaceSchema, "source" | "problem" | "compilerError">;

export interface WorkspaceSchemasOptions {
  /** The `protocall.schemas` entries, as written (relative ones against `baseDir`). */
  schemas: readonly string[];
  baseDir: string;
  /** The folders whose roots are built and whose descriptor sets are read (none: the build is off). */
  folders: readonly string[];
  build: WorkspaceBuildOptions;
  /** Opens one settings entry, given as an absolute location or registry module (schemaLocation). */
  openSetting(location: string): Promise<OpenedSchema>;
  /** One line per build (which compiler, how long, cached or not) and per failure. */
  log?(line: string): void;
}

/** Opens the workspace's sources, in order. Never throws: a source that fails is an entry with its problem. */
export async function openWorkspaceSchemas(o: WorkspaceSchemasOptions): Promise<WorkspaceSchema[]> {
  const log = o.log ?? (() => {});
  const out: WorkspaceSchema[] = [];
  for (const spec of o.schemas) {
    const location = schemaLocation(o.baseDir, spec);
    const opened = await o
      .openSetting(location)
      .catch((err): OpenedSchema => ({ problem: errorMessage(err) }));
    if (opened.problem) log(`cannot open the schema ${spec} of protocall.schemas: ${opened.problem}`);
    out.push({ ...opened, kind: "setting", origin: location });
  }
  if (o.folders.length === 0) return out;
  // Which compiler builds, named in the log (a failure to find it is reported by the build).
  const compiler =
    o.build.protocPath ?? (await findBuf({ bufPath: o.build.bufPath }).catch(() => undefined)) ?? "buf";
  for (const folder of o.folders) {
    let roots: string[];
    try {
      roots = await findWorkspaceRoots(folder);
    } catch (err) {
      out.push({ kind: "workspace-build", origin: folder, problem: errorMessage(err) });
      log(`cannot find the build roots of ${folder}: ${errorMessage(err)}`);
      roots = [];
    }
    for (const root of roots) {
      try {
        const started = performance.now();
        const { bytes, fromCache } = await buildWorkspace(root, o.build);
        const ms = Math.round(performance.now() - started);
        log(`built ${root} with ${compiler} (${ms} ms${fromCache ? ", cached" : ""})`);
        out.push({
          kind: "workspace-build",
          origin: root,
          source: openDescriptorSetBytes(bytes, `workspace ${root}`),
        });
      } catch (err) {
        out.push({
          kind: "workspace-build",
          origin: root,
          problem: errorMessage(err),
          compilerError: err instanceof CompilerError ? err : undefined,
        });
        log(`cannot build ${root}: ${errorMessage(err)}`);
      }
    }
    for (const file of await findDescriptorSets(folder)) {
      try {
        out.push({ kind: "descriptor-set", origin: file, source: await openDescriptorSetFile(file) });
      } catch (err) {
        out.push({ kind: "descriptor-set", origin: file, problem: errorMessage(err) });
        log(`cannot read ${file}: ${errorMessage(err)}`);
      }
    }
  }
  return out;
}

/** A one-line summary of each entry that failed ("the schema may lack what they define"). */
export function workspaceProblems(entries: readonly { problem?: string }[]): string[] {
  return entries.flatMap((e) => (e.problem ? [e.problem.split("\n")[0]] : []));
}

/** Descriptor-set files (`*.binpb`) in a folder, sorted, skipping node_modules and hidden folders. */
export async function findDescriptorSets(folder: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, depth: number): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) {
        if (depth < 16 && e.name !== "node_modules" && !e.name.startsWith(".")) {
          await walk(join(dir, e.name), depth + 1);
        }
      } else if (e.name.endsWith(".binpb")) out.push(join(dir, e.name));
    }
  }
  await walk(folder, 0);
  return out.sort();
}
