// The schemas of the workspace as a source for "Send": asked after server reflection when a request
// names no @schema (the CLI has no such fallback; in the editor it lets requests reach servers that
// have no reflection). As the language server reads them: the `protocall.schemas` entries first
// (descriptor sets, directories, registry modules added with "Add Registry Module…", with the
// editor's registry sign-ins), then the build of the open folders' .proto files. Opened lazily on the
// first look-up, once per change of the workspace's .proto files or those settings, with the compiler
// the language server uses (workspaceBuildOptions); never in an untrusted workspace.
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
import { settingsKey } from "../../core/invoke/settings-key";
import type { SchemaSource } from "../../core/schema/types";
import { type WorkspaceBuildOptions, workspaceBuildOptions } from "../../core/schema/workspace-build-options";
import type { ProtocallContext } from "../context";

type Found = Awaited<ReturnType<SchemaSource["findType"]>>;

export class WorkspaceSources implements vscode.Disposable {
  private source: SchemaSource | undefined;
  private key: string | undefined;
  private opened: Promise<SchemaSource[]> | undefined;
  /** A settings schema could not be opened (a registry not signed in to yet): open again next time. */
  private retry = false;

  constructor(private readonly ctx: ProtocallContext) {}

  /** The fallback sources for the current settings (empty when the workspace is untrusted). */
  sources(): readonly SchemaSource[] {
    if (!vscode.workspace.isTrusted) return [];
    const settings = this.ctx.settings.server();
    const schemas = settings.schemas;
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const buildFolders = settings.workspaceBuild ? folders : [];
    if (schemas.length === 0 && buildFolders.length === 0) return [];
    const build = workspaceBuildOptions(settings);
    // Made from the settings' schemas, the folders and the compiler settings: another of any, anew.
    const key = settingsKey({ schemas, folders: buildFolders, build });
    if (key !== this.key || this.retry) this.invalidate();
    this.retry = false;
    this.key = key;
    this.source ??= this.lazySource(schemas, folders[0] ?? process.cwd(), buildFolders, build);
    return [this.source];
  }

  /** Forgets the build (the .proto files or settings changed); the next look-up builds again. */
  invalidate(): void {
    const opened = this.opened;
    this.source = undefined;
    this.opened = undefined;
    void opened?.then((all) => Promise.allSettled(all.map((s) => s.close()))).catch(() => {});
  }

  dispose(): void {
    this.invalidate();
  }

  /**
   * Opens the settings' schemas and builds every root of the folders, once (a failed build is tried
   * again at the next look-up). A settings schema that cannot be opened is skipped, with a warning in
   * the output: the language server shows it in the Services view.
   */
  private open(
    schemas: readonly string[],
    baseDir: string,
    folders: string[],
    build: WorkspaceBuildOptions,
  ): Promise<SchemaSource[]> {
    this.opened ??= (async () => {
      const [{ findWorkspaceRoots }, { openSchema, schemaLocation }] = await Promise.all([
        import("../../core/schema/workspace"),
        import("../../core/schema/open-schema"),
      ]);
      const out: SchemaSource[] = [];
      const registries = schemas.length > 0 ? await this.ctx.registryAccess() : undefined;
      for (const spec of schemas) {
        try {
          out.push(
            await openSchema(schemaLocation(baseDir, spec), {
              cwd: baseDir,
              stdin: process.stdin,
              ...build,
              registryTokens: registries?.tokens,
              registryCas: registries?.cas,
            }),
          );
        } catch (err) {
          this.ctx.log.warn(`The schema ${spec} of protocall.schemas cannot be opened: ${errorMessage(err)}`);
          this.retry = true;
        }
      }
      for (const folder of folders) {
        for (const root of await findWorkspaceRoots(folder)) {
          try {
            out.push(await openSchema(root, { cwd: folder, stdin: process.stdin, ...build }));
          } catch (err) {
            this.ctx.log.warn(`The workspace build of ${root} failed: ${errorMessage(err)}`);
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

  private lazySource(
    schemas: readonly string[],
    baseDir: string,
    folders: string[],
    build: WorkspaceBuildOptions,
  ): SchemaSource {
    const open = () => this.open(schemas, baseDir, folders, build);
    return {
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
  }
}
