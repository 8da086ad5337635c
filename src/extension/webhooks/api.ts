// The Webhooks part's API, returned by activate() as `webhooks`: what the view's commands do, without
// their prompts, for other extensions and the extension-API tests. Failures reject with the message the
// view would show (the registry's reason and the fix).
import type * as vscode from "vscode";
import type { RegistryEntry } from "./registries";
import type { WebhookInfo } from "./service";
import type { WebhooksNode } from "./tree";

/** One item of the Webhooks view as drawn: its TreeItem fields and, when it expands, its children. */
export interface WebhooksTreeSnapshot {
  readonly label: string;
  readonly description?: string;
  readonly tooltip?: string;
  readonly contextValue?: string;
  /** The command run when the item is clicked (an error node's fix). */
  readonly command?: string;
  readonly children?: readonly WebhooksTreeSnapshot[];
}

export interface LocalRegistryInfo {
  /** Base URL, e.g. `https://127.0.0.1:41234`. */
  readonly url: string;
  /** The user the view is signed in as (an Admin of the configuration's repositories). */
  readonly user: string;
  readonly repositories: readonly string[];
}

export interface PushResult {
  readonly commitId: string;
  /** Whether the repository has a webhook, so that a push event was queued for delivery. */
  readonly eventQueued: boolean;
}

export interface WebhooksApi {
  /** The view's tree provider (the same instance the view draws). */
  readonly tree: vscode.TreeDataProvider<WebhooksNode>;
  /** The whole view as drawn, every item expanded (repositories are listed from their registries). */
  snapshot(): Promise<WebhooksTreeSnapshot[]>;
  /** Forgets every listing and redraws the view (the Refresh button). */
  refresh(): void;
  registries(): RegistryEntry[];
  /** "Add Registry…": a domain means https://domain; a full http(s) URL is kept. */
  addRegistry(name: string, url: string): Promise<RegistryEntry>;
  removeRegistry(registry: string): Promise<void>;
  /** "Sign In…": stores the token in the editor's secret storage, keyed by the registry's URL. */
  signIn(registry: string, token: string): Promise<void>;
  signOut(registry: string): Promise<void>;
  /** "Add Repository…": `owner/repository`, remembered for this workspace. */
  addRepository(registry: string, repository: string): Promise<string>;
  removeRepository(registry: string, repository: string): Promise<void>;
  /** "Create Webhook…" (event default WEBHOOK_EVENT_REPOSITORY_PUSH). */
  createWebhook(
    registry: string,
    repository: string,
    callbackUrl: string,
    event?: string,
  ): Promise<WebhookInfo>;
  /** Every webhook of the repository (ListWebhooks, all pages). */
  listWebhooks(registry: string, repository: string): Promise<WebhookInfo[]>;
  deleteWebhook(registry: string, webhookId: string): Promise<void>;
  /** The callback URL input box's check: each broken rule's message, one per line; undefined when valid. */
  validateCallbackUrl(text: string): string | undefined;
  /** "Start Local Registry": the registry emulator over https, trusting the listener's certificate. */
  startLocalRegistry(): Promise<LocalRegistryInfo>;
  stopLocalRegistry(): Promise<void>;
  localRegistry(): LocalRegistryInfo | undefined;
  /** The value last given to the `protocall.localRegistryRunning` context key (the view's menu). */
  localRegistryRunningContext(): boolean;
  /** "Push to Repository (local registry)…". */
  push(repository: string, author?: string, tags?: readonly string[]): Promise<PushResult>;
}
