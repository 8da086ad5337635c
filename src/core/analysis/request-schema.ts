// The schema of one request, in the order Send resolves it (core/schema/resolution-order.ts): with
// `@schema` values those alone (reflection first only with an explicit `@reflect`), else server
// reflection of its URL (with its headers and TLS options) then the workspace (configured schemas,
// builds, descriptor-set files). So the editor flags exactly what Send would fail on. Hover reads
// comments from the local sources first (`docSources`): reflection rarely carries any.
import { errorMessage } from "../errors";
import type { CurlOptions } from "../invoke/options";
import { schemaLocation } from "../schema/open-schema";
import { schemaResolutionOrder } from "../schema/resolution-order";
import type { FileSource } from "../schema/types";
import { workspaceProblems } from "../schema/workspace-schemas";
import { type ReflectionTarget, reflectionTarget } from "./reflection-source";
import type { RequestSchema, SchemaStore } from "./schema-store";

/**
 * The base URL reflection is asked at: the URL without its `/<package.Service>/<Method>` (or the
 * part of it being typed). Undefined when the URL is not an http(s) URL.
 */
export function reflectionBase(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  const parts = u.pathname.split("/").filter((p) => p !== "");
  const n = parts.length;
  if (n >= 2 && parts[n - 2].includes(".")) parts.length = n - 2;
  else if (n >= 1 && (parts[n - 1].includes(".") || n === 1)) parts.length = n - 1;
  return `${u.protocol}//${u.host}${parts.map((p) => `/${p}`).join("")}`;
}

/** How often a schema is assembled again when the store is invalidated meanwhile. */
const maxAttempts = 3;

/**
 * Collects the sources of a request (opening them on first use). When the store is invalidated while
 * they are collected (settings or files changed), the sources of the older generation are closed:
 * they are collected again from the new one.
 */
export async function requestSchema(
  store: SchemaStore,
  o: CurlOptions,
  baseDir: string,
): Promise<RequestSchema> {
  for (let attempt = 1; ; attempt++) {
    const generation = store.currentGeneration;
    const schema = await collect(store, o, baseDir, generation);
    if (store.currentGeneration === generation || attempt >= maxAttempts) return schema;
  }
}

async function collect(
  store: SchemaStore,
  o: CurlOptions,
  baseDir: string,
  generation: number,
): Promise<RequestSchema> {
  const sources: FileSource[] = [];
  /** Sources with the request's comments: every one but reflection, which rarely has any. */
  const local: FileSource[] = [];
  const problems: { what: string; problem: string }[] = [];
  const keys: string[] = [`generation:${generation}`];
  const incomplete: string[] = [];
  const settings = store.currentSettings;
  for (const step of schemaResolutionOrder(o, { workspace: true })) {
    if (step.kind === "schema") {
      const path = schemaLocation(baseDir, step.spec);
      keys.push(`schema:${path}`);
      const opened = await store.openFile(path);
      if (opened.source) {
        sources.push(opened.source);
        local.push(opened.source);
      } else problems.push({ what: step.spec, problem: opened.problem ?? "cannot open" });
    } else if (step.kind === "workspace") {
      keys.push("workspace");
      const opened = await store.workspaceSources();
      for (const x of opened) {
        if (x.source) {
          sources.push(x.source);
          local.push(x.source);
        }
      }
      incomplete.push(...workspaceProblems(opened));
    } else {
      // The editor's protocall.reflection setting (off in a restricted workspace) keeps the server
      // from asking servers while you type; Send still reflects.
      const base = o.url ? reflectionBase(o.url) : undefined;
      if (!base || !settings.reflection) continue;
      const what = `reflection at ${base}`;
      let target: ReflectionTarget | undefined;
      try {
        target = await reflectionTarget(o, base, baseDir, { timeoutMs: settings.reflectionTimeoutMs });
      } catch (err) {
        problems.push({ what, problem: errorMessage(err) });
      }
      if (target) {
        keys.push(`reflect:${target.key}`);
        const opened = await store.reflection(target.key, target.open);
        if (opened.source) sources.push(opened.source);
        else problems.push({ what, problem: opened.problem ?? "unavailable" });
      }
    }
  }
  const docSources = [...local, ...sources.filter((x) => !local.includes(x))];
  return { key: keys.join("\u0001"), generation, sources, docSources, problems, incomplete };
}
