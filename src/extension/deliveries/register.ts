// The Deliveries view: the local webhook listener running in the extension host (start/stop from the
// view's title and the status bar), the events it received (newest first, opened as read-only JSON),
// and their actions: replay, copy as JSON, export, clear, and a synthetic test push.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { JsonValue } from "@bufbuild/protobuf";
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
import { type ExportFormat, exportDeliveries } from "../../core/webhooks/delivery-export";
import { deliveryDocument } from "../../core/webhooks/delivery-summary";
import { inertText } from "../../core/webhooks/inert-text";
import { ListenerSession, type SendOutcome } from "../../core/webhooks/listener-session";
import type { ExtensionShared } from "../shared";
import { DeliveriesTree, type DeliveryItemView, type DeliveryNode } from "./deliveries-tree";
import { DeliveryDocumentProvider, deliveryScheme, deliveryUri } from "./delivery-document";
import { listenerSettings } from "./listener-config";
import {
  currentListener,
  type ListenerInfo,
  listenerCertificate,
  setCurrentListener,
  setListenerCertificateDir,
} from "./listener-state";
import { ListenerStatusBar } from "./listener-status-bar";

/** Where a replay goes: the running listener, the forward URL, or any http(s) URL. */
export type ReplayTarget = "listener" | "forward" | string;

/**
 * The Deliveries part's API (activate().deliveries). Methods throw on failure (ProtocallError with the
 * fix); the commands wrap them with dialogs and show errors as notifications.
 */
export interface DeliveriesApi {
  /** The running listener, or undefined. */
  listener(): ListenerInfo | undefined;
  /** Starts the listener with the protocall.listener.* settings (or returns the running one). */
  startListener(): Promise<ListenerInfo>;
  stopListener(): Promise<void>;
  /** The value last given to the `protocall.listenerRunning` context key. */
  listenerRunningContext(): boolean;
  /** The status bar item as shown. */
  statusBar(): { text: string; tooltip: string; visible: boolean };
  /** The Deliveries view's items, as shown (newest first). */
  items(): DeliveryItemView[];
  /** Number of deliveries in the store. */
  count(): number;
  /** Opens delivery `id` as a read-only JSON document (what clicking it does). */
  open(id: number): Promise<vscode.TextDocument>;
  /** Sends delivery `id` again, byte for byte, and returns the answer. */
  replay(id: number, to: ReplayTarget): Promise<SendOutcome>;
  /** The JSON "Copy as JSON" puts on the clipboard (it also puts it there). */
  copyJson(id: number): Promise<string>;
  /** Writes every stored delivery (oldest first) to `uri`; returns how many. */
  exportTo(uri: vscode.Uri, format: ExportFormat): Promise<number>;
  /** Removes every delivery from the store, without asking. */
  clear(): Promise<void>;
  /**
   * Sends a synthetic push (or `event`, an EventRequest as protobuf JSON) to `to`, by default the
   * running listener (started first if needed).
   */
  sendTestPush(event?: JsonValue, to?: string): Promise<SendOutcome>;
  /** Fires when the listener starts or stops, or deliveries change. */
  readonly onDidChange: vscode.Event<void>;
}

function nodeId(arg: unknown): number | undefined {
  if (typeof arg === "number") return arg;
  if (arg && typeof arg === "object" && typeof (arg as DeliveryNode).id === "number")
    return (arg as DeliveryNode).id;
  return undefined;
}

function describe(o: SendOutcome): string {
  const body = o.body.trim();
  const excerpt = o.status !== 200 && body ? `: ${body.length > 200 ? `${body.slice(0, 199)}…` : body}` : "";
  return `HTTP ${o.status} in ${o.latencyMs} ms${excerpt}`;
}

