// The schema of one request: its `@schema` values, then the workspace (builds, descriptor-set files,
// configured schemas), then server reflection of its URL with its headers and TLS options.
// Local sources come first in the editor: they answer without a network round trip and carry the
// comments that hover shows; reflection fills in what the workspace does not have.
import { errorMessage } from "../core/errors";
import type { CurlOptions } from "../core/invoke/options";
import { usesReflection } from "../core/invoke/url";
import { schemaLocation } from "../core/schema/open-schema";
import type { FileSource } from "../core/schema/types";
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
  const problems: { what: string; problem: string }[] = [];
  const keys: string[] = [`generation:${generation}`];
  for (const spec of o.schemas) {
    const path = schemaLocation(baseDir, spec);
    keys.push(`schema:${path}`);
    const opened = await store.openFile(path);
    if (opened.source) sources.push(opened.source);
    else problems.push({ what: spec, problem: opened.problem ?? "cannot open" });
  }
  keys.push("workspace");
  const incomplete: string[] = [];
  for (const opened of await store.workspaceSources()) {
    if (opened.source) sources.push(opened.source);
    else if (opened.problem) incomplete.push(opened.problem.split("\n")[0]);
  }
  const settings = store.currentSettings;
  const base = o.url ? reflectionBase(o.url) : undefined;
  if (base && settings.reflection && usesReflection(o)) {
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
  return { key: keys.join("\u0001"), generation, sources, problems, incomplete };
}
