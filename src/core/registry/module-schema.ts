// A registry module's compiled schema, fetched as the buf CLI fetches a module and cached by commit:
//   1. a commit id already cached for this module: no call at all (a commit never changes);
//   2. CommitService.GetCommits resolves the reference (a label moves, so it is asked every time);
//      when that commit's schema is cached (with the digest the registry states), that is all;
//   3. otherwise GraphService.GetGraph gives the commit's dependencies, DownloadService.Download the
//      files of every commit not cached yet (with GetModules/GetOwners naming the dependencies for
//      messages), each module's b5 digest is checked dependencies first against the digest the
//      registry states (GetCommits for the module asked for, the graph for the others), the files
//      are compiled with buf, and only then are the files and the schema cached.
// A digest that does not match, a graph without a commit, files with unsafe paths or content that does
// not compile fail with one line, and nothing is cached.
import { readFile } from "node:fs/promises";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { ProtocallError } from "../errors";
import { type ModuleRef, moduleFullName, normalizeCommitId } from "../schema/module-ref";
import { remoteAccess } from "./access";
import { b5Digest, formatB5, type ModuleFile, sameDigest } from "./b5-digest";
import { type CachedModule, ModuleCache, protocallCacheDir } from "./module-cache";
import { type CommitInfo, ModuleClient, type ModuleGraph } from "./module-client";
import { compileModule } from "./module-compile";

export interface ModuleSchemaOptions {
  /** Environment: tokens, netrc, SSL_CERT_FILE, cache location, buf on PATH (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Tokens the editor holds, by remote. */
  readonly tokens?: Readonly<Record<string, string>>;
  /** An extra PEM file of trusted CAs (curl's --cacert). */
  readonly caFile?: string;
  /** CAs (PEM) the editor trusts for a registry, by remote: with its token, from the Webhooks view. */
  readonly cas?: Readonly<Record<string, string>>;
  /** Protocall's cache directory (default protocallCacheDir(env)); false: nothing read or written. */
  readonly cacheDir?: string | false;
  readonly bufPath?: string;
  readonly signal?: AbortSignal;
  /** The largest registry response read (default 256 MiB). */
  readonly maxResponseBytes?: number;
  /** Called for each registry call made (for verbose output and tests). */
  readonly onCall?: (rpc: string) => void;
}

export interface ModuleSchema {
  /** The compiled schema's file in the cache; absent when the cache could not be used. */
  readonly path?: string;
  /** The compiled schema when it is not in a file. */
  readonly bytes?: Uint8Array;
  readonly commitId: string;
  /** `remote/owner/module:commit` */
  readonly name: string;
  /** Whether no download or compile was needed. */
  readonly cached: boolean;
}

/**
 * The compiled schema of `ref` as FileDescriptorSet bytes (`protocall build REMOTE/owner/module`), the
 * module with what it imports, as `buf build REMOTE/owner/module` holds it; without source info when
 * asked.
 */
export async function moduleSchemaBytes(
  ref: ModuleRef,
  options: ModuleSchemaOptions & { excludeSourceInfo?: boolean } = {},
): Promise<Uint8Array> {
  const schema = await loadModuleSchema(ref, options);
  const bytes = schema.bytes ?? (await readFile(schema.path!));
  if (!options.excludeSourceInfo) return bytes;
  const set = fromBinary(FileDescriptorSetSchema, bytes);
  for (const file of set.file) file.sourceCodeInfo = undefined;
  return toBinary(FileDescriptorSetSchema, set);
}

/** Commits being fetched in this process, so concurrent look-ups of one commit share the work. */
const inFlight = new Map<string, Promise<ModuleSchema>>();

