// The Webhooks view: registries → repositories → webhooks, then, for a repository that is a module
// with commits, "Recent commits" (newest first: id, author, time, the labels on it) and "Labels" (each
// label and its commit). Everything from a server is shown as plain text (labels, descriptions, and
// plain-string tooltips are never interpreted as markup). A failed listing shows as an error node
// under the repository, with the action that fixes it. A webhook shows its last delivery when the
// registry records them (the registry emulator): delivered, or failed with the reason on hover; while
// the view is visible those are re-read every few seconds, and a webhook redrawn when they change.
import * as vscode from "vscode";
import { type WebhookFix, webhookErrorAdvice } from "../../core/webhooks/error-advice";
import type { RegistryEntry, RegistryStore } from "./registries";
import type { LastDelivery, ModuleHistory, WebhookInfo, WebhookService } from "./service";

type HistoryCommit = ModuleHistory["commits"][number];
type HistoryLabel = ModuleHistory["labels"][number];

export type WebhooksNode =
  | { readonly kind: "registry"; readonly registry: RegistryEntry; readonly signedIn: boolean }
  | { readonly kind: "repository"; readonly registry: RegistryEntry; readonly name: string }
  | {
      readonly kind: "webhook";
      readonly registry: RegistryEntry;
      readonly webhook: WebhookInfo;
      /** Its last delivery attempt, when the registry records them. */
      readonly delivery?: LastDelivery;
    }
  | { readonly kind: "commits" | "labels"; readonly id: string; readonly history: ModuleHistory }
  | {
      readonly kind: "commit";
      readonly id: string;
      readonly commit: HistoryCommit;
      readonly labels: string[];
    }
  | { readonly kind: "label"; readonly id: string; readonly label: HistoryLabel }
  | {
      readonly kind: "message";
      readonly id: string;
      readonly severity: "error" | "info";
      readonly text: string;
      readonly fix?: WebhookFix | "addRepository";
      readonly registry?: RegistryEntry;
    };

