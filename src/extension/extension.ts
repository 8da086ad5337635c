// The extension's entry point: thin wiring only. Each part registers its commands and views; the
// language server starts the first time an .rpc file or a Protocall view needs it.
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { registerDeliveries } from "./deliveries/register";
import { createLanguageClient } from "./language-client";
import { registerSend } from "./send/register";
import { registerServices } from "./services/register";
import type { ExtensionShared } from "./shared";
import { registerWebhooks } from "./webhooks/register";

let client: LanguageClient | undefined;

/** What activate() returns: each part's API, for other extensions and the extension-API tests. */
export interface ProtocallApi {
  send: ReturnType<typeof registerSend>;
  services: ReturnType<typeof registerServices>;
  webhooks: ReturnType<typeof registerWebhooks>;
  deliveries: ReturnType<typeof registerDeliveries>;
}

export function activate(context: vscode.ExtensionContext): ProtocallApi {
  const log = vscode.window.createOutputChannel("Protocall", { log: true });
  context.subscriptions.push(log);

  let starting: Promise<LanguageClient> | undefined;
  const languageClient = (): Promise<LanguageClient> => {
    if (!starting) {
      const c = createLanguageClient(context, log);
      client = c;
      starting = c.start().then(
        () => c,
        (err: unknown) => {
          starting = undefined;
          client = undefined;
          log.error(`The Protocall language server did not start: ${String(err)}`);
          throw err;
        },
      );
    }
    return starting;
  };
  const shared: ExtensionShared = { context, log, languageClient };

  // The server serves .rpc files: start it when the first one is open (now or later).
  const startForRpc = (doc: vscode.TextDocument) => {
    if (doc.languageId === "rpc") void languageClient().catch(() => undefined);
  };
  vscode.workspace.textDocuments.forEach(startForRpc);
  context.subscriptions.push(vscode.workspace.onDidOpenTextDocument(startForRpc));

  context.subscriptions.push(
    vscode.commands.registerCommand("protocall.showOutput", () => log.show()),
    vscode.commands.registerCommand("protocall.restartLanguageServer", async () => {
      if (!client) return void (await languageClient());
      await client.restart();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      // Trust changes what the server may do (build, reflect): restart it with the new settings.
      if (client) await client.restart();
    }),
  );

  return {
    send: registerSend(shared),
    services: registerServices(shared),
    webhooks: registerWebhooks(shared),
    deliveries: registerDeliveries(shared),
  };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
