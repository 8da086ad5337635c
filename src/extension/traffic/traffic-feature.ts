// The Traffic view: `protocall proxy` inside the editor. "Start Proxy…" (on a server of the
// Services view, or from the view's title) runs the core proxy session in front of that server; each
// call that passes shows live with its status and timing, opens as a read-only document (headers,
// each message with its time, trailers), and can be saved as a request or a mock stub, or replayed.
// The commands are listed in ../command-table.ts; each shows a failure as a notification.
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
import { type ProxiedCall, readCalls } from "../../core/proxy/call-store";
import { exportCall } from "../../core/proxy/export-call";
import type { ProxySession } from "../../core/proxy/proxy-session";
import { inertText } from "../../core/webhooks/inert-text";
import type { ProtocallContext } from "../context";
import type { ServicesElement } from "../services/tree";
import { guarded, itemId } from "../view-commands";
import type { ProxyInfo, TrafficApi } from "./api";
import { callUri, TrafficDocumentProvider, trafficScheme } from "./traffic-document";
import { type CallNode, TrafficTree } from "./traffic-tree";

export type { TrafficApi } from "./api";

/** The upstream a Start Proxy argument names: a server of the Services view, or a URL. */
function upstreamOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  const e = arg as ServicesElement | undefined;
  if (e?.type === "source" && e.info.kind === "server") return e.server?.url ?? e.info.origin;
  return undefined;
}