export class WebhooksTree implements vscode.TreeDataProvider<WebhooksNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<WebhooksNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** Listings per repository (`<registry key> <owner/repository>`), until the next refresh. */
  private readonly listings = new Map<string, Promise<WebhooksNode[]>>();
  private readonly subscription: vscode.Disposable;
  /** Listed repositories whose registry records deliveries: what their last deliveries were. */
  private readonly watched = new Map<
    string,
    { registry: RegistryEntry; owner: string; repository: string; seen: string }
  >();
  private visible = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private polling = false;

  constructor(
    private readonly store: RegistryStore,
    private readonly service: WebhookService,
    /** How often the last deliveries are re-read while the view is visible. */
    private readonly pollMs = 2000,
  ) {
    this.subscription = store.onDidChange(() => this.refresh());
  }

  dispose(): void {
    this.setVisible(false);
    this.subscription.dispose();
    this.changed.dispose();
  }

  /** Forgets every listing and redraws the view. */
  refresh(): void {
    this.listings.clear();
    this.watched.clear();
    this.changed.fire(undefined);
  }

  /** Re-reads the last deliveries only while the view is visible. */
  setVisible(visible: boolean): void {
    this.visible = visible;
    if (visible && !this.timer) {
      this.timer = setInterval(() => void this.pollDeliveries(), this.pollMs);
    } else if (!visible && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Redraws a repository whose webhooks' last deliveries changed since it was listed. */
  private async pollDeliveries(): Promise<void> {
    if (this.polling || !this.visible || this.watched.size === 0) return;
    this.polling = true;
    try {
      let changed = false;
      for (const [key, w] of [...this.watched]) {
        const now = await this.service.deliveries(w.registry, w.owner, w.repository);
        if (now === undefined || signature(now) === w.seen || this.watched.get(key) !== w) continue;
        this.watched.delete(key);
        this.listings.delete(key);
        changed = true;
      }
      if (changed) this.changed.fire(undefined);
    } finally {
      this.polling = false;
    }
  }

  async getChildren(node?: WebhooksNode): Promise<WebhooksNode[]> {
    if (!node) {
      const { entries, problems } = this.store.list();
      const registries: WebhooksNode[] = await Promise.all(
        entries.map(async (registry) => ({
          kind: "registry" as const,
          registry,
          signedIn: (await this.store.token(registry)) !== undefined,
        })),
      );
      return [
        ...problems.map(
          (text, i): WebhooksNode => ({
            kind: "message",
            id: `settings-problem-${i}`,
            severity: "error",
            text,
            fix: "openSettings",
          }),
        ),
        ...registries,
      ];
    }
    if (node.kind === "registry") {
      const repos = this.store.repositories(node.registry);
      if (!repos.length) {
        return [
          {
            kind: "message",
            id: `${node.registry.key} no-repositories`,
            severity: "info",
            text: "Add a repository (owner/repository) to see its webhooks",
            fix: "addRepository",
            registry: node.registry,
          },
        ];
      }
      return repos.map((name) => ({ kind: "repository", registry: node.registry, name }));
    }
    if (node.kind === "repository") {
      const key = `${node.registry.key} ${node.name}`;
      let listing = this.listings.get(key);
      if (!listing) {
        listing = this.list(node.registry, node.name, key);
        this.listings.set(key, listing);
      }
      return listing;
    }
    if (node.kind === "commits") {
      return node.history.commits.map((commit) => ({
        kind: "commit",
        id: `${node.id} ${commit.id}`,
        commit,
        labels: node.history.labels.filter((l) => l.commitId === commit.id).map((l) => l.name),
      }));
    }
    if (node.kind === "labels") {
      return node.history.labels.map((label) => ({ kind: "label", id: `${node.id} ${label.name}`, label }));
    }
    return [];
  }

  /** The repository's commits and labels as two groups; none when it is no module with commits. */
  private async historyNodes(registry: RegistryEntry, owner: string, repository: string, key: string) {
    try {
      const history = await this.service.history(registry, owner, repository);
      if (!history || history.commits.length === 0) return [];
      return [
        { kind: "commits", id: `${key} commits`, history },
        { kind: "labels", id: `${key} labels`, history },
      ] as WebhooksNode[];
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return [
        {
          kind: "message",
          id: `${key} history-error`,
          severity: "error",
          text: `Cannot list the commits: ${message}`,
        },
      ] as WebhooksNode[];
    }
  }

  private async list(registry: RegistryEntry, name: string, key: string): Promise<WebhooksNode[]> {
    const [owner, repository] = name.split("/");
    if ((await this.store.token(registry)) === undefined) {
      return [
        {
          kind: "message",
          id: `${key} signed-out`,
          severity: "info",
          text: `Sign in to ${registry.name} to list the webhooks`,
          fix: "signIn",
          registry,
        },
      ];
    }
    const history = this.historyNodes(registry, owner, repository, key);
    const deliveries = this.service.deliveries(registry, owner, repository);
    try {
      const webhooks = await this.service.list(registry, owner, repository);
      const last = await deliveries;
      if (last) this.watched.set(key, { registry, owner, repository, seen: signature(last) });
      if (!webhooks.length) {
        return [
          { kind: "message", id: `${key} none`, severity: "info", text: "No webhooks: create one" },
          ...(await history),
        ];
      }
      return [
        ...webhooks.map(
          (webhook): WebhooksNode => ({
            kind: "webhook",
            registry,
            webhook,
            delivery: last?.get(webhook.id),
          }),
        ),
        ...(await history),
      ];
    } catch (err) {
      const advice = webhookErrorAdvice(err, {
        registry: registry.name,
        fromSettings: registry.source === "settings",
      });
      return [
        {
          kind: "message",
          id: `${key} error`,
          severity: "error",
          text: advice.message,
          fix: advice.fix,
          registry,
        },
      ];
    }
  }

  /** The parent of a repository (its registry) or of a webhook (its repository), for reveal. */
  async getParent(node: WebhooksNode): Promise<WebhooksNode | undefined> {
    if (node.kind === "repository") {
      return {
        kind: "registry",
        registry: node.registry,
        signedIn: (await this.store.token(node.registry)) !== undefined,
      };
    }
    if (node.kind === "webhook") {
      return {
        kind: "repository",
        registry: node.registry,
        name: `${node.webhook.owner}/${node.webhook.repository}`,
      };
    }
    return undefined;
  }

  getTreeItem(node: WebhooksNode): vscode.TreeItem {
    switch (node.kind) {
      case "registry": {
        const item = new vscode.TreeItem(node.registry.name, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `registry ${node.registry.key}`;
        item.description = node.signedIn ? node.registry.url : `${node.registry.url} · signed out`;
        item.tooltip = `${node.registry.name}\n${node.registry.url}\n${
          node.signedIn ? "Signed in (token in the editor's secret storage)" : "Not signed in"
        }${node.registry.source === "settings" ? "\nFrom the setting protocall.registries" : ""}`;
        item.contextValue = node.signedIn ? "registry-signedIn" : "registry";
        item.iconPath = new vscode.ThemeIcon(
          node.registry.source === "local" ? "server-environment" : "server",
        );
        return item;
      }
      case "repository": {
        const item = new vscode.TreeItem(node.name, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `repository ${node.registry.key} ${node.name}`;
        item.tooltip = `${node.name} on ${node.registry.name} (${node.registry.url})`;
        item.contextValue = "repository";
        item.iconPath = new vscode.ThemeIcon("repo");
        return item;
      }
      case "webhook": {
        const w = node.webhook;
        const d = node.delivery;
        const item = new vscode.TreeItem(w.event, vscode.TreeItemCollapsibleState.None);
        item.id = `webhook ${node.registry.key} ${w.id}`;
        item.description = d ? `${w.id} · ${d.success ? "delivered" : "delivery failed"}` : w.id;
        item.tooltip = `${w.event} on ${w.owner}/${w.repository}\nCallback URL: ${w.callbackUrl}\nCreated: ${
          w.createTime ?? "unknown"
        }\nUpdated: ${w.updateTime ?? "unknown"}\nID: ${w.id}${d ? `\n${deliveryText(d)}` : ""}`;
        item.contextValue = "webhook";
        item.iconPath =
          d && !d.success
            ? new vscode.ThemeIcon("warning", new vscode.ThemeColor("problemsWarningIcon.foreground"))
            : new vscode.ThemeIcon("link-external");
        return item;
      }
      case "commits":
      case "labels": {
        const commits = node.kind === "commits";
        const count = commits ? node.history.commits.length : node.history.labels.length;
        const item = new vscode.TreeItem(
          commits ? "Recent commits" : "Labels",
          vscode.TreeItemCollapsibleState.Collapsed,
        );
        item.id = node.id;
        item.description = String(count);
        item.tooltip = commits ? `The latest ${count} commits, newest first` : `${count} labels`;
        item.contextValue = node.kind;
        item.iconPath = new vscode.ThemeIcon(commits ? "git-commit" : "tag");
        return item;
      }
      case "commit": {
        const c = node.commit;
        const item = new vscode.TreeItem(c.id.slice(0, 12), vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = [node.labels.join(", "), c.author, c.createTime?.replace("T", " ").slice(0, 19)]
          .filter(Boolean)
          .join(" · ");
        item.tooltip = `Commit ${c.id}\nPushed: ${c.createTime ?? "unknown"}${c.author ? ` by ${c.author}` : ""}${
          node.labels.length ? `\nLabels: ${node.labels.join(", ")}` : ""
        }`;
        item.contextValue = "commit";
        item.iconPath = new vscode.ThemeIcon("git-commit");
        return item;
      }
      case "label": {
        const l = node.label;
        const item = new vscode.TreeItem(l.name, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = l.commitId.slice(0, 12);
        item.tooltip = `Label ${l.name} → commit ${l.commitId}\nMoved: ${l.updateTime ?? "unknown"}`;
        item.contextValue = "label";
        item.iconPath = new vscode.ThemeIcon("tag");
        return item;
      }
      case "message": {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.id = `message ${node.id}`;
        item.tooltip = node.text;
        item.contextValue = node.severity === "error" ? "webhooks-error" : "webhooks-message";
        item.iconPath = new vscode.ThemeIcon(
          node.severity === "error" ? "error" : "info",
          node.severity === "error" ? new vscode.ThemeColor("errorForeground") : undefined,
        );
        const command = fixCommand(node.fix, node.registry);
        if (command) item.command = command;
        return item;
      }
    }
  }
}

/** What changed between two readings: the last attempt of each webhook. */
function signature(deliveries: Map<string, LastDelivery>): string {
  return [...deliveries.values()]
    .map((d) => `${d.webhookId}:${d.id}`)
    .sort()
    .join(",");
}

/** The last delivery, for the webhook's hover: when, to which commit, and how it went. */
function deliveryText(d: LastDelivery): string {
  const when = d.attemptTime?.replace("T", " ").slice(0, 19) ?? "at an unknown time";
  const what = `Last delivery: ${when} (commit ${d.commitId.slice(0, 12)})`;
  return d.success ? `${what}, delivered (HTTP ${d.httpStatus})` : `${what}, failed: ${d.error}`;
}

function fixCommand(
  fix: WebhookFix | "addRepository" | undefined,
  registry: RegistryEntry | undefined,
): vscode.Command | undefined {
  switch (fix) {
    case "signIn":
      return {
        command: "protocall.webhooks.signIn",
        title: "Sign In…",
        arguments: registry ? [registry.key] : [],
      };
    case "addRepository":
      return {
        command: "protocall.webhooks.addRepository",
        title: "Add Repository…",
        arguments: registry ? [registry.key] : [],
      };
    case "openSettings":
      return {
        command: "workbench.action.openSettings",
        title: "Open Settings",
        arguments: ["protocall.registries"],
      };
    default:
      return undefined;
  }
}
