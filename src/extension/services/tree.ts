// The Services view's tree: sources → packages → services → methods, each level asked of the
// language server when it is expanded (so a huge schema lists fast), a clear node when a source
// fails, and in a restricted workspace a node that says why nothing is built and offers to trust it.
// Everything shown comes from schemas that may come from servers we do not control: tooltips are
// Markdown with the text escaped, never trusted, never HTML.
import * as vscode from "vscode";
import type { RequestType } from "vscode-languageserver-protocol";
import {
  type ServiceChildrenParams,
  type ServiceChildrenResult,
  type ServiceNode,
  type ServiceServer,
  type ServiceSourceInfo,
  type ServiceSourcesResult,
  serviceChildrenRequest,
  serviceSourcesRequest,
} from "../../server/protocol";
import { commandIds } from "../command-table";
import type { ProtocallContext } from "../context";
import { DriftBadges, type DriftState } from "./drift-badges";

export const servicesViewId = "protocall.services";

export interface SourceElement {
  type: "source";
  info: ServiceSourceInfo;
  /** The settings entry of a server source. */
  server?: ServiceServer;
}

export interface NodeElement {
  type: "node";
  source: SourceElement;
  node: ServiceNode;
  /** How many siblings it has (a source's few packages are shown expanded). */
  siblings: number;
}

export interface ErrorElement {
  type: "error";
  /** What went wrong and how to fix it (several lines). */
  message: string;
  source?: SourceElement;
  /** A command that helps fix it. */
  fix?: vscode.Command;
}

export interface RestrictedElement {
  type: "restricted";
}

export type ServicesElement = SourceElement | NodeElement | ErrorElement | RestrictedElement;

const sourceKinds: Record<ServiceSourceInfo["kind"], { description: string; icon: string }> = {
  "workspace-build": { description: "workspace build", icon: "folder-library" },
  "descriptor-set": { description: "descriptor set", icon: "file-binary" },
  setting: { description: "protocall.schemas", icon: "settings-gear" },
  server: { description: "reflection", icon: "server" },
};

const streamingIcons = {
  unary: "arrow-right",
  server_streaming: "arrow-down",
  client_streaming: "arrow-up",
  bidi_streaming: "arrow-swap",
} as const;

const streamingNames = {
  unary: "unary",
  server_streaming: "server streaming",
  client_streaming: "client streaming",
  bidi_streaming: "bidirectional streaming",
} as const;

/** Packages shown expanded when a source has at most this many. */
const expandedPackages = 3;

export class ServicesTree implements vscode.TreeDataProvider<ServicesElement> {
  private readonly changed = new vscode.EventEmitter<ServicesElement | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** How long the last request waited for the language server to be ready (its start, the first time). */
  private readyMs = 0;

  /** Each server's drift from the workspace's schemas, shown as a badge on its source. */
  private readonly badges: DriftBadges;

  constructor(private readonly ctx: ProtocallContext) {
    this.badges = new DriftBadges(ctx, () => this.changed.fire(undefined));
  }

  /** Asks for every level again (the language server's caches decide what is rebuilt). */
  refresh(): void {
    this.badges.clear();
    this.changed.fire(undefined);
  }

  /** The drift of a server source from the workspace's schemas, once asked for. */
  driftOf(sourceId: string): DriftState | undefined {
    return this.badges.get(sourceId);
  }

  dispose(): void {
    this.changed.dispose();
  }

  async getChildren(element?: ServicesElement): Promise<ServicesElement[]> {
    if (!element) return this.roots();
    switch (element.type) {
      case "source":
        if (element.info.error) return [sourceError(element, element.info.error)];
        return this.nodes(element, undefined);
      case "node":
        if (element.node.kind === "method") return [];
        return this.nodes(element.source, { kind: element.node.kind, name: element.node.name });
      default:
        return [];
    }
  }

  getTreeItem(element: ServicesElement): vscode.TreeItem {
    switch (element.type) {
      case "source":
        return sourceItem(element, this.badges.get(element.info.id));
      case "node":
        return nodeItem(element);
      case "error":
        return errorItem(element);
      case "restricted":
        return restrictedItem();
    }
  }