/** Resolves `ref` to a commit and returns its compiled schema (from the cache when it is there). */
export async function loadModuleSchema(
  ref: ModuleRef,
  options: ModuleSchemaOptions = {},
): Promise<ModuleSchema> {
  const env = options.env ?? process.env;
  const cache = new ModuleCache(options.cacheDir ?? protocallCacheDir(env));
  const name = moduleFullName(ref);

  const pinned = normalizeCommitId(ref.ref);
  if (pinned) {
    const hit = await cachedSchema(cache, ref, pinned);
    if (hit) return hit;
  }

  const client = new ModuleClient({
    access: remoteAccess(ref.remote, {
      env,
      tokens: options.tokens,
      cas: options.cas,
      caFile: options.caFile,
      cwd: options.cwd,
    }),
    signal: options.signal,
    maxResponseBytes: options.maxResponseBytes,
  });
  options.onCall?.("GetCommits");
  const commit = await client.getCommit(ref);
  const meta = await cache.meta(ref.remote, commit.id);
  if (meta && meta.digest === formatB5(commit.digest)) {
    const path = await cache.schemaPath(ref.remote, commit.id);
    if (path) return { path, commitId: commit.id, name: `${name}:${commit.id}`, cached: true };
  }

  const key = `${ref.remote}/${commit.id}`;
  let running = inFlight.get(key);
  if (!running) {
    running = fetchAndCompile(ref, commit, client, cache, options).finally(() => inFlight.delete(key));
    inFlight.set(key, running);
  }
  return running;
}

/** A cached schema for a commit id typed by the user, if the cache holds it for this very module. */
async function cachedSchema(
  cache: ModuleCache,
  ref: ModuleRef,
  id: string,
): Promise<ModuleSchema | undefined> {
  const meta = await cache.meta(ref.remote, id);
  if (
    !meta ||
    meta.owner.toLowerCase() !== ref.owner.toLowerCase() ||
    meta.module.toLowerCase() !== ref.module.toLowerCase()
  ) {
    return undefined;
  }
  const path = await cache.schemaPath(ref.remote, id);
  return path ? { path, commitId: id, name: `${moduleFullName(ref)}:${id}`, cached: true } : undefined;
}

async function fetchAndCompile(
  ref: ModuleRef,
  root: CommitInfo,
  client: ModuleClient,
  cache: ModuleCache,
  options: ModuleSchemaOptions,
): Promise<ModuleSchema> {
  const remote = ref.remote;
  const rootName = moduleFullName(ref);
  options.onCall?.("GetGraph");
  const graph = await client.getGraph(ref, root.id);
  // Dependencies first (post-order from the root); commits the root does not reach are ignored.
  const order = postOrder(graph, root.id);
  const closure = new Map(order.map((id) => [id, transitiveDeps(graph, id)]));
  const expected = (id: string) => (id === root.id ? root.digest : graph.commits.get(id)!.digest);

  // What the cache already holds (verified when it was stored, and the digest must still agree).
  const metas = new Map<string, CachedModule>();
  const files = new Map<string, ModuleFile[]>();
  for (const id of order) {
    const meta = await cache.meta(remote, id);
    if (!meta || meta.digest !== formatB5(expected(id))) continue;
    const cached = await cache.files(remote, id);
    if (!cached) continue;
    metas.set(id, meta);
    files.set(id, cached);
  }
  const missing = order.filter((id) => !files.has(id));

  // Names of the dependencies to download, as buf names them: remote/owner/module.
  const names = new Map<string, { owner: string; module: string }>([
    [root.id, { owner: ref.owner, module: ref.module }],
  ]);
  for (const [id, meta] of metas) names.set(id, { owner: meta.owner, module: meta.module });
  const unnamed = missing.filter((id) => !names.has(id));
  if (unnamed.length > 0) {
    options.onCall?.("GetModules");
    const found = await client.names(
      unnamed.map((id) => graph.commits.get(id)!.moduleId),
      unnamed.map((id) => graph.commits.get(id)!.ownerId),
    );
    for (const id of unnamed) {
      const c = graph.commits.get(id)!;
      names.set(id, {
        owner: found.owners.get(c.ownerId) ?? "?",
        module: found.modules.get(c.moduleId) ?? "?",
      });
    }
  }
  const fullName = (id: string) => {
    const n = names.get(id)!;
    return `${remote}/${n.owner}/${n.module}`;
  };

  if (missing.length > 0) {
    options.onCall?.("Download");
    const downloaded = await client.download(missing, fullName);
    for (const id of missing) {
      const got = downloaded.get(id)!;
      checkPaths(remote, fullName(id), got);
      files.set(id, got);
    }
  }

  // Verify every downloaded module, dependencies first.
  for (const id of missing) {
    const deps = closure.get(id)!;
    const actual = b5Digest(
      files.get(id)!,
      deps.map((d) => expected(d)),
    );
    if (!sameDigest(actual, expected(id))) {
      const n = fullName(id);
      throw new ProtocallError(
        `could not get module data for remote module "${n}": digest verification failed for "${n}:${id}": ` +
          `expected digest "${formatB5(expected(id))}", actual digest "${formatB5(actual)}"; the registry sent content that ` +
          "does not match the digest it states (corrupted or tampered with); nothing was cached",
      );
    }
  }

  const label = `${rootName}:${root.id}`;
  const bytes = await compileModule(
    { name: label, files: files.get(root.id)! },
    order
      .filter((id) => id !== root.id)
      .map((id) => ({ name: `${fullName(id)}:${id}`, files: files.get(id)! })),
    { bufPath: options.bufPath, env: options.env, signal: options.signal },
  );

  for (const id of missing) {
    const n = names.get(id)!;
    await cache.storeModule(
      remote,
      {
        owner: n.owner,
        module: n.module,
        commitId: id,
        digest: expected(id),
        dependencies: closure.get(id)!,
      },
      files.get(id)!,
    );
  }
  const path = await cache.storeSchema(remote, root.id, bytes);
  return path
    ? { path, commitId: root.id, name: label, cached: false }
    : { bytes, commitId: root.id, name: label, cached: false };
}

