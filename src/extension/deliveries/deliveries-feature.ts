// The Deliveries view: the local webhook listener running in the extension host (start/stop from the
// view's title and the status bar), the events it received (newest first, opened as read-only JSON),
// and their actions: replay, copy as JSON, export, clear, and a synthetic test push. The running
// listener is published on the context's listener handle for the other parts. The commands are
// listed in ../command-table.ts; each shows a failure as a notification instead of throwing.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { JsonValue } from "@bufbuild/protobuf";
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
import { type ExportFormat, exportDeliveries } from "../../core/webhooks/delivery-export";
import { deliveryDocument } from "../../core/webhooks/delivery-summary";
import { inertText } from "../../core/webhooks/inert-text";
import { ListenerSession, type SendOutcome } from "../../core/webhooks/listener-session";
import type { ProtocallContext } from "../context";
import type { ListenerInfo } from "../listener-handle";
import { guarded, itemId } from "../view-commands";
import type { DeliveriesApi, ReplayTarget } from "./api";
import { DeliveriesTree, type DeliveryNode } from "./deliveries-tree";
import { DeliveryDocumentProvider, deliveryScheme, deliveryUri } from "./delivery-document";
import { ListenerStatusBar } from "./listener-status-bar";
import { pickExportFile, pickExportFormat, pickReplayTarget } from "./prompts";

export type { DeliveriesApi, ReplayTarget } from "./api";

function describe(o: SendOutcome): string {
  const body = o.body.trim();
  const excerpt = o.status !== 200 && body ? `: ${body.length > 200 ? `${body.slice(0, 199)}…` : body}` : "";
  return `HTTP ${o.status} in ${o.latencyMs} ms${excerpt}`;
}

function showOutcome(what: string, o: SendOutcome): void {
  const text = inertText(`${what} ${o.to}: ${describe(o)}`);
  if (o.status === 200) void vscode.window.showInformationMessage(text);
  else void vscode.window.showWarningMessage(text);
}

export class DeliveriesFeature {
  readonly api: DeliveriesApi;
  private readonly session: ListenerSession;
  private readonly tree: DeliveriesTree;
  private readonly statusBar: ListenerStatusBar;
  private readonly treeView: vscode.TreeView<DeliveryNode>;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly docChanged = new vscode.EventEmitter<vscode.Uri>();
  private runningContext = false;
  private loaded: Promise<void> | undefined;
  private pending: NodeJS.Timeout | undefined;
  private lastShown = 0;
  /** The store damage last reported in a notification (each warning is shown once). */
  private warned: string | undefined;

