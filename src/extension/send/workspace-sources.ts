// The workspace build as a schema source for "Send": asked after server reflection when a request
// names no @schema (the CLI has no such fallback; in the editor it lets requests reach servers that
// have no reflection, using the .proto files of the open folders). Built lazily on the first
// look-up, once per change of the workspace's .proto files; never in an untrusted workspace.
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
import type { SchemaSource } from "../../core/schema/types";
import type { ProtocallContext } from "../context";

type Found = Awaited<ReturnType<SchemaSource["findType"]>>;

/** The compiler settings a workspace build uses. */
interface BuildSettings {
  bufPath?: string;
}

export class WorkspaceSources implements vscode.Disposable {
  private source: SchemaSource | undefined;
  private opened: Promise<SchemaSource[]> | undefined;

  constructor(private readonly ctx: ProtocallContext) {}

  /** The fallback sources for the current settings (empty when the workspace is untrusted). */
  sources(): readonly SchemaSource[] {
    const read = this.ctx.settings.reader();
    if (!vscode.workspace.isTrusted || !read("workspaceBuild")) return [];
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length === 0) return [];
    this.source ??= this.lazySource(
      folders.map((f) => f.uri.fsPath),
      { bufPath: read("bufPath") || undefined },
    );
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
  private open(folders: string[], build: BuildSettings): Promise<SchemaSource[]> {
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

  private lazySource(folders: string[], build: BuildSettings): SchemaSource {
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
