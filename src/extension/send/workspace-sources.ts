// The workspace build as a schema source for "Send": asked after server reflection when a request
// names no @schema (the CLI has no such fallback; in the editor it lets requests reach servers that
// have no reflection, using the .proto files of the open folders). Built lazily on the first
// look-up, once per change of the workspace's .proto files or the compiler settings, with the
// compiler the language server uses (the same settings, through workspaceBuildOptions); never in an
// untrusted workspace.
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

  constructor(private readonly ctx: ProtocallContext) {}

  /** The fallback sources for the current settings (empty when the workspace is untrusted). */
  sources(): readonly SchemaSource[] {
    const settings = this.ctx.settings.server();
    if (!settings.workspaceBuild) return [];
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    if (folders.length === 0) return [];
    const build = workspaceBuildOptions(settings);
    // A build is made from the folders and the compiler settings: another of either, another build.
    const key = settingsKey({ folders, build });
    if (key !== this.key) this.invalidate();
    this.key = key;
    this.source ??= this.lazySource(folders, build);
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

  /** Builds every root of the folders, once (a failed build is tried again at the next look-up). */
  private open(folders: string[], build: WorkspaceBuildOptions): Promise<SchemaSource[]> {
    this.opened ??= (async () => {
      const [{ findWorkspaceRoots }, { openSchema }] = await Promise.all([
        import("../../core/schema/workspace"),
        import("../../core/schema/open-schema"),
      ]);
      const out: SchemaSource[] = [];
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

  private lazySource(folders: string[], build: WorkspaceBuildOptions): SchemaSource {
    const open = () => this.open(folders, build);
    return {
      label: "workspace build",
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
