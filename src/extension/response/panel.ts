// The response panel: one webview beside the editor, reused for every response. It shows one entry
// of one request's history at a time; messages of a running call are appended as they arrive.
// Strict content security policy: no inline script or style, only this extension's media/response
// files and a nonce for the script.
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import {
  type HistoryPosition,
  MAX_SHOWN_MESSAGES,
  type ResponseEntry,
  renderEntry,
  renderMessage,
  responseDocument,
} from "./render";

export type PanelAction =
  | "cancel"
  | "older"
  | "newer"
  | "copy"
  | "save"
  | "open"
  | "liveSend"
  | "liveClose"
  | "liveSave";

const panelActions: readonly PanelAction[] = [
  "cancel",
  "older",
  "newer",
  "copy",
  "save",
  "open",
  "liveSend",
  "liveClose",
  "liveSave",
];

/** What the panel shows now, for tests and other extensions. */
export interface ResponsePanelState {
  visible: boolean;
  title: string;
  entry?: ResponseEntry;
  position?: HistoryPosition;
  /** The HTML of the panel's body. */
  html: string;
}

export class ResponsePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private entry: ResponseEntry | undefined;
  private position: HistoryPosition = { index: 0, count: 0 };
  private ready = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onAction: (action: PanelAction, entry: ResponseEntry | undefined, text?: string) => void,
  ) {}

  /** Shows an entry (creating or revealing the panel without taking focus from the editor). */
  show(entry: ResponseEntry, position: HistoryPosition, reveal = true): void {
    this.entry = entry;
    this.position = position;
    const panel = this.ensurePanel();
    panel.title = `Response: ${entry.requestLabel}`;
    if (reveal && !panel.visible) panel.reveal(vscode.ViewColumn.Beside, true);
    this.render();
  }

  /** Re-renders the entry shown, if it is this one (headers arrived, the call ended). */
  update(entry: ResponseEntry): void {
    if (this.entry?.id === entry.id) this.render();
  }

  /** Appends a streamed message of the entry shown. */
  appendMessage(entry: ResponseEntry, index: number): void {
    if (this.entry?.id !== entry.id || !this.panel || index >= MAX_SHOWN_MESSAGES) return;
    const html = renderMessage(entry.messages[index], index);
    if (this.ready) void this.panel.webview.postMessage({ type: "append", id: entry.id, html, follow: true });
  }

  /** Whether the panel exists (it may be hidden behind another editor). */
  isOpen(): boolean {
    return this.panel !== undefined;
  }

  /** Empties the live stream's message box (its message was sent). */
  clearInput(entry: ResponseEntry): void {
    if (this.entry?.id === entry.id && this.ready)
      void this.panel?.webview.postMessage({ type: "clearInput" });
  }

  reveal(): boolean {
    if (!this.panel) return false;
    this.panel.reveal(undefined, true);
    return true;
  }

  state(): ResponsePanelState {
    return {
      visible: this.panel?.visible ?? false,
      title: this.panel?.title ?? "",
      entry: this.entry,
      position: this.entry ? this.position : undefined,
      html: this.entry ? renderEntry(this.entry, this.position) : "",
    };
  }

  /** The shown entry as one document (Copy, Save, Open as JSON document). */
  document(): { text: string; language: "json" | "plaintext" } | undefined {
    return this.entry ? responseDocument(this.entry) : undefined;
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }

  private render(): void {
    if (!this.entry || !this.panel) return;
    if (!this.ready) return;
    const html = renderEntry(this.entry, this.position);
    void this.panel.webview.postMessage({ type: "render", id: this.entry.id, html });
  }

  private ensurePanel(): vscode.WebviewPanel {
    if (this.panel) return this.panel;
    const media = vscode.Uri.joinPath(this.extensionUri, "media", "response");
    const panel = vscode.window.createWebviewPanel(
      "protocall.response",
      "Response",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: [media], retainContextWhenHidden: true },
    );
    this.panel = panel;
    this.ready = false;
    const webview = panel.webview;
    const nonce = randomBytes(16).toString("base64");
    const css = webview.asWebviewUri(vscode.Uri.joinPath(media, "response.css"));
    const js = webview.asWebviewUri(vscode.Uri.joinPath(media, "response.js"));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `img-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    webview.html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>Response</title>
</head>
<body>
<main id="root"></main>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
    this.disposables.push(
      webview.onDidReceiveMessage((m: { action?: string; text?: unknown }) => {
        if (m?.action === "ready") {
          this.ready = true;
          this.render();
          return;
        }
        if (panelActions.includes(m?.action as PanelAction)) {
          this.onAction(m.action as PanelAction, this.entry, typeof m.text === "string" ? m.text : undefined);
        }
      }),
      panel.onDidDispose(() => {
        this.panel = undefined;
        this.ready = false;
      }),
    );
    return panel;
  }
}
