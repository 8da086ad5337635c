// What the Webhooks view's commands do, without their prompts: registries, tokens, repositories and
// webhooks through the core's client, and the local registry (the emulator, started in the extension
// host, trusting the listener's certificate). This is the part's API (activate()'s `webhooks`);
// failures reject with an AdvisedError: the message the view shows (the registry's reason and the
// fix) and the action that fixes it.
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
import { callbackUrlInputMessage, callbackUrlInputProblems } from "../../core/webhooks/callback-url-input";
import { type WebhookFix, webhookErrorAdvice } from "../../core/webhooks/error-advice";
import { parseRepositoryName, repositoryNameProblem } from "../../core/webhooks/repository-name";
import type { ProtocallContext } from "../context";
import type { LocalRegistryInfo, PushResult, WebhooksApi, WebhooksTreeSnapshot } from "./api";
import type { RegistryEntry, RegistryStore } from "./registries";
import type { WebhookInfo, WebhookService } from "./service";
import type { WebhooksNode, WebhooksTree } from "./tree";

/** A failure as the user sees it: the advice's message, and the action that fixes it. */
export class AdvisedError extends ProtocallError {
  constructor(
    message: string,
    readonly fix?: WebhookFix,
    readonly registry?: RegistryEntry,
  ) {
    super(message);
  }
}

/** The error as the user sees it: the registry's reason and the fix. */
export function advised(err: unknown, registry?: RegistryEntry): AdvisedError {
  if (err instanceof AdvisedError) return err;
  const advice = webhookErrorAdvice(err, {
    registry: registry?.name ?? "the registry",
    fromSettings: registry?.source === "settings",
  });
  return new AdvisedError(advice.message, advice.fix, registry);
}

function repositoryOf(text: string): { owner: string; repository: string } {
  const parsed = parseRepositoryName(text);
  if (!parsed) throw new AdvisedError(repositoryNameProblem(text) ?? `"${text}" is not owner/repository`);
  return parsed;
}

export class WebhooksModel implements WebhooksApi {
  private starting: Promise<LocalRegistryInfo> | undefined;
  // Drives the view's menu: Push and Stop while the local registry runs, Start otherwise.
  private runningContext = false;

  constructor(
    private readonly ctx: ProtocallContext,
    private readonly store: RegistryStore,
    private readonly service: WebhookService,
    readonly tree: WebhooksTree,
  ) {}

  /** The registry with this key, URL or name, or an AdvisedError. */
  registry(name: string): RegistryEntry {
    try {
      return this.store.get(name);
    } catch (err) {
      throw advised(err);
    }
  }

  async snapshot(): Promise<WebhooksTreeSnapshot[]> {
    const tree = this.tree;
    const walk = async (nodes: WebhooksNode[]): Promise<WebhooksTreeSnapshot[]> =>
      Promise.all(
        nodes.map(async (node) => {
          const item = tree.getTreeItem(node);
          const expands = item.collapsibleState !== vscode.TreeItemCollapsibleState.None;
          return {
            label: typeof item.label === "string" ? item.label : (item.label?.label ?? ""),
            description: typeof item.description === "string" ? item.description : undefined,
            tooltip: typeof item.tooltip === "string" ? item.tooltip : item.tooltip?.value,
            contextValue: item.contextValue,
            command: item.command?.command,
            children: expands ? await walk(await tree.getChildren(node)) : undefined,
          };
        }),
      );
    return walk(await tree.getChildren());
  }

  refresh(): void {
    this.tree.refresh();
  }

  registries(): RegistryEntry[] {
    return this.store.list().entries;
  }

  async addRegistry(name: string, url: string): Promise<RegistryEntry> {
    try {
      return await this.store.add(name, url);
    } catch (err) {
      throw advised(err);
    }
  }

  async removeRegistry(name: string): Promise<void> {
    const entry = this.registry(name);
    if (entry.source === "local") return this.stopLocalRegistry();
    try {
      await this.store.remove(entry);
    } catch (err) {
      throw new AdvisedError(errorMessage(err), "openSettings", entry);
    }
  }

  async signIn(name: string, token: string): Promise<void> {
    const entry = this.registry(name);
    try {
      await this.store.setToken(entry, token);
    } catch (err) {
      throw advised(err, entry);
    }
  }

  async signOut(name: string): Promise<void> {
    await this.store.clearToken(this.registry(name));
  }

  async addRepository(name: string, repository: string): Promise<string> {
    const entry = this.registry(name);
    try {
      return await this.store.addRepository(entry, repository);
    } catch (err) {
      throw advised(err, entry);
    }
  }

