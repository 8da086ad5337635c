// A server's drift from the schemas a workspace has, for the editor's Services view and for
// `protocall drift URL` without --against: the server is read once, and compared with the first of
// the workspace's schemas (configured schemas or registry modules, its builds, descriptor sets, in
// the one order of workspace-schemas.ts) that declares a service the server serves, so that a
// workspace with several APIs compares each server with its own.
import { openWorkspaceSchemas } from "../schema/workspace-schemas";
import type { DriftReport } from "./drift";
import { compareSides } from "./drift";
import { type DriftSide, type OpenSideOptions, openSide } from "./open-side";

export interface ServerDrift {
  /** The workspace schema compared with (as given in `candidates`). */
  readonly against: string;
  readonly report: DriftReport;
}

/**
 * Compares the server at `url` with the first candidate that declares a service it serves; undefined
 * when none does (the workspace has no source of this server). A candidate that cannot be opened is
 * passed over (the view shows its problem on its own node); the server's failure is thrown.
 */
export async function serverDrift(
  url: string,
  candidates: readonly string[],
  options: OpenSideOptions,
): Promise<ServerDrift | undefined> {
  const server = await openSide(url, options);
  const served = new Set(server.served ?? []);
  for (const spec of candidates) {
    let side: DriftSide;
    try {
      side = await openSide(spec, options);
    } catch {
      continue;
    }
    const declares = side.files.some((f) =>
      f.service.some((s) => served.has(f.package ? `${f.package}.${s.name}` : s.name)),
    );
    if (!declares) continue;
    return { against: spec, report: await compareSides(server, side, options) };
  }
  return undefined;
}

/**
 * The schemas of a workspace folder as drift candidates, in the order of openWorkspaceSchemas (the
 * one the language server and Send read): each build root, then each descriptor-set file. Entries
 * that fail are left out (their problem is what `problems` lists).
 */
export async function workspaceCandidates(
  folder: string,
  options: { bufPath?: string; env?: NodeJS.ProcessEnv },
): Promise<{ candidates: string[]; problems: string[] }> {
  const entries = await openWorkspaceSchemas({
    schemas: [],
    baseDir: folder,
    folders: [folder],
    build: { bufPath: options.bufPath },
    openSetting: async () => ({ problem: "no settings here" }),
  });
  await Promise.all(entries.map((e) => e.source?.close()));
  return {
    candidates: entries.filter((e) => !e.problem).map((e) => e.origin),
    problems: entries.flatMap((e) => (e.problem ? [`${e.origin}: ${e.problem.split("\n")[0]}`] : [])),
  };
}
