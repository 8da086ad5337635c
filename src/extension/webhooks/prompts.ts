// The Webhooks view's questions to the user: which registry or repository a command is about (from the
// item it was run on, else a pick), a registry's address and name, an API token, a repository name,
// the callback URL (pre-filled with the running listener's URL and checked as the user types), and
// the commit to push to the local registry. Each returns undefined when the user dismisses it.
import * as vscode from "vscode";
import { callbackUrlInputMessage } from "../../core/webhooks/callback-url-input";
import { registryUrlProblem } from "../../core/webhooks/registry-url";
import { repositoryNameProblem } from "../../core/webhooks/repository-name";
import { commandIds } from "../command-table";
import type { ListenerHandle } from "../listener-handle";
import type { RegistryEntry, RegistryStore } from "./registries";
import type { WebhooksNode } from "./tree";

/** What a command may be invoked with: a node of the view, a registry key (from an error node), or nothing. */
export type Target = WebhooksNode | string | undefined;

/** The registry of the target, else the only one, else the user's pick (or an offer to add one). */
export async function pickRegistry(
  store: RegistryStore,
  resolve: (name: string) => RegistryEntry,
  target: Target,
  title: string,
): Promise<RegistryEntry | undefined> {
  if (typeof target === "string") return resolve(target);
  if (target && "registry" in target && target.registry) return target.registry;
  const { entries } = store.list();
  if (entries.length === 0) {
    const choice = await vscode.window.showInformationMessage(
      "The Webhooks view has no registry yet.",
      "Add Registry…",
      "Start Local Registry",
    );
    if (choice === "Add Registry…") await vscode.commands.executeCommand(commandIds.webhooksAddRegistry);
    if (choice === "Start Local Registry") {
      await vscode.commands.executeCommand(commandIds.webhooksStartLocalRegistry);
    }
    return undefined;
  }
  if (entries.length === 1) return entries[0];
  const picked = await vscode.window.showQuickPick(
    entries.map((entry) => ({ label: entry.name, description: entry.url, entry })),
    { title, placeHolder: "Registry" },
  );
  return picked?.entry;
}

/** The repository of the target, else the only one, else the user's pick. */
export async function pickRepository(
  store: RegistryStore,
  resolve: (name: string) => RegistryEntry,
  target: Target,
): Promise<{ entry: RegistryEntry; name: string } | undefined> {
  if (target && typeof target !== "string" && target.kind === "repository") {
    return { entry: target.registry, name: target.name };
  }
  const entries = typeof target === "string" ? [resolve(target)] : store.list().entries;
  const items = entries.flatMap((entry) =>
    store.repositories(entry).map((name) => ({ label: name, description: entry.name, entry, name })),
  );
  if (items.length === 0) {
    void vscode.window.showInformationMessage("Add a repository (owner/repository) under a registry first.");
    return undefined;
  }
  if (items.length === 1) return items[0];
  return vscode.window.showQuickPick(items, { title: "Create Webhook", placeHolder: "Repository" });
}

/** "Add Registry…": the address, then a name for the view. */
export async function askRegistry(): Promise<{ url: string; name: string } | undefined> {
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
  return name === undefined ? undefined : { url, name };
}

/** "Sign In…": the registry's API token (a password box). */
export function askToken(entry: RegistryEntry): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: `Sign In to ${entry.name}`,
    prompt: `API token for ${entry.url} (kept in the editor's secret storage, never in settings)`,
    password: true,
    ignoreFocusOut: true,
    validateInput: (text) => (text.trim() === "" ? "Paste the registry's API token" : undefined),
  });
}

/** "Add Repository…": `owner/repository`. */
export function askRepositoryName(entry: RegistryEntry): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: `Add Repository to ${entry.name}`,
    prompt: "The repository as owner/repository",
    placeHolder: "acme/petapis",
    ignoreFocusOut: true,
    validateInput: (value) => (value === "" ? undefined : repositoryNameProblem(value)),
  });
}

/** The callback URL input box: pre-filled with the running listener's URL, checked as the user types. */
export function askCallbackUrl(listener: ListenerHandle, title: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const box = vscode.window.createInputBox();
    let prefilled = listener.callbackUrl ?? "";
    box.title = title;
    box.value = prefilled;
    box.ignoreFocusOut = true;
    box.placeholder = "https://HOST/buf.alpha.webhook.v1alpha1.EventService/Event";
    const prompt = () =>
      listener.callbackUrl
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
      for (const d of subscriptions) d.dispose();
      box.dispose();
      resolve(value);
    };
    const subscriptions = [
      box.onDidChangeValue(validate),
      box.onDidAccept(() => {
        const message = callbackUrlInputMessage(box.value);
        if (message) box.validationMessage = message;
        else finish(box.value.trim());
      }),
      box.onDidHide(() => finish(undefined)),
      listener.onDidChange(() => {
        // The listener started or stopped while the box is open: follow it unless the user typed.
        if (box.value === prefilled) {
          prefilled = listener.callbackUrl ?? "";
          box.value = prefilled;
          validate();
        }
        box.prompt = prompt();
      }),
    ];
    box.show();
  });
}

/** "Push to Repository (local registry)…": the repository, the author, the tags. */
export async function askPush(
  repositories: string[],
  defaultAuthor: string,
): Promise<{ repository: string; author: string; tags: string[] } | undefined> {
  const repository = await vscode.window.showQuickPick(repositories, {
    title: "Push to Repository (1/3)",
    placeHolder: "The repository that gets a new commit",
    ignoreFocusOut: true,
  });
  if (!repository) return undefined;
  const author = await vscode.window.showInputBox({
    title: "Push to Repository (2/3)",
    prompt: "The commit's author",
    value: defaultAuthor,
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
  return { repository, author, tags: tagText.split(/[\s,]+/).filter(Boolean) };
}