  async removeRepository(name: string, repository: string): Promise<void> {
    await this.store.removeRepository(this.registry(name), repository);
  }

  async createWebhook(
    name: string,
    repository: string,
    callbackUrl: string,
    event?: string,
  ): Promise<WebhookInfo> {
    const entry = this.registry(name);
    const { owner, repository: repo } = repositoryOf(repository);
    const problems = callbackUrlInputProblems(callbackUrl);
    if (problems.length) throw new AdvisedError(problems.join("; "), undefined, entry);
    try {
      const created = await this.service.create(entry, owner, repo, callbackUrl, event);
      this.ctx.log.info(
        `Created webhook ${created.id} on ${owner}/${repo} (${entry.url}) -> ${created.callbackUrl}`,
      );
      return created;
    } catch (err) {
      throw advised(err, entry);
    } finally {
      this.tree.refresh();
    }
  }

  async listWebhooks(name: string, repository: string): Promise<WebhookInfo[]> {
    const entry = this.registry(name);
    const { owner, repository: repo } = repositoryOf(repository);
    try {
      return await this.service.list(entry, owner, repo);
    } catch (err) {
      throw advised(err, entry);
    }
  }

  async deleteWebhook(name: string, webhookId: string): Promise<void> {
    const entry = this.registry(name);
    try {
      await this.service.delete(entry, webhookId);
      this.ctx.log.info(`Deleted webhook ${webhookId} (${entry.url})`);
    } catch (err) {
      throw advised(err, entry);
    } finally {
      this.tree.refresh();
    }
  }

  validateCallbackUrl(text: string): string | undefined {
    return callbackUrlInputMessage(text);
  }

  startLocalRegistry(): Promise<LocalRegistryInfo> {
    const running = this.localRegistry();
    if (running) return Promise.resolve(running);
    this.starting ??= this.startEmulator().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async stopLocalRegistry(): Promise<void> {
    const local = this.store.local();
    if (!local) return;
    await this.store.setLocal(undefined);
    await this.setRunningContext(false);
    await local.registry.close();
    this.ctx.log.info(`Local registry at ${local.registry.url} stopped`);
  }

  localRegistry(): LocalRegistryInfo | undefined {
    const local = this.store.local();
    return local
      ? { url: local.registry.url, user: local.registry.user.name, repositories: local.registry.repositories }
      : undefined;
  }

  localRegistryRunningContext(): boolean {
    return this.runningContext;
  }

  async push(repository: string, author?: string, tags?: readonly string[]): Promise<PushResult> {
    const local = this.store.local();
    if (!local) {
      throw new AdvisedError("the local registry is not running: start it first (Start Local Registry)");
    }
    const { owner, repository: repo } = repositoryOf(repository);
    const token = (await this.store.token(local.entry)) ?? local.registry.token;
    try {
      const { pushToRegistry } = await import("../../core/registry-emulator/local-registry");
      const res = await pushToRegistry(
        local.registry.url,
        token,
        { owner, repository: repo, author, tags },
        { ca: local.registry.ca },
      );
      const result: PushResult = { commitId: res.commit?.id ?? "", eventQueued: res.eventQueued };
      this.ctx.log.info(
        `Pushed commit ${result.commitId} to ${owner}/${repo}${result.eventQueued ? ", event queued" : ""}`,
      );
      return result;
    } catch (err) {
      throw advised(err, local.entry);
    }
  }

  /** Closes the local registry, if it runs (the extension deactivates). */
  dispose(): void {
    const local = this.store.local();
    if (local) void local.registry.close();
  }

  /** Starts the registry emulator, trusting the listener's certificate, and signs the view in to it. */
  private async startEmulator(): Promise<LocalRegistryInfo> {
    const log = this.ctx.log;
    let trustCa: string | undefined;
    try {
      trustCa = (await this.ctx.listener.certificate()).cert;
    } catch (err) {
      log.warn(`The local registry does not trust the listener's certificate: ${errorMessage(err)}`);
    }
    try {
      const { startLocalRegistry } = await import("../../core/registry-emulator/local-registry");
      const local = await startLocalRegistry({
        certDir: this.ctx.globalStoragePath,
        trustCa,
        log: (line) => log.info(`[local registry] ${line}`),
      });
      await this.store.setLocal(local);
      await this.setRunningContext(true);
      log.info(`Local registry running at ${local.url}, signed in as ${local.user.name}`);
      return this.localRegistry()!;
    } catch (err) {
      throw advised(err);
    }
  }

  private async setRunningContext(running: boolean): Promise<void> {
    this.runningContext = running;
    await vscode.commands.executeCommand("setContext", "protocall.localRegistryRunning", running);
  }
}
