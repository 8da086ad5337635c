// The schemas of the workspace as a source for "Send": asked after server reflection when a request
// names no @schema (core/schema/resolution-order.ts; the CLI has no workspace; in the editor it lets
// requests reach servers that have no reflection). Read by the language server's own code
// (core/schema/workspace-schemas.ts): the `protocall.schemas` entries first (descriptor sets,
// directories, registry modules added with "Add Registry Module…", with the editor's registry
// sign-ins), then each folder's builds and descriptor-set files (`*.binpb`). Opened lazily on the
// first look-up, once per change of the workspace's .proto files or those settings, with the compiler
// the language server uses (workspaceBuildOptions); never in an untrusted workspace.
//
// Each call takes a lease on the schemas of the moment (sources()); a change makes the next calls
// open new ones, and the old ones are closed once the last call that holds them has ended, so a
// setting changed or a .proto file saved while a request runs does not close its schema under it.
import * as vscode from "vscode";
import { errorMessage } from "../../core/errors";
import type { FallbackLease } from "../../core/invoke/call-session";
import { settingsKey } from "../../core/invoke/settings-key";
import type { SchemaSource } from "../../core/schema/types";
import { type WorkspaceBuildOptions, workspaceBuildOptions } from "../../core/schema/workspace-build-options";
import type { ProtocallContext } from "../context";

type Found = Awaited<ReturnType<SchemaSource["findType"]>>;

const none: FallbackLease = { sources: [], release() {} };

export class WorkspaceSources implements vscode.Disposable {
  private current: WorkspaceSchemas | undefined;
  private key: string | undefined;

  constructor(private readonly ctx: ProtocallContext) {}

  /**
   * The fallback sources for the current settings (none when the workspace is untrusted), leased to
   * one call: release the lease when the call has ended.
   */
  sources(): FallbackLease {
    if (!vscode.workspace.isTrusted) return none;
    const settings = this.ctx.settings.server();
    const schemas = settings.schemas;
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const buildFolders = settings.workspaceBuild ? folders : [];
    if (schemas.length === 0 && buildFolders.length === 0) return none;
    const build = workspaceBuildOptions(settings);
    // Made from the settings' schemas, the folders and the compiler settings: another of any, anew.
    const key = settingsKey({ schemas, folders: buildFolders, build });
    if (key !== this.key || this.current?.retry) this.invalidate();
    this.key = key;
    this.current ??= new WorkspaceSchemas(
      this.ctx,
      schemas,
      folders[0] ?? process.cwd(),
      buildFolders,
      build,
    );
    return this.current.lease();
  }

  /** Forgets the build (the .proto files or settings changed); the next look-up builds again. */
  invalidate(): void {
    const old = this.current;
    this.current = undefined;
    old?.retire();
  }

  dispose(): void {
    this.invalidate();
  }
}

/** The workspace's schemas for one set of settings: opened once, closed when retired and unleased. */
class WorkspaceSchemas {
  private opened: Promise<SchemaSource[]> | undefined;
  /** What could not be opened (a root that does not build, ...): a method not found says so. */
  private problems: string[] = [];
  private leases = 0;
  private retired = false;
  /** A settings schema could not be opened (a registry not signed in to yet): open again next time. */
  retry = false;

  constructor(
    private readonly ctx: ProtocallContext,
    private readonly schemas: readonly string[],
    private readonly baseDir: string,
    private readonly folders: string[],
    private readonly build: WorkspaceBuildOptions,
  ) {}

  lease(): FallbackLease {
    this.leases++;
    let released = false;
    const open = () => this.open();
    const problems = () => this.problems;
    const source: SchemaSource = {
      get label() {
        const missing = problems();
        return missing.length > 0
          ? `the workspace's schemas (incomplete: ${missing.join("; ")})`
          : "the workspace's schemas";
      },
      async listServices() {
        const names = new Set<string>();
        for (const s of await open()) for (const n of await s.listServices()) names.add(n);
        return [...names].sort();
      },
      async findType(name): Promise<Found> {
        for (const s of await open()) {
          const found = await s.findType(name);
          if (found) return found;
        }
        return undefined;
      },
      async findExtension(extendee, number) {
        for (const s of await open()) {
          const found = await s.findExtension(extendee, number);
          if (found) return found;
        }
        return undefined;
      },
      async close() {},
    };
    return {
      sources: [source],
      release: () => {
        if (released) return;
        released = true;
        this.leases--;
        this.closeWhenDone();
      },
    };
  }

  /** No later call takes these: they are closed once no call holds them. */
  retire(): void {
    this.retired = true;
    this.closeWhenDone();
  }

  private closeWhenDone(): void {
    if (!this.retired || this.leases > 0) return;
    const opened = this.opened;
    this.opened = undefined;
    void opened?.then((all) => Promise.allSettled(all.map((s) => s.close()))).catch(() => {});
  }

  /**
   * Opens the workspace's schemas as the language server does (core/schema/workspace-schemas.ts), once:
   * a root that fails to build or a file that cannot be read is left out with a warning in the
   * output (the language server shows it at the .proto files and in the Services view), and the
   * others are used. A settings schema that cannot be opened is opened again by the next call.
   */
  private open(): Promise<SchemaSource[]> {
    this.opened ??= (async () => {
      const [{ openWorkspaceSchemas, workspaceProblems }, { openSchema }] = await Promise.all([
        import("../../core/schema/workspace-schemas"),
        import("../../core/schema/open-schema"),
      ]);
      const registries = this.schemas.length > 0 ? await this.ctx.registryAccess() : undefined;
      const entries = await openWorkspaceSchemas({
        schemas: this.schemas,
        baseDir: this.baseDir,
        folders: this.folders,
        build: this.build,
        openSetting: (location) =>
          openSchema(location, {
            cwd: this.baseDir,
            stdin: process.stdin,
            ...this.build,
            registryTokens: registries?.tokens,
            registryCas: registries?.cas,
          }).then(
            (source) => ({ source }),
            (err) => ({ problem: errorMessage(err) }),
          ),
      });
      const out: SchemaSource[] = [];
      this.problems = workspaceProblems(entries);
      for (const e of entries) {
        if (e.source) out.push(e.source);
        else {
          const what = e.kind === "setting" ? `The schema ${e.origin} of protocall.schemas` : e.origin;
          this.ctx.log.warn(`${what} cannot be used by Send: ${(e.problem ?? "").split("\n")[0]}`);
          if (e.kind === "setting") this.retry = true;
        }
      }
      return out;
    })();
    const opened = this.opened;
    opened.catch(() => {
      if (this.opened === opened) this.opened = undefined;
    });
    return opened;
  }
}