/** Commits reachable from `root` (itself included), each after its dependencies. */
function postOrder(graph: ModuleGraph, root: string): string[] {
  const out: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (id: string) => {
    if (state.get(id) === "done") return;
    if (state.get(id) === "visiting") {
      throw new ProtocallError(
        `the registry's graph for commit ${root} has a dependency cycle through ${id}; nothing was cached`,
      );
    }
    state.set(id, "visiting");
    for (const dep of graph.edges.get(id) ?? []) visit(dep);
    state.set(id, "done");
    out.push(id);
  };
  visit(root);
  return out;
}

/** The dependencies of a commit, direct and transitive, each once. */
function transitiveDeps(graph: ModuleGraph, id: string): string[] {
  const seen = new Set<string>();
  const walk = (c: string) => {
    for (const d of graph.edges.get(c) ?? []) {
      if (seen.has(d)) continue;
      seen.add(d);
      walk(d);
    }
  };
  walk(id);
  return [...seen];
}

/** Refuses file paths that could leave the module's directory when written, or name a file twice. */
function checkPaths(remote: string, module: string, files: readonly ModuleFile[]): void {
  const seen = new Set<string>();
  for (const f of files) {
    const p = f.path;
    const bad =
      !p ||
      p.length > 4096 ||
      p.startsWith("/") ||
      /[\\\0]/.test(p) ||
      /^[A-Za-z]:/.test(p) ||
      p.split("/").some((part) => part === "" || part === "." || part === "..");
    if (bad || seen.has(p)) {
      throw new ProtocallError(
        `the registry at https://${remote} sent module ${module} with ${bad ? "an unsafe file path" : "a file twice"}: ${JSON.stringify(p.slice(0, 200))}; nothing was cached`,
      );
    }
    seen.add(p);
  }
  if (!files.some((f) => f.path.endsWith(".proto"))) {
    throw new ProtocallError(
      `the registry at https://${remote} sent module ${module} without any .proto file; nothing was cached`,
    );
  }
}