  private async roots(): Promise<ServicesElement[]> {
    // The running mock server is listed after the configured servers, while it runs.
    const servers = [...this.ctx.settings.servers(), ...this.ctx.mock.servers()];
    let result: ServiceSourcesResult;
    const started = performance.now();
    try {
      result = await this.request(serviceSourcesRequest, { servers });
      this.ctx.log.info(
        `Services view: ${result.sources.length} sources listed in ${Math.round(performance.now() - started)} ms (language server ready after ${Math.round(this.readyMs)} ms)`,
      );
    } catch (err) {
      return [
        {
          type: "error",
          message: `The Protocall language server did not answer: ${err instanceof Error ? err.message : String(err)}\nSee the Protocall output, then restart the language server.`,
          fix: { title: "Show Output", command: commandIds.showOutput },
        },
      ];
    }
    const out: ServicesElement[] = [];
    if (!vscode.workspace.isTrusted) out.push({ type: "restricted" });
    for (const message of this.ctx.settings.serverProblems()) {
      out.push({ type: "error", message, fix: openServersSetting });
    }
    let serverIndex = 0;
    // A server's drift is measured against the workspace's own schemas, in the view's order.
    const candidates = result.sources.filter((s) => s.kind !== "server" && !s.error).map((s) => s.origin);
    for (const info of result.sources) {
      const server = info.kind === "server" ? servers[serverIndex++] : undefined;
      out.push({ type: "source", info, server });
      if (server) this.badges.ensure(info, server, candidates);
    }
    return out;
  }

  private async nodes(
    source: SourceElement,
    parent: ServiceChildrenParams["parent"],
  ): Promise<ServicesElement[]> {
    let result: ServiceChildrenResult;
    try {
      result = await this.request(serviceChildrenRequest, {
        source: source.info.id,
        server: source.server,
        parent,
      });
    } catch (err) {
      return [sourceError(source, err instanceof Error ? err.message : String(err))];
    }
    if (result.error) return [sourceError(source, result.error)];
    return result.children.map((node) => ({
      type: "node",
      source,
      node,
      siblings: result.children.length,
    }));
  }

  /** A request to the language server (started now if needed), with the view's progress bar. */
  private request<P, R>(type: RequestType<P, R, void>, params: P): Promise<R> {
    return Promise.resolve(
      vscode.window.withProgress({ location: { viewId: servicesViewId } }, async () => {
        const started = performance.now();
        const client = await this.ctx.languageClient();
        const ready = performance.now();
        this.readyMs = ready - started;
        const result = await client.sendRequest(type, params);
        this.ctx.log.trace(
          `Services view: ${type.method} answered in ${Math.round(performance.now() - ready)} ms (language server ready after ${Math.round(ready - started)} ms)`,
        );
        return result;
      }),
    );
  }
}

const openServersSetting: vscode.Command = {
  title: "Open Settings",
  command: "workbench.action.openSettings",
  arguments: ["protocall.servers"],
};

function sourceError(source: SourceElement, message: string): ErrorElement {
  let fix: vscode.Command | undefined;
  if (/Problems panel/.test(message)) {
    fix = { title: "Show Problems", command: "workbench.actions.view.problems" };
  } else if (source.info.kind === "server") {
    fix = openServersSetting;
  }
  return { type: "error", message, source, fix };
}

function sourceItem(e: SourceElement, drift: DriftState | undefined): vscode.TreeItem {
  const kind = sourceKinds[e.info.kind];
  // A server in a restricted workspace is reflected only when the user expands it.
  const collapsed = e.info.kind === "server" && !vscode.workspace.isTrusted;
  const item = new vscode.TreeItem(
    e.info.label,
    collapsed ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded,
  );
  item.id = e.info.id;
  item.description = kind.description;
  item.iconPath = e.info.error
    ? new vscode.ThemeIcon("error", new vscode.ThemeColor("errorForeground"))
    : new vscode.ThemeIcon(kind.icon);
  const tip = new vscode.MarkdownString();
  appendLines(tip, `${kind.description}: ${e.info.origin}`);
  if (e.info.error) {
    tip.appendMarkdown("\n\n");
    appendLines(tip, e.info.error);
  }
  item.contextValue = e.info.kind === "server" ? "server" : "source";
  const found = drift?.status === "done" ? drift.drift : undefined;
  if (found && found.report.differences.length > 0) {
    // The badge: how many differences, how many break clients (buf breaking), the list on hover.
    const all = found.report.differences;
    const breaking = all.filter((d) => d.breaking).length;
    item.description = `${kind.description} · drift: ${all.length}${breaking > 0 ? ` (${breaking} breaking)` : ""}`;
    item.iconPath = new vscode.ThemeIcon(
      "warning",
      new vscode.ThemeColor(breaking > 0 ? "list.errorForeground" : "list.warningForeground"),
    );
    tip.appendMarkdown("\n\n");
    appendLines(
      tip,
      `Differs from ${found.against}:\n${drift?.status === "done" ? drift.text.trimEnd() : ""}`,
    );
    item.contextValue = "server-drift";
  } else if (found) {
    tip.appendMarkdown("\n\n");
    appendLines(tip, `Matches ${found.against}.`);
  }
  item.tooltip = tip;
  return item;
}

