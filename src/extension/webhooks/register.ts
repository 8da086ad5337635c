// The Webhooks view and its commands: registries (sign in/out), repositories, webhooks (create, delete,
// copy), and the local registry for offline work (start, stop, push). Logic lives in src/core/webhooks;
// this file asks the user, calls it, and shows the outcome where the user acted.
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
import { callbackUrlInputMessage, callbackUrlInputProblems } from "../../core/webhooks/callback-url-input";
import { type WebhookFix, webhookErrorAdvice } from "../../core/webhooks/error-advice";
import { inertText } from "../../core/webhooks/inert-text";
import { registryUrlProblem } from "../../core/webhooks/registry-url";
import { parseRepositoryName, repositoryNameProblem } from "../../core/webhooks/repository-name";
import { currentListenerUrl, listenerCertificate, onDidChangeListener } from "../deliveries/listener-state";
import type { ExtensionShared } from "../shared";
import type { LocalRegistryInfo, PushResult, WebhooksApi, WebhooksTreeSnapshot } from "./api";
import { type RegistryEntry, RegistryStore } from "./registries";
import { type WebhookInfo, WebhookService } from "./service";
import { type WebhooksNode, WebhooksTree } from "./tree";

export type { WebhooksApi } from "./api";

/** A failure as the user sees it: the advice's message, and the action that fixes it. */
class AdvisedError extends ProtocallError {
  constructor(
    message: string,
    readonly fix?: WebhookFix,
    readonly registry?: RegistryEntry,
  ) {
    super(message);
  }
}

/** What a command may be invoked with: a node of the view, a registry key (from an error node), or nothing. */
type Target = WebhooksNode | string | undefined;

