// The Mock Calls view: the calls the running mock answered, newest first, each with its method, what
// answered it (a stub as `file:line "name"`, generated, upstream, no match), its status and duration.
// Labels and tooltips are plain strings: a call's text comes from clients we do not control.
import * as vscode from "vscode";
import type { MockCall } from "../../core/mock/call-log";
import { commandIds } from "../command-table";

/** A tree element: one call, by id. */
export interface MockCallNode {
  readonly id: number;
}

/** What a call's tree item shows (for the API and its tests). */
export interface MockCallItemView {
  readonly id: number;
  readonly label: string;
  readonly description: string;
  readonly tooltip: string;
  /** The codicon id: `pass` for ok, `error` otherwise. */
  readonly icon: string;
}

/** The item shown for a call. */
export function mockCallView(call: MockCall): MockCallItemView {
  const slash = call.method.lastIndexOf("/");
  const service = call.method.slice(0, slash);
  const short = `${service.slice(service.lastIndexOf(".") + 1)}/${call.method.slice(slash + 1)}`;
  const message = call.status !== "ok" && call.message ? `: ${call.message}` : "";
  return {
    id: call.id,
    label: short,
    description: `${call.source} · ${call.status} · ${call.durationMs} ms`,
    tooltip: `#${call.id} ${call.method} (${call.protocol}) at ${call.time}\nAnswered by ${call.source}\n${call.status}${message}\n${call.durationMs} ms`,
    icon: call.status === "ok" ? "pass" : "error",
  };
}

export class MockCallsTree implements vscode.TreeDataProvider<MockCallNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<MockCallNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** @param calls the calls, oldest first (the mock's call log). */
  constructor(private readonly calls: () => readonly MockCall[]) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: MockCallNode): MockCallNode[] {
    if (node) return [];
    return [...this.calls()].reverse().map((c) => ({ id: c.id }));
  }

  getTreeItem(node: MockCallNode): vscode.TreeItem {
    const call = this.calls().find((c) => c.id === node.id);
    const view = call
      ? mockCallView(call)
      : { label: `#${node.id}`, description: "", tooltip: "", icon: "circle" };
    const item = new vscode.TreeItem(view.label, vscode.TreeItemCollapsibleState.None);
    item.id = `mock-call-${node.id}`;
    item.description = view.description;
    item.tooltip = view.tooltip;
    item.contextValue = "mock-call";
    item.iconPath =
      view.icon === "error"
        ? new vscode.ThemeIcon("error", new vscode.ThemeColor("problemsErrorIcon.foreground"))
        : new vscode.ThemeIcon(view.icon);
    item.command = { command: commandIds.mockOpenCall, title: "Open Call", arguments: [node] };
    return item;
  }

  /** Every item, as the view shows them (newest first). */
  views(): MockCallItemView[] {
    return [...this.calls()].reverse().map(mockCallView);
  }

  dispose(): void {
    this.changed.dispose();
  }
}