function nodeItem(e: NodeElement): vscode.TreeItem {
  const n = e.node;
  const id = `${e.source.info.id}\u0000${n.kind}\u0000${n.name}`;
  if (n.kind === "package") {
    const item = new vscode.TreeItem(
      n.name === "" ? "(no package)" : n.name,
      e.siblings <= expandedPackages
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed,
    );
    item.id = id;
    item.description = `${n.serviceCount} service${n.serviceCount === 1 ? "" : "s"}`;
    item.iconPath = new vscode.ThemeIcon("symbol-namespace");
    item.contextValue = "package";
    return item;
  }
  if (n.kind === "service") {
    const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = id;
    item.description = describe(n.comment, n.deprecated);
    item.iconPath = new vscode.ThemeIcon("symbol-interface");
    const tip = new vscode.MarkdownString();
    tip.appendCodeblock(`service ${n.name}`, "proto");
    if (n.deprecated) tip.appendMarkdown("\n\n*Deprecated.*");
    if (n.comment) {
      tip.appendMarkdown("\n\n");
      appendLines(tip, n.comment);
    }
    item.tooltip = tip;
    item.contextValue = "service";
    return item;
  }
  const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.None);
  item.id = id;
  item.description = describe(n.comment, n.deprecated);
  item.iconPath = new vscode.ThemeIcon(streamingIcons[n.streaming] ?? "symbol-method");
  const clientStream = n.streaming === "client_streaming" || n.streaming === "bidi_streaming";
  const serverStream = n.streaming === "server_streaming" || n.streaming === "bidi_streaming";
  const tip = new vscode.MarkdownString();
  tip.appendCodeblock(
    `rpc ${n.label}(${clientStream ? "stream " : ""}${n.input}) returns (${serverStream ? "stream " : ""}${n.output})`,
    "proto",
  );
  const facts: string[] = [streamingNames[n.streaming] ?? n.streaming];
  if (n.idempotency === "no_side_effects") facts.push("no side effects");
  if (n.idempotency === "idempotent") facts.push("idempotent");
  if (n.deprecated) facts.push("deprecated");
  tip.appendMarkdown("\n\n");
  appendLines(tip, `${n.name} · ${facts.join(" · ")}`);
  if (n.comment) {
    tip.appendMarkdown("\n\n");
    appendLines(tip, n.comment);
  }
  item.tooltip = tip;
  item.contextValue = "method";
  item.command = {
    title: "Add Request to .rpc File",
    command: commandIds.servicesAddRequest,
    arguments: [e],
  };
  return item;
}

function errorItem(e: ErrorElement): vscode.TreeItem {
  const [first, ...rest] = e.message.split("\n");
  const item = new vscode.TreeItem(first, vscode.TreeItemCollapsibleState.None);
  if (e.source) item.id = `${e.source.info.id}\u0000error`;
  item.description = rest.join(" ");
  item.iconPath = new vscode.ThemeIcon("error", new vscode.ThemeColor("errorForeground"));
  const tip = new vscode.MarkdownString();
  appendLines(tip, e.message);
  item.tooltip = tip;
  item.contextValue = "error";
  if (e.fix) item.command = e.fix;
  return item;
}

function restrictedItem(): vscode.TreeItem {
  const item = new vscode.TreeItem(
    "Restricted Mode: .proto files are not built",
    vscode.TreeItemCollapsibleState.None,
  );
  item.id = "restricted";
  item.description = "Trust this workspace to list them";
  item.iconPath = new vscode.ThemeIcon("shield");
  item.tooltip =
    "This workspace is not trusted, so Protocall does not run the compiler or read descriptor-set files here, and reflects a server only when you expand it. Click to manage workspace trust.";
  item.contextValue = "restricted";
  item.command = { title: "Manage Workspace Trust", command: "workbench.trust.manage" };
  return item;
}

/** The first line of a comment as an item's description. */
function describe(comment: string | undefined, deprecated: boolean | undefined): string | undefined {
  const first = comment?.split("\n")[0].trim();
  if (deprecated) return first ? `deprecated · ${first}` : "deprecated";
  return first || undefined;
}

/**
 * Text as Markdown that renders literally: HTML-significant characters as entities, other Markdown
 * punctuation backslash-escaped. (The same rule as the hover text's; not imported from there, so the
 * extension's bundle does not load the schema renderer at activation.)
 */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|~<>&]/g, (c) =>
    c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "&" ? "&amp;" : `\\${c}`,
  );
}

/** Appends text escaped (Markdown punctuation and HTML), each line on its own line. */
function appendLines(md: vscode.MarkdownString, text: string): void {
  md.appendMarkdown(
    text
      .split("\n")
      .map((line) => escapeMarkdown(line))
      .join("  \n"),
  );
}
