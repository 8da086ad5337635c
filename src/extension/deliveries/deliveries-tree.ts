// The Deliveries view: received events, newest first. Labels, descriptions and tooltips are plain
// strings (never Markdown or HTML), so text from an event shows exactly as it was sent.
import * as vscode from "vscode";
import { type DeliverySummary, summarizeDelivery } from "../../core/webhooks/delivery-summary";
import type { ListenerSession } from "../../core/webhooks/listener-session";
import { commandIds } from "../command-table";

/** A tree element: one delivery, by id. */
export interface DeliveryNode {
  readonly id: number;
}

/** What a delivery's tree item shows (for the API and its tests). */
export interface DeliveryItemView {
  readonly id: number;
  readonly label: string;
  readonly description: string;
  readonly tooltip: string;
  /** `delivery` or `delivery-rejected`. */
  readonly contextValue: string;
  /** The codicon id. */
  readonly icon: string;
}

export class DeliveriesTree implements vscode.TreeDataProvider<DeliveryNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<DeliveryNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private summaries = new Map<number, DeliverySummary>();

  constructor(private readonly session: ListenerSession) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: DeliveryNode): DeliveryNode[] {
    if (node) return [];
    const now = new Date();
    const summaries = new Map<number, DeliverySummary>();
    const nodes: DeliveryNode[] = [];
    for (const d of this.session.deliveries()) {
      summaries.set(d.id, summarizeDelivery(d, now));
      nodes.push({ id: d.id });
    }
    this.summaries = summaries;
    return nodes;
  }

  getTreeItem(node: DeliveryNode): vscode.TreeItem {
    const view = this.view(node.id);
    const item = new vscode.TreeItem(view.label, vscode.TreeItemCollapsibleState.None);
    item.id = `delivery-${node.id}`;
    item.description = view.description;
    item.tooltip = view.tooltip;
    item.contextValue = view.contextValue;
    item.iconPath =
      view.icon === "warning"
        ? new vscode.ThemeIcon("warning", new vscode.ThemeColor("problemsWarningIcon.foreground"))
        : new vscode.ThemeIcon(view.icon);
    item.command = { command: commandIds.deliveriesOpen, title: "Open Delivery", arguments: [node] };
    return item;
  }

  /** The item shown for delivery `id`. */
  view(id: number): DeliveryItemView {
    let s = this.summaries.get(id);
    if (!s) {
      const d = this.session.deliveries().find((x) => x.id === id);
      if (!d)
        return { id, label: `#${id}`, description: "", tooltip: "", contextValue: "delivery", icon: "mail" };
      s = summarizeDelivery(d);
    }
    return {
      id,
      label: s.label,
      description: s.description,
      tooltip: s.tooltip,
      contextValue: s.rejected ? "delivery-rejected" : "delivery",
      icon: s.rejected ? "warning" : s.replayOf ? "debug-restart" : "mail",
    };
  }

  /** Every item, as the view shows them (newest first). */
  views(): DeliveryItemView[] {
    return this.getChildren().map((n) => this.view(n.id));
  }

  dispose(): void {
    this.changed.dispose();
  }
}