  constructor(private readonly ctx: ProtocallContext) {
    this.session = new ListenerSession({
      storeFile: join(ctx.workspaceStoragePath, "deliveries.store"),
      certDir: ctx.globalStoragePath,
      certificate: () => ctx.listener.certificate(),
      env: () => ctx.settings.connectionEnv(),
    });
    this.tree = new DeliveriesTree(this.session);
    this.statusBar = new ListenerStatusBar(this.session);
    this.treeView = vscode.window.createTreeView("protocall.deliveries", { treeDataProvider: this.tree });
    const unsubscribe = this.session.onDidChange((change) => this.onSessionChange(change));
    ctx.subscriptions.push(
      this.treeView,
      this.tree,
      this.statusBar,
      this.changed,
      this.docChanged,
      vscode.workspace.registerTextDocumentContentProvider(
        deliveryScheme,
        new DeliveryDocumentProvider(this.session, this.docChanged.event),
      ),
      this.treeView.onDidChangeVisibility((e) => {
        if (e.visible) this.reveal();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => void this.onConfigurationChange(e)),
      {
        dispose: () => {
          unsubscribe();
          if (this.pending) clearTimeout(this.pending);
          ctx.listener.set(undefined);
          void this.session.dispose();
        },
      },
    );
    this.setRunningContext(false);
    // Activated by opening the view: it is visible already, so no visibility change will tell.
    if (this.treeView.visible) this.reveal();
    this.api = this.createApi();
  }

  // ---- commands ----

  /** protocall.deliveries.startListener. */
  startListenerCommand(): Promise<ListenerInfo | undefined> {
    return this.guard("Start listener", async () => {
      const info = await this.startListener();
      void vscode.window
        .showInformationMessage(`Protocall listener on ${info.callbackUrl}`, "Copy Callback URL")
        .then((pick) => {
          if (pick) void vscode.env.clipboard.writeText(info.callbackUrl);
        });
      return info;
    });
  }

  /** protocall.deliveries.stopListener. */
  stopListenerCommand(): Promise<void> {
    return this.guard("Stop listener", () => this.stopListener());
  }

  /** protocall.deliveries.toggleListener (the status bar item). */
  toggleListener(): Promise<ListenerInfo | undefined> {
    return this.guard("Start or stop listener", async () => {
      if (!this.session.running) return this.startListener();
      await this.stopListener();
      return undefined;
    });
  }

  /** protocall.deliveries.refresh: reads the store again (unless the listener is writing it). */
  async refresh(): Promise<void> {
    this.loaded = undefined;
    if (!this.session.running) await this.load();
    this.tree.refresh();
    this.updateViewText();
  }

  /** protocall.deliveries.open: a delivery's click. */
  open(arg?: unknown): Promise<vscode.TextDocument | undefined> {
    return this.guard("Open delivery", () => this.api.open(this.selectedId(arg, "open")));
  }

  /** protocall.deliveries.replay: to `to`, else where the user picks. */
  replay(arg?: unknown, to?: ReplayTarget): Promise<SendOutcome | undefined> {
    return this.guard("Replay delivery", async () => {
      const id = this.selectedId(arg, "replay");
      const target = to ?? (await this.askReplayTarget(id));
      if (!target) return undefined;
      const outcome = await this.api.replay(id, target);
      showOutcome(`Delivery #${id} replayed to`, outcome);
      return outcome;
    });
  }

  /** protocall.deliveries.copyJson. */
  copyJson(arg?: unknown): Promise<string | undefined> {
    return this.guard("Copy delivery", async () => {
      const id = this.selectedId(arg, "copy");
      const text = await this.api.copyJson(id);
      vscode.window.setStatusBarMessage(`Delivery #${id} copied as JSON`, 3000);
      return text;
    });
  }

  /** protocall.deliveries.export: to `uri` in `format`, else where and how the user picks. */
  export(
    uri?: vscode.Uri,
    format?: ExportFormat,
  ): Promise<{ uri: vscode.Uri; format: ExportFormat; count: number } | undefined> {
    return this.guard("Export deliveries", async () => {
      const fmt = await pickExportFormat(format);
      if (!fmt) return undefined;
      const target = await pickExportFile(fmt, uri);
      if (!target) return undefined;
      const count = await this.api.exportTo(target, fmt);
      void vscode.window.showInformationMessage(
        `Exported ${count} deliver${count === 1 ? "y" : "ies"} to ${target.fsPath}`,
      );
      return { uri: target, format: fmt, count };
    });
  }

  /** protocall.deliveries.clear: after the user confirms. */
  clear(): Promise<boolean | undefined> {
    return this.guard("Clear deliveries", async () => {
      await this.load();
      const count = this.session.count();
      const pick = await vscode.window.showWarningMessage(
        `Delete all ${count} deliver${count === 1 ? "y" : "ies"} from the store?`,
        { modal: true, detail: "They cannot be restored. Export them first to keep a copy." },
        "Clear",
      );
      if (pick !== "Clear") return false;
      await this.api.clear();
      return true;
    });
  }

  /** protocall.webhooks.sendTestPush. */
  sendTestPush(event?: JsonValue, to?: unknown): Promise<SendOutcome | undefined> {
    return this.guard("Send test push", async () => {
      const outcome = await this.api.sendTestPush(event, typeof to === "string" ? to : undefined);
      showOutcome("Test push sent to", outcome);
      return outcome;
    });
  }

  // ---- the listener and the view ----

  private createApi(): DeliveriesApi {
    const session = this.session;
    return {
      listener: () => this.ctx.listener.current,
      startListener: () => this.startListener(),
      stopListener: () => this.stopListener(),
      listenerRunningContext: () => this.runningContext,
      statusBar: () => ({
        text: this.statusBar.text,
        tooltip: this.statusBar.tooltip,
        visible: this.statusBar.visible,
      }),
      items: () => this.tree.views(),
      count: () => session.count(),
      viewMessage: () => this.treeView.message,
      storeFile: () => session.storeFile,
      open: async (id) => {
        await this.load();
        const doc = await vscode.workspace.openTextDocument(deliveryUri(id));
        await vscode.window.showTextDocument(doc, { preview: true });
        return doc;
      },
      replay: async (id, to) => {
        await this.load();
        const url = await this.targetUrl(id, to);
        const outcome = await session.replay(id, url);
        this.ctx.log.info(`Replayed delivery #${id} to ${url}: ${describe(outcome)}`);
        return outcome;
      },
      copyJson: (id) => this.copyDelivery(id),
      exportTo: async (uri, format) => {
        await this.load();
        const all = await session.all();
        await vscode.workspace.fs.writeFile(uri, Buffer.from(exportDeliveries(all, format), "utf8"));
        this.ctx.log.info(`Exported ${all.length} deliveries to ${uri.fsPath}`);
        return all.length;
      },
      clear: async () => {
        await this.load();
        await session.clear();
        this.ctx.log.info("Deliveries cleared");
      },
      sendTestPush: async (event, to) => {
        await this.load();
        if (!to && !session.running) await this.startListener();
        const outcome = await session.sendTest(event, to);
        this.ctx.log.info(`Test push sent to ${outcome.to}: ${describe(outcome)}`);
        return outcome;
      },
      onDidChange: this.changed.event,
    };
  }

  private async startListener(): Promise<ListenerInfo> {
    mkdirSync(this.ctx.globalStoragePath, { recursive: true });
    mkdirSync(this.ctx.workspaceStoragePath, { recursive: true });
    await this.load();
    const info = await this.session.start(this.ctx.settings.listener());
    const certificate = info.fingerprint
      ? ` (certificate ${info.certPath}, SHA-256 ${info.fingerprint})`
      : "";
    this.ctx.log.info(
      `Listener started on ${info.callbackUrl}${certificate}; storing deliveries in ${info.storeFile}`,
    );
    return info;
  }

  private async stopListener(): Promise<void> {
    if (!this.session.running) return;
    await this.session.stop();
    this.ctx.log.info("Listener stopped");
  }

  private async copyDelivery(id: number): Promise<string> {
    await this.load();
    const d = await this.session.get(id);
    if (!d) throw new ProtocallError(`no delivery #${id} in the store: it was cleared or pruned`);
    const text = `${JSON.stringify(deliveryDocument(d), null, 2)}\n`;
    // Not awaited: in a browser-hosted editor the clipboard may answer only once the page has focus.
    vscode.env.clipboard.writeText(text).then(undefined, (err: unknown) => {
      this.ctx.log.warn(`Cannot write to the clipboard: ${errorMessage(err)}`);
    });
    return text;
  }

  /** The URL a replay goes to. */
  private async targetUrl(id: number, to: ReplayTarget): Promise<string> {
    if (to === "listener") return (this.session.running ?? (await this.startListener())).callbackUrl;
    if (to !== "forward") return to;
    const url = this.ctx.settings.listener().forwardTo ?? (await this.session.get(id))?.forward?.url;
    if (!url) {
      throw new ProtocallError(
        "there is no forward URL: set protocall.listener.forwardTo to your backend's URL, or replay to another URL",
      );
    }
    return url;
  }

  private async askReplayTarget(id: number): Promise<string | undefined> {
    const forward = this.ctx.settings.listener().forwardTo ?? (await this.session.get(id))?.forward?.url;
    return pickReplayTarget(id, this.session.running?.callbackUrl, forward);
  }

  /** The delivery a command is about: its argument (a node or an id), else the view's selection. */
  private selectedId(arg: unknown, what: string): number {
    return itemId(arg, this.treeView.selection, `select a delivery in the Deliveries view to ${what} it`);
  }

  private guard<R>(what: string, work: () => Promise<R>): Promise<R | undefined> {
    return guarded(this.ctx.log, what, work);
  }

  /** Reads what earlier runs stored, once (not at activation: the view or a command asks for it). */
  private load(): Promise<void> {
    this.loaded ??= this.session.load().catch((err: unknown) => {
      this.ctx.log.warn(`Cannot read the deliveries store ${this.session.storeFile}: ${errorMessage(err)}`);
    });
    return this.loaded;
  }

  /** The view became visible: the status bar item stays from now on, and the deliveries show. */
  private reveal(): void {
    this.statusBar.reveal();
    void this.load().then(() => this.showDeliveries());
  }

  private async onConfigurationChange(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!this.ctx.settings.affects(e, "listener") || !this.session.running) return;
    const pick = await vscode.window.showInformationMessage(
      "The listener settings changed: restart the listener to apply them.",
      "Restart Listener",
    );
    if (pick !== "Restart Listener") return;
    await this.guard("Restart listener", async () => {
      await this.stopListener();
      return this.startListener();
    });
  }

