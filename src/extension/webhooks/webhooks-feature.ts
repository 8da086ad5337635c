// The Webhooks view and its commands: registries (sign in/out), repositories, webhooks (create, delete,
// copy), and the local registry for offline work (start, stop, push). Logic lives in src/core/webhooks
// and webhooks-model.ts; each command here asks the user (prompts.ts), calls the model, and shows the
// outcome where the user acted. The commands are listed in ../command-table.ts.
import * as vscode from "vscode";
import { errorMessage } from "../../core/errors";
import { inertText } from "../../core/webhooks/inert-text";
import { commandIds } from "../command-table";
import type { ProtocallContext, SignedInRegistry } from "../context";
import type { LocalRegistryInfo, PushResult, WebhooksApi } from "./api";
import {
  askCallbackUrl,
  askPush,
  askRegistry,
  askRepositoryName,
  askToken,
  pickRegistry,
  pickRepository,
  type Target,
} from "./prompts";
import { type RegistryEntry, RegistryStore } from "./registries";
import { type WebhookInfo, WebhookService } from "./service";
import { type WebhooksNode, WebhooksTree } from "./tree";
import { advised, WebhooksModel } from "./webhooks-model";

export type { WebhooksApi } from "./api";

export class WebhooksFeature {
  readonly api: WebhooksApi;
  private readonly model: WebhooksModel;
  private readonly store: RegistryStore;
  private readonly view: vscode.TreeView<WebhooksNode>;

  constructor(private readonly ctx: ProtocallContext) {
    this.store = new RegistryStore(ctx);
    const service = new WebhookService(this.store, () => ctx.settings.connectionEnv());
    const tree = new WebhooksTree(this.store, service);
    this.model = new WebhooksModel(ctx, this.store, service, tree);
    this.view = vscode.window.createTreeView("protocall.webhooks", {
      treeDataProvider: tree,
      showCollapseAll: true,
    });
    tree.setVisible(this.view.visible);
    ctx.subscriptions.push(
      this.store,
      tree,
      this.view,
      this.model,
      this.view.onDidChangeVisibility((e) => tree.setVisible(e.visible)),
    );
    this.api = this.model;
    ctx.signedInRegistries = () => this.signedIn();
  }

  /** The registries with a token, for registry modules (Add Registry Module…, the language server). */
  private async signedIn(): Promise<SignedInRegistry[]> {
    const out: SignedInRegistry[] = [];
    for (const entry of this.store.list().entries) {
      const token = await this.store.token(entry);
      if (!token) continue;
      let ca: string | undefined;
      try {
        ca = this.store.ca(entry);
      } catch {
        // An unreadable caFile: the Webhooks view says so; the module's registry is then trusted as usual.
      }
      out.push({ remote: new URL(entry.url).host, name: entry.name, token, ca });
    }
    return out;
  }

  /** protocall.webhooks.refresh. */
  refresh(): void {
    this.model.refresh();
  }

  /** protocall.webhooks.addRegistry: then offers to sign in. */
  async addRegistry(): Promise<RegistryEntry | undefined> {
    const asked = await askRegistry();
    if (!asked) return undefined;
    try {
      const entry = await this.model.addRegistry(asked.name, asked.url);
      void vscode.commands.executeCommand(commandIds.webhooksSignIn, entry.key);
      return entry;
    } catch (err) {
      return this.showFailure(err);
    }
  }

  /** protocall.webhooks.removeRegistry. */
  async removeRegistry(target: Target): Promise<void> {
    const entry = await this.pickRegistry(target, "Remove Registry");
    if (!entry) return;
    try {
      await this.model.removeRegistry(entry.key);
    } catch (err) {
      this.showFailure(err, entry);
    }
  }

  /** protocall.webhooks.signIn: the token goes to secret storage. */
  async signIn(target: Target): Promise<boolean> {
    const entry = await this.pickRegistry(target, "Sign In");
    if (!entry) return false;
    const token = await askToken(entry);
    if (!token) return false;
    try {
      await this.model.signIn(entry.key, token);
      return true;
    } catch (err) {
      this.showFailure(err, entry);
      return false;
    }
  }

  /** protocall.webhooks.signOut. */
  async signOut(target: Target): Promise<void> {
    const entry = await this.pickRegistry(target, "Sign Out");
    if (entry) await this.model.signOut(entry.key);
  }

  /** protocall.webhooks.addRepository. */
  async addRepository(target: Target): Promise<string | undefined> {
    const entry = await this.pickRegistry(target, "Add Repository");
    if (!entry) return undefined;
    const text = await askRepositoryName(entry);
    if (!text) return undefined;
    try {
      return await this.model.addRepository(entry.key, text);
    } catch (err) {
      return this.showFailure(err, entry);
    }
  }

  /** protocall.webhooks.removeRepository: a repository item's button. */
  async removeRepository(target: Target): Promise<void> {
    if (!target || typeof target === "string" || target.kind !== "repository") return;
    await this.model.removeRepository(target.registry.key, target.name);
  }

