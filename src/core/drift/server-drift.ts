// A server's drift from the schemas a workspace has, for the editor's Services view: the server is
// read once, and compared with the first of the workspace's schemas (its builds, descriptor sets and
// configured schemas or registry modules, in the view's order) that declares a service the server
// serves, so that a workspace with several APIs compares each server with its own.
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
