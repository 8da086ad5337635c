// Schema sources shared by every open .rpc file, each opened once and cached by key:
//  - the workspace (core/schema/workspace-schemas.ts, as Send reads it): the schemas listed in the
//    settings, then each build root of each workspace folder built with the real buf and the
//    descriptor-set files (*.binpb) found in the folders;
//  - a `@schema` value of a request (a directory, .proto file, descriptor-set file or registry module,
//    REMOTE/owner/module[:ref], which open-schema fetches once and caches by commit);
//  - server reflection of a base URL with the request's headers and TLS options.
// Local sources are dropped when watched files change; everything is dropped on "refresh". Look-ups
// (a service by name, the list of services, hover text) are cached per schema and name, so typing
// never waits for a compiler or a server twice.
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { errorMessage } from "../errors";
import { CompilerError } from "../schema/compiler";
import { openSchema } from "../schema/open-schema";
import type { FileSource } from "../schema/types";
import { workspaceBuildOptions } from "../schema/workspace-build-options";
import { openWorkspaceSchemas, type WorkspaceSchema } from "../schema/workspace-schemas";
import type { ServerSettings } from "./settings";

export interface Opened {
  source?: FileSource;
  /** Why the source could not be opened. */
  problem?: string;
  /** Compiler errors of a workspace build. */
  compilerError?: CompilerError;
  /** For workspace sources: what it is (the Services view lists them by this). */
  kind?: WorkspaceSchema["kind"];
  /** For workspace sources: the configured path, build root or descriptor-set file. */
  origin?: string;
}

/** The ordered sources of one request, with a key naming them. */
export interface RequestSchema {
  /** Names the sources and the store's generation they were opened in (so it keys their look-ups). */
  key: string;
  /** The store's generation the sources belong to: after an invalidation they may be closed. */
  generation: number;
  sources: FileSource[];
  /** The same sources for comments (hover, completion details): the local ones before reflection. */
  docSources: FileSource[];
  /** Sources that could not be opened, with the reason (`@schema` values, reflection). */
  problems: { what: string; problem: string }[];
  /** Workspace builds and files that failed: the schema may lack what they define. */
  incomplete: string[];
}

export interface ServiceLookup {
  service?: DescService;
  /** Sources that failed to answer (unreachable server, ...). */
  failures: string[];
  /** All service names known to the sources that answered (for "did you mean"). */
  known?: string[];
}

/** Reflection sources kept open at most (the least recently used is closed). */
const maxReflections = 16;

/** How long a look-up that failed because a source could not answer is reused. */
const failureTtlMs = 3000;

export class SchemaStore {
  private folders: string[] = [];
  private workspace: Promise<Opened[]> | undefined;
  private readonly files = new Map<string, Promise<Opened>>();
  private readonly reflections = new Map<string, Promise<Opened>>();
  private readonly services = new Map<string, Promise<ServiceLookup>>();
  private readonly listings = new Map<string, Promise<string[]>>();
  /** Hover text and other per-schema values computed once. */
  readonly memo = new Map<string, unknown>();
  private generation = 0;

  constructor(
    private settings: ServerSettings,
    private readonly log: (line: string) => void,
  ) {}

  setFolders(folders: string[]): void {
    this.folders = folders;
    this.invalidate(false);
  }

  setSettings(settings: ServerSettings): void {
    // The client sends its configuration right after start-up: the same settings must not drop
    // (and reopen) a large schema opened meanwhile.
    if (JSON.stringify(settings) === JSON.stringify(this.settings)) return;
    this.settings = settings;
    this.invalidate(true);
  }

  get currentSettings(): ServerSettings {
    return this.settings;
  }

  /**
   * Counts invalidations. Sources opened in an older generation are closed (or about to be), so a
   * schema assembled across an invalidation is assembled again, and look-ups are cached under the
   * generation of the schema they read, never under a newer one.
   */
  get currentGeneration(): number {
    return this.generation;
  }

  /** Drops local sources (and with `all`, reflection too) and every cached look-up. */
  invalidate(all: boolean): void {
    this.generation++;
    const old = [this.workspace, ...this.files.values(), ...(all ? this.reflections.values() : [])];
    this.workspace = undefined;
    this.files.clear();
    if (all) this.reflections.clear();
    this.services.clear();
    this.listings.clear();
    this.memo.clear();
    for (const p of old) {
      void p
        ?.then(async (o) => {
          for (const x of Array.isArray(o) ? o : [o]) await x.source?.close();
        })
        .catch(() => {});
    }
  }

  /** The workspace's sources (built once per change of the workspace's files). */
  workspaceSources(): Promise<Opened[]> {
    this.workspace ??= this.openWorkspace();
    return this.workspace;
  }

  /** Compiler errors of the current workspace build, once it is done. */
  async compilerErrors(): Promise<CompilerError[]> {
    const opened = await this.workspaceSources();
    return opened.flatMap((o) => (o.compilerError ? [o.compilerError] : []));
  }

