// The extension's entry point: thin wiring only. activate() creates the one context (context.ts), the
// features (features.ts), and registers the command table (command-table.ts) in one loop; the
// language server starts the first time an .rpc file or a Protocall view needs it.
import * as vscode from "vscode";
import { provideRegistryModules } from "../core/registry/provide";
import { commandTable } from "./command-table";
import { ProtocallContext } from "./context";
import type { DeliveriesApi } from "./deliveries/api";
import { createFeatures } from "./features";
import type { LiveApi } from "./live/live-feature";
import type { MockApi } from "./mock/mock-feature";
import type { SendApi } from "./send/api";
import type { ServicesApi } from "./services/services-feature";
import type { TestsApi } from "./test-explorer/tests-feature";
import type { TrafficApi } from "./traffic/api";
import type { WebhooksApi } from "./webhooks/api";

/** What activate() returns: each part's API, for other extensions and the extension-API tests. */
export interface ProtocallApi {
  send: SendApi;
  services: ServicesApi;
  webhooks: WebhooksApi;
  deliveries: DeliveriesApi;
  tests: TestsApi;
  live: LiveApi;
  traffic: TrafficApi;
  mock: MockApi;
}

/**
 * The context of the running activation, for deactivate() (VS Code calls it without arguments); the
 * features never read it: they are given the context.
 */
let active: ProtocallContext | undefined;

export function activate(extension: vscode.ExtensionContext): ProtocallApi {
  provideRegistryModules();
  const ctx = new ProtocallContext(extension, vscode.window.createOutputChannel("Protocall", { log: true }));
  active = ctx;
  const features = createFeatures(ctx);
  for (const { id, run } of commandTable) {
    ctx.subscriptions.push(
      vscode.commands.registerCommand(id, (...args: unknown[]) => run(features, ...(args as never[]))),
    );
  }

  // The server serves .rpc files: start it when the first one is open (now or later).
  const startForRpc = (doc: vscode.TextDocument) => {
    if (doc.languageId === "rpc") void ctx.languageClient().catch(() => undefined);
  };
  vscode.workspace.textDocuments.forEach(startForRpc);
  ctx.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument(startForRpc),
    // Trust changes what the server may do (build, reflect): restart it with the new settings.
    vscode.workspace.onDidGrantWorkspaceTrust(() => ctx.languageServer.restartIfRunning()),
  );

  return {
    send: features.send.api,
    services: features.services.api,
    webhooks: features.webhooks.api,
    deliveries: features.deliveries.api,
    tests: features.tests.api,
    live: features.live.api,
    traffic: features.traffic.api,
    mock: features.mock.api,
  };
}

export async function deactivate(): Promise<void> {
  const ctx = active;
  active = undefined;
  await ctx?.dispose();
}