export function registerDeliveries(shared: ExtensionShared): DeliveriesApi {
  const { context, log } = shared;
  const certDir = context.globalStorageUri.fsPath;
  const storeDir = (context.storageUri ?? context.globalStorageUri).fsPath;
  setListenerCertificateDir(certDir);
  const session = new ListenerSession({
    storeFile: join(storeDir, "deliveries.store"),
    certDir,
    certificate: listenerCertificate,
  });
  const tree = new DeliveriesTree(session);
  const statusBar = new ListenerStatusBar(session);
  const changed = new vscode.EventEmitter<void>();
  const docChanged = new vscode.EventEmitter<vscode.Uri>();
  const documents = new DeliveryDocumentProvider(session, docChanged.event);
  let runningContext = false;
  let loaded: Promise<void> | undefined;

  const treeView = vscode.window.createTreeView("protocall.deliveries", { treeDataProvider: tree });

  const ensureDirs = () => {
    mkdirSync(certDir, { recursive: true });
    mkdirSync(storeDir, { recursive: true });
  };

  /** Reads what earlier runs stored, once (not at activation: the view or a command asks for it). */
  const load = (): Promise<void> => {
    loaded ??= session.load().catch((err: unknown) => {
      log.warn(`Cannot read the deliveries store ${session.storeFile}: ${errorMessage(err)}`);
    });
    return loaded;
  };

  const updateViewText = () => {
    const running = session.running;
    treeView.description = running ? running.url.replace(/^https?:\/\//, "") : undefined;
    const shown = session.deliveries().length;
    const total = session.count();
    // A running listener with no deliveries shows the view's welcome (with its Send Test Push
    // button): a message would hide it. The address is in the status bar.
    if (total > shown) {
      treeView.message = `Showing the newest ${shown} of ${total} deliveries; export them to see all.`;
    } else {
      treeView.message = undefined;
    }
    statusBar.update();
  };

  const setRunningContext = (value: boolean) => {
    runningContext = value;
    void vscode.commands.executeCommand("setContext", "protocall.listenerRunning", value);
  };

  /** Everything shown about the deliveries, brought up to date (the view, open documents, status). */
  const showDeliveries = () => {
    tree.refresh();
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === deliveryScheme) docChanged.fire(doc.uri);
    }
    updateViewText();
    changed.fire();
  };
  // Deliveries can arrive by thousands a second: the view follows 100 ms after a delivery, and at
  // most twice a second while they keep coming (each refresh sends up to 1,000 items to the view).
  let pending: NodeJS.Timeout | undefined;
  let lastShown = 0;
  const unsubscribe = session.onDidChange((change) => {
    if (change === "listener") {
      const running = session.running;
      setRunningContext(running !== undefined);
      setCurrentListener(running);
      if (pending) clearTimeout(pending);
      pending = undefined;
      showDeliveries();
    } else {
      pending ??= setTimeout(
        () => {
          pending = undefined;
          lastShown = performance.now();
          showDeliveries();
        },
        performance.now() - lastShown < 1000 ? 500 : 100,
      );
    }
  });
  setRunningContext(false);
  if (treeView.visible) {
    // Activated by opening the view: it is visible already, so no visibility change will tell.
    statusBar.reveal();
    void load().then(showDeliveries);
  }

  const startListener = async (): Promise<ListenerInfo> => {
    ensureDirs();
    await load();
    const info = await session.start(listenerSettings());
    log.info(
      `Listener started on ${info.callbackUrl}${info.fingerprint ? ` (certificate ${info.certPath}, SHA-256 ${info.fingerprint})` : ""}; storing deliveries in ${info.storeFile}`,
    );
    return info;
  };

  const stopListener = async (): Promise<void> => {
    if (!session.running) return;
    await session.stop();
    log.info("Listener stopped");
  };

  const targetUrl = async (id: number, to: ReplayTarget): Promise<string> => {
    if (to === "listener") return (session.running ?? (await startListener())).callbackUrl;
    if (to === "forward") {
      const configured = listenerSettings().forwardTo;
      const url = configured ?? (await session.get(id))?.forward?.url;
      if (!url) {
        throw new ProtocallError(
          "there is no forward URL: set protocall.listener.forwardTo to your backend's URL, or replay to another URL",
        );
      }
      return url;
    }
    return to;
  };

  const api: DeliveriesApi = {
    listener: () => currentListener(),
    startListener,
    stopListener,
    listenerRunningContext: () => runningContext,
    statusBar: () => ({ text: statusBar.text, tooltip: statusBar.tooltip, visible: statusBar.visible }),
    items: () => tree.views(),
    count: () => session.count(),
    async open(id) {
      await load();
      const doc = await vscode.workspace.openTextDocument(deliveryUri(id));
      await vscode.window.showTextDocument(doc, { preview: true });
      return doc;
    },
    async replay(id, to) {
      await load();
      const url = await targetUrl(id, to);
      const outcome = await session.replay(id, url);
      log.info(`Replayed delivery #${id} to ${url}: ${describe(outcome)}`);
      return outcome;
    },
    async copyJson(id) {
      await load();
      const d = await session.get(id);
      if (!d) throw new ProtocallError(`no delivery #${id} in the store: it was cleared or pruned`);
      const text = `${JSON.stringify(deliveryDocument(d), null, 2)}\n`;
      // Not awaited: in a browser-hosted editor the clipboard may answer only once the page has focus.
      vscode.env.clipboard.writeText(text).then(undefined, (err: unknown) => {
        log.warn(`Cannot write to the clipboard: ${errorMessage(err)}`);
      });
      return text;
    },
    async exportTo(uri, format) {
      await load();
      const all = await session.all();
      await vscode.workspace.fs.writeFile(uri, Buffer.from(exportDeliveries(all, format), "utf8"));
      log.info(`Exported ${all.length} deliveries to ${uri.fsPath}`);
      return all.length;
    },
    async clear() {
      await load();
      await session.clear();
      log.info("Deliveries cleared");
    },
    async sendTestPush(event, to) {
      await load();
      if (!to && !session.running) await startListener();
      const outcome = await session.sendTest(event, to);
      log.info(`Test push sent to ${outcome.to}: ${describe(outcome)}`);
      return outcome;
    },
    onDidChange: changed.event,
  };

  /** Runs a command's work; a failure becomes an error notification (text kept inert), not a throw. */
  const guarded =
    <A extends unknown[], R>(what: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R | undefined> => {
      try {
        return await fn(...args);
      } catch (err) {
        log.error(`${what}: ${errorMessage(err)}`);
        void vscode.window.showErrorMessage(inertText(errorMessage(err)));
        return undefined;
      }
    };

  const selectedId = (arg: unknown): number | undefined => nodeId(arg) ?? treeView.selection[0]?.id;

  const pickReplayTarget = async (id: number): Promise<string | undefined> => {
    type Item = vscode.QuickPickItem & { target: "listener" | "forward" | "other" };
    const running = session.running;
    const forward = listenerSettings().forwardTo ?? (await session.get(id))?.forward?.url;
    const items: Item[] = [
      {
        label: "$(radio-tower) To the listener",
        detail: running ? running.callbackUrl : "Starts the listener first",
        target: "listener",
      },
      ...(forward
        ? [
            {
              label: "$(arrow-right) To the forward URL",
              detail: inertText(forward),
              target: "forward" as const,
            },
          ]
        : []),
      { label: "$(globe) To another URL…", target: "other" },
    ];
    const pick = await vscode.window.showQuickPick(items, { title: `Replay delivery #${id}` });
    if (!pick) return undefined;
    if (pick.target !== "other") return pick.target;
    return vscode.window.showInputBox({
      title: `Replay delivery #${id} to`,
      prompt: "The URL to POST the delivery to (Connect unary, its original bytes)",
      placeHolder: "https://localhost:8080/buf.alpha.webhook.v1alpha1.EventService/Event",
      ignoreFocusOut: true,
      validateInput: (value) => {
        try {
          const u = new URL(value.trim());
          return u.protocol === "http:" || u.protocol === "https:"
            ? undefined
            : "Use an http:// or https:// URL";
        } catch {
          return "Enter a URL, e.g. https://localhost:8080/hook";
        }
      },
    });
  };

  const showOutcome = (what: string, o: SendOutcome) => {
    const text = inertText(`${what} ${o.to}: ${describe(o)}`);
    if (o.status === 200) void vscode.window.showInformationMessage(text);
    else void vscode.window.showWarningMessage(text);
  };

  context.subscriptions.push(
    treeView,
    tree,
    statusBar,
    changed,
    docChanged,
    vscode.workspace.registerTextDocumentContentProvider(deliveryScheme, documents),
    treeView.onDidChangeVisibility((e) => {
      if (!e.visible) return;
      statusBar.reveal();
      void load().then(showDeliveries);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration("protocall.listener") || !session.running) return;
      const pick = await vscode.window.showInformationMessage(
        "The listener settings changed: restart the listener to apply them.",
        "Restart Listener",
      );
      if (pick === "Restart Listener") {
        await guarded("Restart listener", async () => {
          await stopListener();
          return startListener();
        })();
      }
    }),
    vscode.commands.registerCommand(
      "protocall.deliveries.startListener",
      guarded("Start listener", async () => {
        const info = await startListener();
        void vscode.window
          .showInformationMessage(`Protocall listener on ${info.callbackUrl}`, "Copy Callback URL")
          .then((pick) => {
            if (pick) void vscode.env.clipboard.writeText(info.callbackUrl);
          });
        return info;
      }),
    ),
    vscode.commands.registerCommand(
      "protocall.deliveries.stopListener",
      guarded("Stop listener", stopListener),
    ),
    vscode.commands.registerCommand(
      "protocall.deliveries.toggleListener",
      guarded("Start or stop listener", async () => {
        if (session.running) {
          await stopListener();
          return undefined;
        }
        return startListener();
      }),
    ),
    vscode.commands.registerCommand("protocall.deliveries.refresh", async () => {
      loaded = undefined;
      if (!session.running) await load();
      tree.refresh();
      updateViewText();
    }),
    vscode.commands.registerCommand(
      "protocall.deliveries.open",
      guarded("Open delivery", async (arg?: unknown) => {
        const id = selectedId(arg);
        if (id === undefined) throw new ProtocallError("select a delivery in the Deliveries view to open it");
        return api.open(id);
      }),
    ),
    vscode.commands.registerCommand(
      "protocall.deliveries.replay",
      guarded("Replay delivery", async (arg?: unknown, to?: ReplayTarget) => {
        const id = selectedId(arg);
        if (id === undefined)
          throw new ProtocallError("select a delivery in the Deliveries view to replay it");
        const target = to ?? (await pickReplayTarget(id));
        if (!target) return undefined;
        const outcome = await api.replay(id, target);
        showOutcome(`Delivery #${id} replayed to`, outcome);
        return outcome;
      }),
    ),
    vscode.commands.registerCommand(
      "protocall.deliveries.copyJson",
      guarded("Copy delivery", async (arg?: unknown) => {
        const id = selectedId(arg);
        if (id === undefined) throw new ProtocallError("select a delivery in the Deliveries view to copy it");
        const text = await api.copyJson(id);
        vscode.window.setStatusBarMessage(`Delivery #${id} copied as JSON`, 3000);
        return text;
      }),
    ),
    vscode.commands.registerCommand(
      "protocall.deliveries.export",
      guarded("Export deliveries", async (uri?: vscode.Uri, format?: ExportFormat) => {
        let fmt = format;
        if (!fmt) {
          const pick = await vscode.window.showQuickPick(
            [
              {
                label: "JSON Lines",
                description: ".jsonl",
                detail: "One delivery per line",
                format: "jsonl" as const,
              },
              {
                label: "JSON array",
                description: ".json",
                detail: "One array of deliveries",
                format: "json" as const,
              },
            ],
            { title: "Export deliveries as" },
          );
          if (!pick) return undefined;
          fmt = pick.format;
        }
        let target = uri;
        if (!target) {
          const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
          const name = `deliveries.${fmt}`;
          target = await vscode.window.showSaveDialog({
            title: "Export deliveries",
            defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
            filters: fmt === "jsonl" ? { "JSON Lines": ["jsonl", "ndjson"] } : { JSON: ["json"] },
          });
          if (!target) return undefined;
        }
        const count = await api.exportTo(target, fmt);
        void vscode.window.showInformationMessage(
          `Exported ${count} deliver${count === 1 ? "y" : "ies"} to ${target.fsPath}`,
        );
        return { uri: target, format: fmt, count };
      }),
    ),
    vscode.commands.registerCommand(
      "protocall.deliveries.clear",
      guarded("Clear deliveries", async () => {
        await load();
        const count = session.count();
        const pick = await vscode.window.showWarningMessage(
          `Delete all ${count} deliver${count === 1 ? "y" : "ies"} from the store?`,
          { modal: true, detail: "They cannot be restored. Export them first to keep a copy." },
          "Clear",
        );
        if (pick !== "Clear") return false;
        await api.clear();
        return true;
      }),
    ),
    vscode.commands.registerCommand(
      "protocall.webhooks.sendTestPush",
      guarded("Send test push", async (event?: JsonValue, to?: string) => {
        const outcome = await api.sendTestPush(event, typeof to === "string" ? to : undefined);
        showOutcome("Test push sent to", outcome);
        return outcome;
      }),
    ),
    {
      dispose: () => {
        unsubscribe();
        if (pending) clearTimeout(pending);
        setCurrentListener(undefined);
        void session.dispose();
      },
    },
  );

  return api;
}
