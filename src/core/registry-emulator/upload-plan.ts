// How a push (UploadService/Upload) becomes commits: which modules each uploaded module depends on,
// and in which order to commit them. buf sends the commit ids of the remote dependencies but not the
// links between the modules of one push (a workspace where b imports a sends a and b together), so the
// registry works them out from the import statements: an imported file is looked up in the other
// uploaded modules first, then in the dependency commits and everything they depend on. A module's
// direct dependencies are the modules that supply a file it imports; its digest then covers those and
// all of theirs (b5-digest.ts).
import { moduleFileKind } from "../registry/b5-digest";
import { protoImports } from "./proto-imports";
import type { CommitData, ModuleData } from "./state";

export interface PlannedContent {
  readonly module: ModuleData;
  readonly files: readonly { readonly path: string; readonly content: Uint8Array }[];
}

export interface UploadPlan {
  /** Indexes of the contents, dependencies before the modules that import them. */
  readonly order: readonly number[];
  /** Per content: the indexes of the uploaded contents it imports from. */
  readonly contentDeps: readonly (readonly number[])[];
  /** Per content: the existing commits it imports from. */
  readonly commitDeps: readonly (readonly string[])[];
}

/** A push that cannot be committed; the message says which module, file and import. */
export class UploadPlanError extends Error {}

/**
 * Works out the dependencies and the commit order of a push. `depCommits` are the commits named in the
 * request (buf sends every remote dependency, direct and transitive); `closure` lists a commit's
 * dependencies, direct and transitive.
 */
export function planUpload(
  contents: readonly PlannedContent[],
  depCommits: readonly CommitData[],
  closure: (commit: CommitData) => readonly CommitData[],
): UploadPlan {
  const fromContent = new Map<string, number>();
  contents.forEach((c, i) => {
    for (const f of c.files) if (!fromContent.has(f.path)) fromContent.set(f.path, i);
  });
  const fromCommit = new Map<string, CommitData>();
  const seen = new Set<string>();
  const index = (commit: CommitData) => {
    if (seen.has(commit.id)) return;
    seen.add(commit.id);
    for (const f of commit.files) if (!fromCommit.has(f.path)) fromCommit.set(f.path, commit);
  };
  for (const c of depCommits) index(c);
  for (const c of depCommits) for (const d of closure(c)) index(d);

  const contentDeps: number[][] = [];
  const commitDeps: string[][] = [];
  contents.forEach((content, i) => {
    const own = new Set(content.files.map((f) => f.path));
    const toContents = new Set<number>();
    const toCommits = new Set<string>();
    for (const file of content.files) {
      if (moduleFileKind(file.path) !== "proto") continue;
      for (const imported of protoImports(Buffer.from(file.content).toString("utf8"))) {
        if (own.has(imported)) continue;
        const j = fromContent.get(imported);
        if (j !== undefined && j !== i) {
          toContents.add(j);
          continue;
        }
        const commit = fromCommit.get(imported);
        if (commit && commit.moduleId !== content.module.id) {
          toCommits.add(commit.id);
          continue;
        }
        // The well-known types come with the compiler unless a module supplies them.
        if (imported.startsWith("google/protobuf/")) continue;
        throw new UploadPlanError(
          `${content.module.owner}/${content.module.name}: ${file.path} imports "${imported}", which neither the pushed modules nor the dependency commits (dep_commit_ids) contain; add the module that has it to the deps of buf.yaml and run buf dep update`,
        );
      }
    }
    contentDeps.push([...toContents]);
    commitDeps.push([...toCommits]);
  });

  const order: number[] = [];
  const state = new Map<number, "visiting" | "done">();
  const visit = (i: number, path: number[]) => {
    if (state.get(i) === "done") return;
    if (state.get(i) === "visiting") {
      const cycle = [...path.slice(path.indexOf(i)), i].map(
        (k) => `${contents[k].module.owner}/${contents[k].module.name}`,
      );
      throw new UploadPlanError(`the pushed modules import each other in a cycle: ${cycle.join(" -> ")}`);
    }
    state.set(i, "visiting");
    for (const j of contentDeps[i]) visit(j, [...path, i]);
    state.set(i, "done");
    order.push(i);
  };
  for (let i = 0; i < contents.length; i++) visit(i, []);
  return { order, contentDeps, commitDeps };
}
