// The schemas of the workspace as a source for "Send": asked after server reflection when a request
// names no @schema (the CLI has no such fallback; in the editor it lets requests reach servers that
// have no reflection). As the language server reads them: the `protocall.schemas` entries first
// (descriptor sets, directories, registry modules added with "Add Registry Module…", with the
// editor's registry sign-ins), then the build of the open folders' .proto files. Opened lazily on the
// first look-up, once per change of the workspace's .proto files or those settings, with the compiler
// the language server uses (workspaceBuildOptions); never in an untrusted workspace.
//
// Each call takes a lease on the schemas of the moment (sources()); a change makes the next calls
// open new ones, and the old ones are closed once the last call that holds them has ended, so a
// setting changed or a .proto file saved while a request runs does not close its schema under it.
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
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
    const source: SchemaSource = {
      label: "the workspace's schemas",
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
   * Opens the settings' schemas and builds every root of the folders, once (a failed build is tried
   * again at the next look-up). A settings schema that cannot be opened is skipped, with a warning in
   * the output: the language server shows it in the Services view.
   */
  private open(): Promise<SchemaSource[]> {
    this.opened ??= (async () => {
      const [{ findWorkspaceRoots }, { openSchema, schemaLocation }] = await Promise.all([
        import("../../core/schema/workspace"),
        import("../../core/schema/open-schema"),
      ]);
      const out: SchemaSource[] = [];
      const registries = this.schemas.length > 0 ? await this.ctx.registryAccess() : undefined;
      for (const spec of this.schemas) {
        try {
          out.push(
            await openSchema(schemaLocation(this.baseDir, spec), {
              cwd: this.baseDir,
              stdin: process.stdin,
              ...this.build,
              registryTokens: registries?.tokens,
              registryCas: registries?.cas,
            }),
          );
        } catch (err) {
          this.ctx.log.warn(`The schema ${spec} of protocall.schemas cannot be opened: ${errorMessage(err)}`);
          this.retry = true;
        }
      }
      for (const folder of this.folders) {
        for (const root of await findWorkspaceRoots(folder)) {
          try {
            out.push(await openSchema(root, { cwd: folder, stdin: process.stdin, ...this.build }));
          } catch (err) {
            this.ctx.log.warn(`The workspace build of ${root} failed: ${errorMessage(err)}`);
            for (const s of out) void s.close().catch(() => {});
            throw err instanceof ProtocallError
              ? err
              : new ProtocallError(`the workspace build of ${root} failed: ${errorMessage(err)}`);
          }
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
