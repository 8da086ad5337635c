// The Traffic view: the calls that went through the proxy, newest first, each with its status and
// timing. Labels and tooltips are plain strings, so text from a call shows exactly as it was sent.
import * as vscode from "vscode";
import type { ProxiedCall } from "../../core/proxy/call-store";
import { commandIds } from "../command-table";
import type { TrafficItemView } from "./api";

/** A tree element: one call, by id. */
export interface CallNode {
  readonly id: number;
}

export function itemView(call: ProxiedCall): TrafficItemView {
  const status = call.status === "ok" ? "ok" : call.status;
  return {
    id: call.id,
    label: `#${call.id} ${call.method}`,
    description: `${status} · ${call.durationMs.toFixed(1)} ms · ${call.protocol}`,
    tooltip: `${call.method}\n${call.protocol} over HTTP/${call.httpVersion}, ${call.startedAt}\n${status}${call.statusMessage ? `: ${call.statusMessage}` : ""} in ${call.durationMs.toFixed(1)} ms, ${call.requestBytes} bytes sent, ${call.responseBytes} received`,
  };
}

export class TrafficTree implements vscode.TreeDataProvider<CallNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<CallNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** `calls`: the calls to show, oldest first. */
  constructor(private readonly calls: () => readonly ProxiedCall[]) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: CallNode): CallNode[] {
    if (node) return [];
    return [...this.calls()].reverse().map((c) => ({ id: c.id }));
  }

  getTreeItem(node: CallNode): vscode.TreeItem {
    const call = this.calls().find((c) => c.id === node.id);
    const view = call ? itemView(call) : { id: node.id, label: `#${node.id}`, description: "", tooltip: "" };
    const item = new vscode.TreeItem(view.label, vscode.TreeItemCollapsibleState.None);
    item.id = `call-${node.id}`;
    item.description = view.description;
    item.tooltip = view.tooltip;
    item.contextValue = "call";
    const failed = call && call.status !== "ok";
    item.iconPath = failed
      ? new vscode.ThemeIcon("error", new vscode.ThemeColor("errorForeground"))
      : new vscode.ThemeIcon("arrow-swap");
    item.command = { command: commandIds.trafficOpen, title: "Open Call", arguments: [node] };
    return item;
  }

  /** Every item, as the view shows them (newest first). */
  views(): TrafficItemView[] {
    return [...this.calls()].reverse().map(itemView);
  }

  dispose(): void {
    this.changed.dispose();
  }
}