export class TrafficFeature {
  readonly api: TrafficApi;
  private session: ProxySession | undefined;
  private info: ProxyInfo | undefined;
  /** The calls of a stopped proxy (read from its store), shown until the next start. */
  private stored: ProxiedCall[] | undefined;
  private readonly tree: TrafficTree;
  private readonly treeView: vscode.TreeView<CallNode>;
  private readonly changed = new vscode.EventEmitter<void>();
  private pending: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: ProtocallContext) {
    this.tree = new TrafficTree(() => this.calls());
    this.treeView = vscode.window.createTreeView("protocall.traffic", { treeDataProvider: this.tree });
    ctx.subscriptions.push(
      this.treeView,
      this.tree,
      this.changed,
      vscode.workspace.registerTextDocumentContentProvider(
        trafficScheme,
        new TrafficDocumentProvider((id) => this.find(id)),
      ),
      {
        dispose: () => {
          if (this.pending) clearTimeout(this.pending);
          void this.session?.close();
        },
      },
    );
    void vscode.commands.executeCommand("setContext", "protocall.proxyRunning", false);
    this.api = this.createApi();
  }

  // ---- commands ----

  /** protocall.traffic.startProxy: in front of a Services view server, a URL, or one the user types. */
  startProxy(arg?: unknown): Promise<ProxyInfo | undefined> {
    return this.guard("Start proxy", async () => {
      const upstream =
        upstreamOf(arg) ??
        (await vscode.window.showInputBox({
          title: "Start Proxy",
          prompt: "The server to pass calls to",
          placeHolder: "http://127.0.0.1:8080",
          value: this.info?.upstream,
        }));
      if (!upstream) return undefined;
      const info = await this.api.startProxy(upstream);
      void vscode.window
        .showInformationMessage(
          inertText(`Protocall proxy on ${info.url} in front of ${info.upstream}: send your requests there.`),
          "Copy URL",
        )
        .then((pick) => {
          if (pick) void vscode.env.clipboard.writeText(info.url);
        });
      return info;
    });
  }

  /** protocall.traffic.stopProxy. */
  stopProxy(): Promise<void> {
    return this.guard("Stop proxy", () => this.api.stopProxy());
  }

  /** protocall.traffic.open: a call's click. */
  open(arg?: unknown): Promise<vscode.TextDocument | undefined> {
    return this.guard("Open call", () => this.api.open(this.selectedId(arg, "open")));
  }

  /** protocall.traffic.saveAsRequest: to `uri`, else a file the user picks. */
  saveAsRequest(arg?: unknown, uri?: vscode.Uri): Promise<string | undefined> {
    return this.guard("Save as request", async () => {
      const id = this.selectedId(arg, "save");
      const target = uri ?? (await this.pickFile("Save as Request", "traffic.rpc"));
      if (!target) return undefined;
      const text = await this.api.saveAsRequest(id, target);
      await vscode.window.showTextDocument(target, { preview: false });
      return text;
    });
  }

  /** protocall.traffic.saveAsStub: to `uri`, else a file the user picks. */
  saveAsStub(arg?: unknown, uri?: vscode.Uri): Promise<string | undefined> {
    return this.guard("Save as mock stub", async () => {
      const id = this.selectedId(arg, "save");
      const call = this.find(id);
      const name = `mocks/${call?.method.replace("/", ".") ?? "stub"}.rpc`;
      const target = uri ?? (await this.pickFile("Save as Mock Stub", name));
      if (!target) return undefined;
      const text = await this.api.saveAsStub(id, target);
      await vscode.window.showTextDocument(target, { preview: false });
      return text;
    });
  }

  /** protocall.traffic.replay: sends the call again and says what differs. */
  replay(arg?: unknown, to?: string) {
    return this.guard("Replay call", async () => {
      const id = this.selectedId(arg, "replay");
      const result = await this.api.replay(id, to);
      if (result.differences.length === 0) {
        void vscode.window.showInformationMessage(
          inertText(`Call #${id} replayed to ${result.url}: the same answer (${result.replayed.status}).`),
        );
      } else {
        this.ctx.log.info(`Call #${id} replayed to ${result.url}:\n  ${result.differences.join("\n  ")}`);
        void vscode.window.showWarningMessage(
          inertText(
            `Call #${id} replayed to ${result.url}: ${result.differences.length} difference(s): ${result.differences.slice(0, 3).join("; ")}`,
          ),
        );
      }
      return result;
    });
  }

  // ---- the proxy and the view ----

  private createApi(): TrafficApi {
    return {
      proxy: () => this.info,
      startProxy: (upstream) => this.start(upstream),
      stopProxy: () => this.stop(),
      items: () => this.tree.views(),
      open: async (id) => {
        const doc = await vscode.workspace.openTextDocument(callUri(id));
        await vscode.window.showTextDocument(doc, { preview: true });
        return doc;
      },
      saveAsRequest: (id, uri) => this.append(uri, exportCall(this.call(id), "rpc")),
      saveAsStub: (id, uri) => this.append(uri, exportCall(this.call(id), "stub")),
      replay: async (id, to) => {
        const { replayCall } = await import("../../core/proxy/replay-call");
        const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? homedir();
        return replayCall(this.call(id), {
          to,
          io: {
            cwd: folder,
            env: this.ctx.settings.connectionEnv(),
            stdin: Readable.from([]),
            stdinIsTTY: false,
            homedir: homedir(),
          },
        });
      },
      onDidChange: this.changed.event,
    };
  }

  private storeFile(): string {
    return join(this.ctx.workspaceStoragePath, "proxy.store");
  }

  private async start(upstream: string): Promise<ProxyInfo> {
    try {
      new URL(upstream);
    } catch {
      throw new ProtocallError(
        `"${upstream}" is not a URL: give the server as http://host:port or https://host:port`,
      );
    }
    if (this.info?.upstream === upstream) return this.info;
    await this.stop();
    mkdirSync(this.ctx.workspaceStoragePath, { recursive: true });
    const { startProxySession } = await import("../../core/proxy/proxy-session");
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? homedir();
    const session = await startProxySession({
      upstream,
      cwd: folder,
      env: this.ctx.settings.connectionEnv(),
      storeFile: this.storeFile(),
      onWarning: (text) => this.ctx.log.warn(`Proxy: ${text}`),
      onCall: (call) => {
        this.ctx.log.info(
          `Proxy: #${call.id} ${call.method} ${call.protocol} ${call.status} ${call.durationMs.toFixed(1)}ms`,
        );
        this.changedSoon();
      },
    });
    this.session = session;
    this.stored = undefined;
    this.info = { url: session.url, upstream, storeFile: this.storeFile() };
    this.ctx.log.info(
      `Proxy started on ${session.url} in front of ${upstream}; calls stored in ${this.storeFile()}`,
    );
    this.showChange();
    return this.info;
  }

  private async stop(): Promise<void> {
    const session = this.session;
    if (!session) return;
    this.stored = [...session.store.calls];
    this.session = undefined;
    this.info = undefined;
    await session.close();
    this.ctx.log.info("Proxy stopped");
    this.showChange();
  }

  /** The calls to show: the running proxy's, else those of the store it left. */
  private calls(): readonly ProxiedCall[] {
    if (this.session) return this.session.store.calls;
    if (!this.stored) {
      try {
        this.stored = existsSync(this.storeFile()) ? readCalls(this.storeFile()) : [];
      } catch (err) {
        this.ctx.log.warn(`Cannot read the proxy's store: ${errorMessage(err)}`);
        this.stored = [];
      }
    }
    return this.stored;
  }

  private find(id: number): ProxiedCall | undefined {
    return this.calls().find((c) => c.id === id);
  }

  private call(id: number): ProxiedCall {
    const call = this.find(id);
    if (!call) throw new ProtocallError(`no call #${id} in the proxy's store: it was pruned`);
    return call;
  }

  /** Appends `text` to the file (created when missing, a blank line before it otherwise). */
  private async append(uri: vscode.Uri, text: string): Promise<string> {
    let before = "";
    try {
      before = Buffer.from(await vscode.workspace.fs.readFile(uri)).toString("utf8");
    } catch {
      // a new file
    }
    const joined = before === "" ? text : `${before.replace(/\n*$/, "\n")}\n${text}`;
    await vscode.workspace.fs.writeFile(uri, Buffer.from(joined, "utf8"));
    return text;
  }

  private async pickFile(title: string, name: string): Promise<vscode.Uri | undefined> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    return vscode.window.showSaveDialog({
      title,
      defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
      filters: { "Request files": ["rpc"] },
    });
  }

  /** The call a command is about: its argument (a node or an id), else the view's selection. */
  private selectedId(arg: unknown, what: string): number {
    return itemId(arg, this.treeView.selection, `select a call in the Traffic view to ${what} it`);
  }

  private guard<R>(what: string, work: () => Promise<R>): Promise<R | undefined> {
    return guarded(this.ctx.log, what, work);
  }

  /** Calls can arrive by thousands a second: the view follows at most ten times a second. */
  private changedSoon(): void {
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      this.showChange();
    }, 100);
  }

  private showChange(): void {
    this.tree.refresh();
    this.treeView.description = this.info
      ? `${this.info.url.replace(/^https?:\/\//, "")} → ${this.info.upstream}`
      : undefined;
    void vscode.commands.executeCommand("setContext", "protocall.proxyRunning", this.info !== undefined);
    this.changed.fire();
  }
}