/** Registers this part's commands and views; returns its API (part of activate()'s ProtocallApi). */
export function registerWebhooks(shared: ExtensionShared): WebhooksApi {
  const { context, log } = shared;
  const store = new RegistryStore(context);
  const service = new WebhookService(store);
  const tree = new WebhooksTree(store, service);
  const view = vscode.window.createTreeView("protocall.webhooks", {
    treeDataProvider: tree,
    showCollapseAll: true,
  });
  context.subscriptions.push(store, tree, view, {
    dispose: () => {
      const local = store.local();
      if (local) void local.registry.close();
    },
  });

  const advised = (err: unknown, registry?: RegistryEntry): AdvisedError => {
    if (err instanceof AdvisedError) return err;
    const advice = webhookErrorAdvice(err, {
      registry: registry?.name ?? "the registry",
      fromSettings: registry?.source === "settings",
    });
    return new AdvisedError(advice.message, advice.fix, registry);
  };

  /** Shows a failure as an error notification with its fix as a button (not awaited: it stays up). */
  const showFailure = (err: unknown, registry?: RegistryEntry): undefined => {
    const e = advised(err, registry);
    log.error(e.message);
    const action = e.fix === "signIn" ? "Sign In…" : e.fix === "openSettings" ? "Open Settings" : undefined;
    void vscode.window.showErrorMessage(inertText(e.message), ...(action ? [action] : [])).then((choice) => {
      if (choice === "Sign In…")
        void vscode.commands.executeCommand("protocall.webhooks.signIn", e.registry?.key);
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "protocall.registries");
      }
    });
    return undefined;
  };

  const registry = (name: string): RegistryEntry => {
    try {
      return store.get(name);
    } catch (err) {
      throw advised(err);
    }
  };

  const repositoryOf = (text: string): { owner: string; repository: string } => {
    const parsed = parseRepositoryName(text);
    if (!parsed) throw new AdvisedError(repositoryNameProblem(text) ?? `"${text}" is not owner/repository`);
    return parsed;
  };

  const localInfo = (): LocalRegistryInfo | undefined => {
    const local = store.local();
    return local
      ? { url: local.registry.url, user: local.registry.user.name, repositories: local.registry.repositories }
      : undefined;
  };

  let starting: Promise<LocalRegistryInfo> | undefined;
  // Drives the view's menu: Push and Stop while the local registry runs, Start otherwise.
  let runningContext = false;
  const setRunningContext = async (running: boolean) => {
    runningContext = running;
    await vscode.commands.executeCommand("setContext", "protocall.localRegistryRunning", running);
  };

  const api: WebhooksApi = {
    tree,
    async snapshot() {
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
    },
    refresh: () => tree.refresh(),
    registries: () => store.list().entries,
    async addRegistry(name, url) {
      try {
        return await store.add(name, url);
      } catch (err) {
        throw advised(err);
      }
    },
    async removeRegistry(name) {
      const entry = registry(name);
      if (entry.source === "local") return api.stopLocalRegistry();
      try {
        await store.remove(entry);
      } catch (err) {
        throw new AdvisedError(errorMessage(err), "openSettings", entry);
      }
    },
    async signIn(name, token) {
      const entry = registry(name);
      try {
        await store.setToken(entry, token);
      } catch (err) {
        throw advised(err, entry);
      }
    },
    async signOut(name) {
      await store.clearToken(registry(name));
    },
    async addRepository(name, repository) {
      const entry = registry(name);
      try {
        return await store.addRepository(entry, repository);
      } catch (err) {
        throw advised(err, entry);
      }
    },
    async removeRepository(name, repository) {
      await store.removeRepository(registry(name), repository);
    },
    async createWebhook(name, repository, callbackUrl, event) {
      const entry = registry(name);
      const { owner, repository: repo } = repositoryOf(repository);
      const problems = callbackUrlInputProblems(callbackUrl);
      if (problems.length) throw new AdvisedError(problems.join("; "), undefined, entry);
      try {
        const created = await service.create(entry, owner, repo, callbackUrl, event);
        log.info(
          `Created webhook ${created.id} on ${owner}/${repo} (${entry.url}) -> ${created.callbackUrl}`,
        );
        return created;
      } catch (err) {
        throw advised(err, entry);
      } finally {
        tree.refresh();
      }
    },
    async listWebhooks(name, repository) {
      const entry = registry(name);
      const { owner, repository: repo } = repositoryOf(repository);
      try {
        return await service.list(entry, owner, repo);
      } catch (err) {
        throw advised(err, entry);
      }
    },
    async deleteWebhook(name, webhookId) {
      const entry = registry(name);
      try {
        await service.delete(entry, webhookId);
        log.info(`Deleted webhook ${webhookId} (${entry.url})`);
      } catch (err) {
        throw advised(err, entry);
      } finally {
        tree.refresh();
      }
    },
    validateCallbackUrl: (text) => callbackUrlInputMessage(text),
    startLocalRegistry() {
      const running = localInfo();
      if (running) return Promise.resolve(running);
      starting ??= (async () => {
        let trustCa: string | undefined;
        try {
          trustCa = (await listenerCertificate()).cert;
        } catch (err) {
          log.warn(`The local registry does not trust the listener's certificate: ${errorMessage(err)}`);
        }
        try {
          const { startLocalRegistry } = await import("../../core/webhooks/local-registry");
          const local = await startLocalRegistry({
            certDir: context.globalStorageUri.fsPath,
            trustCa,
            log: (line) => log.info(`[local registry] ${line}`),
          });
          await store.setLocal(local);
          await setRunningContext(true);
          log.info(`Local registry running at ${local.url}, signed in as ${local.user.name}`);
          return localInfo()!;
        } catch (err) {
          throw advised(err);
        }
      })().finally(() => {
        starting = undefined;
      });
      return starting;
    },
    async stopLocalRegistry() {
      const local = store.local();
      if (!local) return;
      await store.setLocal(undefined);
      await setRunningContext(false);
      await local.registry.close();
      log.info(`Local registry at ${local.registry.url} stopped`);
    },
    localRegistry: localInfo,
    localRegistryRunningContext: () => runningContext,
    async push(repository, author, tags) {
      const local = store.local();
      if (!local) {
        throw new AdvisedError("the local registry is not running: start it first (Start Local Registry)");
      }
      const { owner, repository: repo } = repositoryOf(repository);
      const token = (await store.token(local.entry)) ?? local.registry.token;
      try {
        const { pushToRegistry } = await import("../../core/webhooks/local-registry");
        const res = await pushToRegistry(
          local.registry.url,
          token,
          { owner, repository: repo, author, tags },
          { ca: local.registry.ca },
        );
        const result: PushResult = { commitId: res.commit?.id ?? "", eventQueued: res.eventQueued };
        log.info(
          `Pushed commit ${result.commitId} to ${owner}/${repo}${result.eventQueued ? ", event queued" : ""}`,
        );
        return result;
      } catch (err) {
        throw advised(err, local.entry);
      }
    },
  };

  // ---- prompts ----

  const pickRegistry = async (target: Target, title: string): Promise<RegistryEntry | undefined> => {
    if (typeof target === "string") return registry(target);
    if (target && "registry" in target && target.registry) return target.registry;
    const { entries } = store.list();
    if (entries.length === 0) {
      const choice = await vscode.window.showInformationMessage(
        "The Webhooks view has no registry yet.",
        "Add Registry…",
        "Start Local Registry",
      );
      if (choice === "Add Registry…") await vscode.commands.executeCommand("protocall.webhooks.addRegistry");
      if (choice === "Start Local Registry") {
        await vscode.commands.executeCommand("protocall.webhooks.startLocalRegistry");
      }
      return undefined;
    }
    if (entries.length === 1) return entries[0];
    const picked = await vscode.window.showQuickPick(
      entries.map((entry) => ({ label: entry.name, description: entry.url, entry })),
      { title, placeHolder: "Registry" },
    );
    return picked?.entry;
  };

  const pickRepository = async (
    target: Target,
  ): Promise<{ entry: RegistryEntry; name: string } | undefined> => {
    if (target && typeof target !== "string" && target.kind === "repository") {
      return { entry: target.registry, name: target.name };
    }
    const entries = typeof target === "string" ? [registry(target)] : store.list().entries;
    const items = entries.flatMap((entry) =>
      store.repositories(entry).map((name) => ({ label: name, description: entry.name, entry, name })),
    );
    if (items.length === 0) {
      void vscode.window.showInformationMessage(
        "Add a repository (owner/repository) under a registry first.",
      );
      return undefined;
    }
    if (items.length === 1) return items[0];
    return vscode.window.showQuickPick(items, { title: "Create Webhook", placeHolder: "Repository" });
  };

  /** The callback URL input box: pre-filled with the running listener's URL, checked as the user types. */
  const askCallbackUrl = (title: string): Promise<string | undefined> =>
    new Promise((resolve) => {
      const box = vscode.window.createInputBox();
      let prefilled = currentListenerUrl() ?? "";
      box.title = title;
      box.value = prefilled;
      box.ignoreFocusOut = true;
      box.placeholder = "https://HOST/buf.alpha.webhook.v1alpha1.EventService/Event";
      const prompt = () =>
        currentListenerUrl()
          ? "The callback URL: the running local listener's URL is filled in (the registry only calls https)"
          : "The callback URL (https). Start the listener in the Deliveries view to fill in its URL";
      box.prompt = prompt();
      const validate = () => {
        box.validationMessage = box.value === "" ? undefined : callbackUrlInputMessage(box.value);
      };
      validate();
      let done = false;
      const finish = (value: string | undefined) => {
        if (done) return;
        done = true;
        subscriptions.forEach((d) => {
          d.dispose();
        });
        box.dispose();
        resolve(value);
      };
      const subscriptions = [
        box.onDidChangeValue(validate),
        box.onDidAccept(() => {
          const message = callbackUrlInputMessage(box.value);
          if (message) {
            box.validationMessage = message;
            return;
          }
          finish(box.value.trim());
        }),
        box.onDidHide(() => finish(undefined)),
        onDidChangeListener(() => {
          // The listener started or stopped while the box is open: follow it unless the user typed.
          if (box.value === prefilled) {
            prefilled = currentListenerUrl() ?? "";
            box.value = prefilled;
            validate();
          }
          box.prompt = prompt();
        }),
      ];
      box.show();
    });

  /** Puts `text` on the clipboard and returns it (without waiting: a browser may hold the write back). */
  const copy = (text: string, what: string): string => {
    vscode.env.clipboard.writeText(text).then(
      () => vscode.window.setStatusBarMessage(`Copied the webhook's ${what}`, 3000),
      (err: unknown) => log.warn(`Could not copy the webhook's ${what}: ${errorMessage(err)}`),
    );
    return text;
  };

  const command = (id: string, run: (...args: never[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, run as (...args: unknown[]) => unknown));

  command("protocall.webhooks.refresh", () => tree.refresh());

  command("protocall.webhooks.addRegistry", async (): Promise<RegistryEntry | undefined> => {
    const url = await vscode.window.showInputBox({
      title: "Add Registry (1/2)",
      prompt: "The registry's domain (https) or URL; a local one may be http://127.0.0.1:PORT",
      placeHolder: "buf.example.com",
      ignoreFocusOut: true,
      validateInput: (text) => (text === "" ? undefined : registryUrlProblem(text)),
    });
    if (!url) return undefined;
    const name = await vscode.window.showInputBox({
      title: "Add Registry (2/2)",
      prompt: "A name for the registry in the view",
      value: url.replace(/^[a-z]+:\/\//i, "").replace(/\/.*$/, ""),
      ignoreFocusOut: true,
    });
    if (name === undefined) return undefined;
    try {
      const entry = await api.addRegistry(name, url);
      void vscode.commands.executeCommand("protocall.webhooks.signIn", entry.key);
      return entry;
    } catch (err) {
      return showFailure(err);
    }
  });

  command("protocall.webhooks.removeRegistry", async (target: Target) => {
    const entry = await pickRegistry(target, "Remove Registry");
    if (!entry) return;
    try {
      await api.removeRegistry(entry.key);
    } catch (err) {
      showFailure(err, entry);
    }
  });

  command("protocall.webhooks.signIn", async (target: Target): Promise<boolean> => {
    const entry = await pickRegistry(target, "Sign In");
    if (!entry) return false;
    const token = await vscode.window.showInputBox({
      title: `Sign In to ${entry.name}`,
      prompt: `API token for ${entry.url} (kept in the editor's secret storage, never in settings)`,
      password: true,
      ignoreFocusOut: true,
      validateInput: (text) => (text.trim() === "" ? "Paste the registry's API token" : undefined),
    });
    if (!token) return false;
    try {
      await api.signIn(entry.key, token);
      return true;
    } catch (err) {
      showFailure(err, entry);
      return false;
    }
  });

  command("protocall.webhooks.signOut", async (target: Target) => {
    const entry = await pickRegistry(target, "Sign Out");
    if (entry) await api.signOut(entry.key);
  });

  command("protocall.webhooks.addRepository", async (target: Target): Promise<string | undefined> => {
    const entry = await pickRegistry(target, "Add Repository");
    if (!entry) return undefined;
    const text = await vscode.window.showInputBox({
      title: `Add Repository to ${entry.name}`,
      prompt: "The repository as owner/repository",
      placeHolder: "acme/petapis",
      ignoreFocusOut: true,
      validateInput: (value) => (value === "" ? undefined : repositoryNameProblem(value)),
    });
    if (!text) return undefined;
    try {
      return await api.addRepository(entry.key, text);
    } catch (err) {
      return showFailure(err, entry);
    }
  });

  command("protocall.webhooks.removeRepository", async (target: Target) => {
    if (!target || typeof target === "string" || target.kind !== "repository") return;
    await api.removeRepository(target.registry.key, target.name);
  });

  command("protocall.webhooks.create", async (target: Target): Promise<WebhookInfo | undefined> => {
    let picked: { entry: RegistryEntry; name: string } | undefined;
    try {
      picked = await pickRepository(target);
    } catch (err) {
      return showFailure(err);
    }
    if (!picked) return undefined;
    const { entry, name } = picked;
    const { eventChoices } = await import("./webhook-info");
    const events = eventChoices();
    const event = await vscode.window.showQuickPick(events, {
      title: `Create Webhook on ${name} (1/2)`,
      placeHolder: "The event that calls the webhook",
      ignoreFocusOut: true,
    });
    if (!event) return undefined;
    const url = await askCallbackUrl(`Create Webhook on ${name} (2/2)`);
    if (!url) return undefined;
    try {
      const created = await vscode.window.withProgress(
        { location: { viewId: "protocall.webhooks" }, title: "Creating webhook…" },
        () => api.createWebhook(entry.key, name, url, event.label),
      );
      void vscode.window.showInformationMessage(
        inertText(`Created the ${created.event} webhook of ${name}: it calls ${created.callbackUrl}`),
      );
      // Show it: its repository expands and the new webhook is selected.
      view
        .reveal({ kind: "webhook", registry: entry, webhook: created }, { select: true, expand: true })
        .then(undefined, (err: unknown) =>
          log.warn(`Could not reveal the new webhook: ${errorMessage(err)}`),
        );
      return created;
    } catch (err) {
      return showFailure(err, entry);
    }
  });

  command("protocall.webhooks.delete", async (target: Target): Promise<boolean> => {
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
      await api.deleteWebhook(target.registry.key, w.id);
      return true;
    } catch (err) {
      showFailure(err, target.registry);
      return false;
    }
  });

  command("protocall.webhooks.copyId", (target: Target) => {
    if (target && typeof target !== "string" && target.kind === "webhook")
      return copy(target.webhook.id, "ID");
  });

  command("protocall.webhooks.copyCallbackUrl", (target: Target) => {
    if (target && typeof target !== "string" && target.kind === "webhook") {
      return copy(target.webhook.callbackUrl, "callback URL");
    }
  });

  command("protocall.webhooks.startLocalRegistry", async (): Promise<LocalRegistryInfo | undefined> => {
    const wasRunning = store.local() !== undefined;
    try {
      const local = await api.startLocalRegistry();
      void vscode.window.showInformationMessage(
        inertText(
          wasRunning
            ? `The local registry is running at ${local.url}.`
            : `Local registry running at ${local.url}, signed in as ${local.user} (Admin of ${local.repositories.join(", ")}). Create a webhook on a repository, then push with "Push to Repository (local registry)…".`,
        ),
      );
      return local;
    } catch (err) {
      return showFailure(err);
    }
  });

  command("protocall.webhooks.stopLocalRegistry", async () => {
    if (!store.local()) {
      void vscode.window.showInformationMessage("The local registry is not running.");
      return;
    }
    await api.stopLocalRegistry();
  });

  command("protocall.webhooks.push", async (): Promise<PushResult | undefined> => {
    if (!store.local()) {
      const choice = await vscode.window.showInformationMessage(
        "Pushing needs the local registry, which is not running.",
        "Start Local Registry",
      );
      if (choice !== "Start Local Registry") return undefined;
      try {
        await api.startLocalRegistry();
      } catch (err) {
        return showFailure(err);
      }
    }
    const local = store.local()!;
    const repos = local.registry.config.repositories.map((r) => `${r.owner}/${r.name}`);
    const repository = await vscode.window.showQuickPick(repos, {
      title: "Push to Repository (1/3)",
      placeHolder: "The repository that gets a new commit",
      ignoreFocusOut: true,
    });
    if (!repository) return undefined;
    const author = await vscode.window.showInputBox({
      title: "Push to Repository (2/3)",
      prompt: "The commit's author",
      value: local.registry.user.name,
      ignoreFocusOut: true,
    });
    if (author === undefined) return undefined;
    const tagText = await vscode.window.showInputBox({
      title: "Push to Repository (3/3)",
      prompt: "Tags on the commit, separated by spaces or commas (optional)",
      placeHolder: "v1.0.0",
      ignoreFocusOut: true,
      validateInput: (text) => {
        const bad = text.split(/[\s,]+/).find((t) => t !== "" && !/^[A-Za-z0-9._-]{1,250}$/.test(t));
        return bad === undefined
          ? undefined
          : `"${bad}" is not a tag name: use letters, digits, ".", "_" and "-"`;
      },
    });
    if (tagText === undefined) return undefined;
    const tags = tagText.split(/[\s,]+/).filter(Boolean);
    try {
      const result = await api.push(repository, author, tags);
      void vscode.window.showInformationMessage(
        inertText(
          result.eventQueued
            ? `Pushed commit ${result.commitId.slice(0, 12)} to ${repository}; the registry delivers its push event to the webhook within 5 seconds.`
            : `Pushed commit ${result.commitId.slice(0, 12)} to ${repository}; it has no webhook, so no event is sent: create one first.`,
        ),
      );
      return result;
    } catch (err) {
      return showFailure(err, local.entry);
    }
  });

  return api;
}
