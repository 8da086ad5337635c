// The listener's status bar item: its address and the number of stored deliveries; a click starts or
// stops it. Shown while the listener runs, and from the first time the Deliveries view is opened.
import * as vscode from "vscode";
import type { ListenerSession } from "../../core/webhooks/listener-session";
import { commandIds } from "../command-table";

export class ListenerStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private wanted = false;

  constructor(private readonly session: ListenerSession) {
    this.item = vscode.window.createStatusBarItem("protocall.listener", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "Protocall Listener";
    this.item.command = commandIds.deliveriesToggleListener;
  }

  /** Keeps the item visible from now on (the Deliveries view was opened). */
  reveal(): void {
    this.wanted = true;
    this.update();
  }

  get text(): string {
    return this.item.text;
  }

  get tooltip(): string {
    return typeof this.item.tooltip === "string" ? this.item.tooltip : "";
  }

  get visible(): boolean {
    return this.wanted || this.session.running !== undefined;
  }

  update(): void {
    const running = this.session.running;
    const count = this.session.count();
    const deliveries = `${count} deliver${count === 1 ? "y" : "ies"}`;
    if (running) {
      const address = running.url.replace(/^https?:\/\//, "");
      this.item.text = `$(radio-tower) ${address} · ${count}`;
      this.item.tooltip = `Protocall listener on ${running.callbackUrl}\n${deliveries} stored\nClick to stop it`;
      this.item.backgroundColor = undefined;
    } else {
      this.item.text = `$(circle-slash) Listener · ${count}`;
      this.item.tooltip = `Protocall listener stopped\n${deliveries} stored\nClick to start it`;
    }
    if (this.visible) this.item.show();
    else this.item.hide();
  }

  dispose(): void {
    this.item.dispose();
  }
}
