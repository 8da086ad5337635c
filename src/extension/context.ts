// Everything a part of the extension needs, in one object created by activate() and passed to each
// feature as its only dependency: the output channel, the typed settings, the language server (started
// on demand), the running listener's handle, secret storage and the editor's state. Nothing lives in
// module-level variables: a second activation (tests, a reload) gets a fresh context.

import type * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import type { RegistryAccess } from "../core/schema/registry-modules";
import { LanguageServer } from "./language-client";
import { ListenerHandle } from "./listener-handle";
import { MockHandle } from "./mock-handle";
import { Settings } from "./settings";

/** A registry with an API token in the editor's secret storage. */
export interface SignedInRegistry {
  readonly remote: string;
  readonly name: string;
  readonly token: string;
  /** Extra CA (PEM) to trust for it: its `caFile`, or the local registry's own certificate. */
  readonly ca?: string;
}

export class ProtocallContext implements vscode.Disposable {
  /** The typed reader of the `protocall.*` settings. */
  readonly settings = new Settings();
  /** The language server of .rpc files, started on first need. */
  readonly languageServer: LanguageServer;
  /** The local webhook listener as every part sees it (the Deliveries part sets it). */
  readonly listener: ListenerHandle;
  /** The running mock server as every part sees it (the Mock part sets it). */
  readonly mock = new MockHandle();
  /**
   * The registries the editor is signed in to (the Webhooks part sets it): their remote
   * (`host[:port]`, as module names write it), name and token.
   */
  signedInRegistries: () => Promise<SignedInRegistry[]> = async () => [];

  constructor(
    /** VS Code's context of this activation. */
    readonly extension: vscode.ExtensionContext,
    /** The "Protocall" output channel; verbose transcripts go here, with secrets redacted. */
    readonly log: vscode.LogOutputChannel,
  ) {
    this.languageServer = new LanguageServer(extension, log, this.settings, () => this.registryAccess());
    this.listener = new ListenerHandle(extension.globalStorageUri.fsPath);
    extension.subscriptions.push(log, this.listener, this.mock);
  }

  /** The tokens and CAs of the registries signed in to, by remote (`host[:port]`), for registry modules. */
  async registryAccess(): Promise<RegistryAccess> {
    const signedIn = await this.signedInRegistries();
    return {
      tokens: Object.fromEntries(signedIn.map((r) => [r.remote, r.token])),
      cas: Object.fromEntries(signedIn.flatMap((r) => (r.ca ? [[r.remote, r.ca]] : []))),
    };
  }

  /** Starts the language server if it is not running yet; resolves once it is ready. */
  languageClient(): Promise<LanguageClient> {
    return this.languageServer.start();
  }

  /** Disposed when the extension deactivates. */
  get subscriptions(): vscode.Disposable[] {
    return this.extension.subscriptions;
  }

  /** The editor's secret storage (registry tokens). */
  get secrets(): vscode.SecretStorage {
    return this.extension.secrets;
  }

  /** State kept for the user across workspaces. */
  get globalState(): vscode.Memento {
    return this.extension.globalState;
  }

  /** State kept for this workspace. */
  get workspaceState(): vscode.Memento {
    return this.extension.workspaceState;
  }

  get extensionUri(): vscode.Uri {
    return this.extension.extensionUri;
  }

  /** The extension's version, from its package.json. */
  get version(): string {
    return (this.extension.extension?.packageJSON as { version?: string } | undefined)?.version ?? "0.0.0";
  }

  /** Where files of the extension are kept for the user (the listener's certificate, the local registry's). */
  get globalStoragePath(): string {
    return this.extension.globalStorageUri.fsPath;
  }

  /** Where files of this workspace are kept (the deliveries store); the global storage without a workspace. */
  get workspaceStoragePath(): string {
    return (this.extension.storageUri ?? this.extension.globalStorageUri).fsPath;
  }

  /** Stops the language server (deactivate() waits for it). */
  dispose(): Promise<void> {
    return this.languageServer.stop();
  }
}
