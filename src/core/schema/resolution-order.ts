// Which schemas a request is resolved against, and in which order: the one answer shared by the call
// pipeline (`protocall curl`, `protocall run`, the editor's Send) and the language server
// (diagnostics, completion, hover), so the editor checks a request against the schema it is sent with.
//
// The order is `buf curl`'s, with the workspace added where buf has nothing:
//   - with `--schema` / `# @schema` values: those schemas, in order, and nothing else; server
//     reflection is asked first only when `--reflect` is given explicitly (as `buf curl` does);
//   - without them: server reflection (unless `--reflect=false`), then the workspace's schemas (the
//     editor's `protocall.schemas` entries, then the folders' builds and descriptor-set files), which
//     only front ends that have a workspace give;
//   - the well-known types are always resolvable last (the resolver adds them).
// Hover may still read comments from local sources first (docs are not resolution); everything that
// decides whether a request is valid follows this order.

/** One place a request's schema is read from. */
export type SchemaStep =
  | { kind: "reflection" }
  /** A `--schema` / `# @schema` value, as written (relative paths against the request's directory). */
  | { kind: "schema"; spec: string }
  | { kind: "workspace" };

/** What of a request decides its schema's order (a subset of CurlOptions). */
export interface SchemaChoice {
  /** `--reflect` as given: undefined when not given. */
  reflect?: boolean;
  /** `--schema` values, in order. */
  schemas: readonly string[];
}

/** Whether server reflection is asked: when `--reflect` says so, else by default unless `--schema` is given. */
export function reflectionOn(o: SchemaChoice): boolean {
  return o.reflect ?? o.schemas.length === 0;
}

/**
 * The ordered steps of a request's schema. `workspace` says whether the front end has workspace
 * schemas to offer (the editor and the language server do; `protocall curl` has none).
 */
export function schemaResolutionOrder(o: SchemaChoice, has: { workspace: boolean }): SchemaStep[] {
  const steps: SchemaStep[] = [];
  if (reflectionOn(o)) steps.push({ kind: "reflection" });
  for (const spec of o.schemas) steps.push({ kind: "schema", spec });
  if (o.schemas.length === 0 && has.workspace) steps.push({ kind: "workspace" });
  return steps;
}