  private openWorkspace(): Promise<Opened[]> {
    const s = this.settings;
    return openWorkspaceSchemas({
      schemas: s.schemas,
      baseDir: this.folders[0] ?? process.cwd(),
      folders: s.workspaceBuild ? this.folders : [],
      build: workspaceBuildOptions(s),
      // Shared with `@schema` values: a file named by both is opened once.
      openSetting: (location) => this.openFile(location),
      log: this.log,
    });
  }

  /** A `@schema` value (absolute path or registry module, see schemaLocation), opened once. */
  openFile(path: string): Promise<Opened> {
    let p = this.files.get(path);
    if (!p) {
      p = openSchema(path, {
        cwd: "/",
        stdin: process.stdin,
        ...workspaceBuildOptions(this.settings),
        registryTokens: this.settings.registryTokens,
        registryCas: this.settings.registryCas,
      }).then(
        (source) => ({ source }),
        (err) => ({
          problem: errorMessage(err),
          compilerError: err instanceof CompilerError ? err : undefined,
        }),
      );
      this.files.set(path, p);
    }
    return p;
  }

  /** A reflection source by key, created by `open` the first time. */
  reflection(key: string, open: () => Promise<FileSource>): Promise<Opened> {
    let p = this.reflections.get(key);
    if (p) {
      // Most recently used last, so that the oldest are the first to go.
      this.reflections.delete(key);
      this.reflections.set(key, p);
    } else {
      // URLs being typed (`http://loc`, `http://localhost:8`, ...) each make a key: keep a few.
      while (this.reflections.size >= maxReflections) {
        const [oldest, opened] = this.reflections.entries().next().value as [string, Promise<Opened>];
        this.reflections.delete(oldest);
        void opened.then((o) => o.source?.close()).catch(() => {});
      }
      p = open().then(
        (source) => ({ source }),
        (err) => ({ problem: errorMessage(err) }),
      );
      this.reflections.set(key, p);
      // A source that could not even be created (a missing certificate file) is retried later.
      const opened = p;
      void p.then((o) => {
        if (!o.problem) return;
        setTimeout(() => {
          if (this.reflections.get(key) === opened) this.reflections.delete(key);
        }, failureTtlMs).unref();
      });
    }
    return p;
  }

  /** Finds a service in the sources, in order; cached per schema and name. */
  findService(schema: RequestSchema, name: string): Promise<ServiceLookup> {
    const key = `${schema.key}\u0000${name}`;
    let p = this.services.get(key);
    if (!p) {
      p = (async () => {
        const failures: string[] = [];
        for (const source of schema.sources) {
          try {
            const found = await source.findType(name);
            if (found?.kind === "service") return { service: found, failures };
          } catch (err) {
            const message = err instanceof ConnectError ? err.rawMessage : errorMessage(err);
            failures.push(message.startsWith(source.label) ? message : `${source.label}: ${message}`);
          }
        }
        return { failures, known: await this.listServices(schema) };
      })();
      this.services.set(key, p);
      void p.then((r) => {
        if (r.failures.length > 0) setTimeout(() => this.services.delete(key), failureTtlMs).unref();
      });
    }
    return p;
  }

  /**
   * The method in a source after the first one that defines its service (the call's resolver,
   * core/schema/resolver.ts findMethod, looks there too); cached per schema and name.
   */
  findLaterMethod(schema: RequestSchema, service: string, method: string): Promise<DescMethod | undefined> {
    return this.remember(`method\u0000${schema.key}\u0000${service}/${method}`, async () => {
      let seen = false;
      for (const source of schema.sources) {
        try {
          const found = await source.findType(service);
          if (found?.kind !== "service") continue;
          if (seen) {
            const m = found.methods.find((x) => x.name === method);
            if (m) return m;
          }
          seen = true;
        } catch {
          // Reported by findService.
        }
      }
      return undefined;
    });
  }

  /** The sorted union of the services of the sources that can list them; cached per schema. */
  listServices(schema: RequestSchema): Promise<string[]> {
    const key = schema.key;
    let p = this.listings.get(key);
    if (!p) {
      p = (async () => {
        const names = new Set<string>();
        let failed = false;
        for (const source of schema.sources) {
          try {
            for (const n of await source.listServices()) names.add(n);
          } catch {
            failed = true;
          }
        }
        if (failed) setTimeout(() => this.listings.delete(key), failureTtlMs).unref();
        return [...names].sort();
      })();
      this.listings.set(key, p);
    }
    return p;
  }

  /** A value computed once per schema generation and key (hover text, completion items). */
  async remember<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const full = `${this.generation}\u0000${key}`;
    let p = this.memo.get(full) as Promise<T> | undefined;
    if (!p) {
      p = compute();
      this.memo.set(full, p);
      p.catch(() => this.memo.delete(full));
    }
    return p;
  }

  /** Drops a remembered value once it has been computed: it was made while a source failed. */
  forgetLater(key: string): void {
    const full = `${this.generation}\u0000${key}`;
    const p = this.memo.get(full) as Promise<unknown> | undefined;
    if (p) void p.finally(() => this.memo.get(full) === p && this.memo.delete(full)).catch(() => {});
  }

  async close(): Promise<void> {
    this.invalidate(true);
  }
}