  /** protocall.webhooks.create: the event, then the callback URL; the new webhook is revealed. */
  async create(target: Target): Promise<WebhookInfo | undefined> {
    let picked: { entry: RegistryEntry; name: string } | undefined;
    try {
      picked = await pickRepository(this.store, (n) => this.model.registry(n), target);
    } catch (err) {
      return this.showFailure(err);
    }
    if (!picked) return undefined;
    const { entry, name } = picked;
    const { eventChoices } = await import("./webhook-info");
    const event = await vscode.window.showQuickPick(eventChoices(), {
      title: `Create Webhook on ${name} (1/2)`,
      placeHolder: "The event that calls the webhook",
      ignoreFocusOut: true,
    });
    if (!event) return undefined;
    const url = await askCallbackUrl(this.ctx.listener, `Create Webhook on ${name} (2/2)`);
    if (!url) return undefined;
    try {
      const created = await vscode.window.withProgress(
        { location: { viewId: "protocall.webhooks" }, title: "Creating webhook…" },
        () => this.model.createWebhook(entry.key, name, url, event.label),
      );
      void vscode.window.showInformationMessage(
        inertText(`Created the ${created.event} webhook of ${name}: it calls ${created.callbackUrl}`),
      );
      // Show it: its repository expands and the new webhook is selected.
      this.view
        .reveal({ kind: "webhook", registry: entry, webhook: created }, { select: true, expand: true })
        .then(undefined, (err: unknown) =>
          this.ctx.log.warn(`Could not reveal the new webhook: ${errorMessage(err)}`),
        );
      return created;
    } catch (err) {
      return this.showFailure(err, entry);
    }
  }

  /** protocall.webhooks.delete: after the user confirms. */
  async delete(target: Target): Promise<boolean> {
    if (!target || typeof target === "string" || target.kind !== "webhook") return false;
    const w = target.webhook;
    const confirmed = await vscode.window.showWarningMessage(
      inertText(`Delete the webhook of ${w.owner}/${w.repository} that calls ${w.callbackUrl}?`),
      {
        modal: true,
        detail: inertText(
          `${w.event}, id ${w.id}. Events already queued by the registry are still delivered.`,
        ),
      },
      "Delete",
    );
    if (confirmed !== "Delete") return false;
    try {
      await this.model.deleteWebhook(target.registry.key, w.id);
      return true;
    } catch (err) {
      this.showFailure(err, target.registry);
      return false;
    }
  }

  /** protocall.webhooks.copyId. */
  copyId(target: Target): string | undefined {
    if (target && typeof target !== "string" && target.kind === "webhook")
      return this.copy(target.webhook.id, "ID");
    return undefined;
  }

  /** protocall.webhooks.copyCallbackUrl. */
  copyCallbackUrl(target: Target): string | undefined {
    if (target && typeof target !== "string" && target.kind === "webhook") {
      return this.copy(target.webhook.callbackUrl, "callback URL");
    }
    return undefined;
  }

  /** protocall.webhooks.startLocalRegistry. */
  async startLocalRegistry(): Promise<LocalRegistryInfo | undefined> {
    const wasRunning = this.store.local() !== undefined;
    try {
      const local = await this.model.startLocalRegistry();
      void vscode.window.showInformationMessage(
        inertText(
          wasRunning
            ? `The local registry is running at ${local.url}.`
            : `Local registry running at ${local.url}, signed in as ${local.user} (Admin of ${local.repositories.join(", ")}). Create a webhook on a repository, then push with "Push to Repository (local registry)…".`,
        ),
      );
      return local;
    } catch (err) {
      return this.showFailure(err);
    }
  }

  /** protocall.webhooks.stopLocalRegistry. */
  async stopLocalRegistry(): Promise<void> {
    if (!this.store.local()) {
      void vscode.window.showInformationMessage("The local registry is not running.");
      return;
    }
    await this.model.stopLocalRegistry();
  }

  /** protocall.webhooks.push: a commit to a repository of the local registry (started first if asked). */
  async push(): Promise<PushResult | undefined> {
    if (!this.store.local()) {
      const choice = await vscode.window.showInformationMessage(
        "Pushing needs the local registry, which is not running.",
        "Start Local Registry",
      );
      if (choice !== "Start Local Registry") return undefined;
      try {
        await this.model.startLocalRegistry();
      } catch (err) {
        return this.showFailure(err);
      }
    }
    const local = this.store.local()!;
    const repositories = local.registry.config.repositories.map((r) => `${r.owner}/${r.name}`);
    const asked = await askPush(repositories, local.registry.user.name);
    if (!asked) return undefined;
    const { repository } = asked;
    try {
      const result = await this.model.push(repository, asked.author, asked.tags);
      const commit = result.commitId.slice(0, 12);
      void vscode.window.showInformationMessage(
        inertText(
          result.eventQueued
            ? `Pushed commit ${commit} to ${repository}; the registry delivers its push event to the webhook within 5 seconds.`
            : `Pushed commit ${commit} to ${repository}; it has no webhook, so no event is sent: create one first.`,
        ),
      );
      return result;
    } catch (err) {
      return this.showFailure(err, local.entry);
    }
  }

  private pickRegistry(target: Target, title: string): Promise<RegistryEntry | undefined> {
    return pickRegistry(this.store, (n) => this.model.registry(n), target, title);
  }

  /** Shows a failure as an error notification with its fix as a button (not awaited: it stays up). */
  private showFailure(err: unknown, registry?: RegistryEntry): undefined {
    const e = advised(err, registry);
    this.ctx.log.error(e.message);
    const action = e.fix === "signIn" ? "Sign In…" : e.fix === "openSettings" ? "Open Settings" : undefined;
    void vscode.window.showErrorMessage(inertText(e.message), ...(action ? [action] : [])).then((choice) => {
      if (choice === "Sign In…")
        void vscode.commands.executeCommand(commandIds.webhooksSignIn, e.registry?.key);
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "protocall.registries");
      }
    });
    return undefined;
  }

  /** Puts `text` on the clipboard and returns it (without waiting: a browser may hold the write back). */
  private copy(text: string, what: string): string {
    vscode.env.clipboard.writeText(text).then(
      () => vscode.window.setStatusBarMessage(`Copied the webhook's ${what}`, 3000),
      (err: unknown) => this.ctx.log.warn(`Could not copy the webhook's ${what}: ${errorMessage(err)}`),
    );
    return text;
  }
}
