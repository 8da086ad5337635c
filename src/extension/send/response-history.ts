// The responses of each request (newest first, as many as `protocall.history.size`) and the response
// panel that shows one of them: Send adds entries, the panel's buttons page through a request's
// history, cancel a running call, and copy, open or save the response shown.
import * as vscode from "vscode";
import { type PanelAction, ResponsePanel } from "../response/panel";
import type { ResponseEntry } from "../response/render";
import type { Settings } from "../settings";

export class ResponseHistory implements vscode.Disposable {
  readonly panel: ResponsePanel;
  private readonly histories = new Map<string, ResponseEntry[]>();
  private shownKey: string | undefined;

  constructor(
    extensionUri: vscode.Uri,
    private readonly settings: Settings,
    /** Cancels the running call of an entry (the panel's Cancel button). */
    private readonly cancel: (entry: ResponseEntry) => void,
  ) {
    this.panel = new ResponsePanel(
      extensionUri,
      (action, entry, text) => void this.onAction(action, entry, text),
    );
  }

  /** Adds an entry to a request's history and shows it (brings the panel forward when `reveal`). */
  add(key: string, entry: ResponseEntry, reveal = true): void {
    const list = this.histories.get(key) ?? [];
    list.unshift(entry);
    list.length = Math.min(list.length, this.settings.get("history.size"));
    this.histories.set(key, list);
    if (!reveal && !this.panel.isOpen()) return;
    this.shownKey = key;
    this.panel.show(entry, { index: 0, count: list.length }, reveal);
  }

  /** A request's responses, newest first. */
  list(key: string): ResponseEntry[] {
    return [...(this.histories.get(key) ?? [])];
  }

  dispose(): void {
    this.panel.dispose();
  }

  /** The live stream's buttons (Send, Close Send, Save Session as Request): set by the Live feature. */
  onLiveAction:
    | ((action: "liveSend" | "liveClose" | "liveSave", entry: ResponseEntry, text?: string) => void)
    | undefined;

  private async onAction(
    action: PanelAction,
    entry: ResponseEntry | undefined,
    text?: string,
  ): Promise<void> {
    if (!entry) return;
    if (action === "liveSend" || action === "liveClose" || action === "liveSave")
      this.onLiveAction?.(action, entry, text);
    else if (action === "cancel") this.cancel(entry);
    else if (action === "older" || action === "newer") this.page(entry, action === "older" ? 1 : -1);
    else await this.useDocument(action, entry);
  }

  /** Shows the entry `step` places older (1) or newer (-1) than `entry` in the history shown. */
  private page(entry: ResponseEntry, step: 1 | -1): void {
    const list = this.shownKey ? this.histories.get(this.shownKey) : undefined;
    if (!list) return;
    const at = list.findIndex((e) => e.id === entry.id);
    const to = at + step;
    if (at < 0 || to < 0 || to >= list.length) return;
    this.panel.show(list[to], { index: to, count: list.length });
  }

  /** Copy, open or save the response shown. */
  private async useDocument(action: "copy" | "open" | "save", entry: ResponseEntry): Promise<void> {
    const doc = this.panel.document();
    if (!doc) return;
    if (action === "copy") {
      await vscode.env.clipboard.writeText(doc.text);
      void vscode.window.setStatusBarMessage("Protocall: response copied", 3000);
    } else if (action === "open") {
      const opened = await vscode.workspace.openTextDocument({ content: doc.text, language: doc.language });
      await vscode.window.showTextDocument(opened, { viewColumn: vscode.ViewColumn.Active, preview: false });
    } else {
      const json = doc.language === "json";
      const base = entry.requestLabel.replace(/[^\w.-]+/g, "-").replace(/^-+|-+$/g, "") || "response";
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      const uri = await vscode.window.showSaveDialog({
        defaultUri: folder ? vscode.Uri.joinPath(folder, `${base}.${json ? "json" : "txt"}`) : undefined,
        filters: json ? { JSON: ["json"] } : { Text: ["txt"] },
        title: "Save Response",
      });
      if (uri) await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(doc.text));
    }
  }
}