  /**
   * The listener started or stopped: shown at once. Deliveries can arrive by thousands a second: the
   * view follows 100 ms after a delivery, and at most twice a second while they keep coming (each
   * refresh sends up to 1,000 items to the view).
   */
  private onSessionChange(change: string): void {
    if (change === "listener") {
      const running = this.session.running;
      this.setRunningContext(running !== undefined);
      this.ctx.listener.set(running);
      if (this.pending) clearTimeout(this.pending);
      this.pending = undefined;
      this.showDeliveries();
      return;
    }
    this.pending ??= setTimeout(
      () => {
        this.pending = undefined;
        this.lastShown = performance.now();
        this.showDeliveries();
      },
      performance.now() - this.lastShown < 1000 ? 500 : 100,
    );
  }

  /** Everything shown about the deliveries, brought up to date (the view, open documents, status). */
  private showDeliveries(): void {
    this.tree.refresh();
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === deliveryScheme) this.docChanged.fire(doc.uri);
    }
    this.updateViewText();
    this.changed.fire();
  }

  private updateViewText(): void {
    const running = this.session.running;
    this.treeView.description = running ? running.url.replace(/^https?:\/\//, "") : undefined;
    const shown = this.session.deliveries().length;
    const total = this.session.count();
    // A running listener with no deliveries shows the view's welcome (with its Send Test Push
    // button): a message would hide it. The address is in the status bar. A damaged store is always
    // said, first: deliveries were skipped, and the user should know which.
    const warning = this.session.storeWarning;
    const lines = [
      ...(warning ? [`⚠ ${warning}`] : []),
      ...(total > shown
        ? [`Showing the newest ${shown} of ${total} deliveries; export them to see all.`]
        : []),
    ];
    this.treeView.message = lines.length > 0 ? lines.join("\n") : undefined;
    this.statusBar.update();
    if (warning && warning !== this.warned) {
      this.warned = warning;
      this.ctx.log.warn(warning);
      void vscode.window.showWarningMessage(inertText(warning));
    }
  }

  private setRunningContext(value: boolean): void {
    this.runningContext = value;
    void vscode.commands.executeCommand("setContext", "protocall.listenerRunning", value);
  }
}
