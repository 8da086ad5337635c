// The mock server's status bar item: its address and the number of calls; a click stops it. Shown
// while the mock runs.
import * as vscode from "vscode";
import { commandIds } from "../command-table";
import type { MockInfo } from "../mock-handle";

export class MockStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem("protocall.mock", vscode.StatusBarAlignment.Left, 9);
    this.item.name = "Protocall Mock Server";
    this.item.command = commandIds.mockStop;
  }

  get text(): string {
    return this.item.text;
  }

  get tooltip(): string {
    return typeof this.item.tooltip === "string" ? this.item.tooltip : "";
  }

  get visible(): boolean {
    return this.shown;
  }

  private shown = false;

  update(running: MockInfo | undefined, calls: number): void {
    this.shown = running !== undefined;
    if (!running) {
      this.item.hide();
      return;
    }
    const address = running.url.replace(/^https?:\/\//, "");
    this.item.text = `$(server-process) mock ${address} · ${calls}`;
    this.item.tooltip = `Protocall mock server on ${running.url}\nSchema: ${running.schemaLabel}\n${calls} call${calls === 1 ? "" : "s"}\nClick to stop it`;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
