// Starts the .rpc language server (dist/server.js, a Node process over stdio) the first time an .rpc
// file or a Protocall view needs it, and maps the `protocall` settings to the server's settings. In a
// restricted (untrusted) workspace the server neither builds .proto files nor calls reflection.
import * as vscode from "vscode";
import {
  type ConfigurationParams,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import type { ServerSettings } from "../server/protocol";

/** The language server's settings from the `protocall` configuration of `scope`, given the workspace's trust. */
export function serverSettings(scope?: vscode.Uri): ServerSettings {
  const c = vscode.workspace.getConfiguration("protocall", scope);
  const trusted = vscode.workspace.isTrusted;
  const timeout = c.get<number>("reflectionTimeout", 5);
  const settings: ServerSettings = {
    schemas: trusted ? c.get<string[]>("schemas", []) : [],
    workspaceBuild: trusted && c.get<boolean>("workspaceBuild", true),
    reflection: trusted && c.get<boolean>("reflection", true),
    reflectionTimeoutMs: Math.max(100, Math.round(timeout * 1000)),
  };
  const bufPath = c.get<string>("bufPath", "");
  if (trusted && bufPath) settings.bufPath = bufPath;
  if (c.get<string>("compiler", "buf") === "protoc") {
    settings.compiler = "protoc";
    const protocPath = c.get<string>("protocPath", "");
    if (trusted && protocPath) settings.protocPath = protocPath;
  }
  const environment = c.get<string>("environment", "");
  if (environment) settings.environment = environment;
  const envFile = c.get<string>("envFile", "");
  if (trusted && envFile) settings.envFile = envFile;
  return settings;
}

export function createLanguageClient(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
): LanguageClient {
  const module = context.asAbsolutePath("dist/server.js");
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.stdio },
    debug: { module, transport: TransportKind.stdio, options: { execArgv: ["--enable-source-maps"] } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: "rpc" }],
    outputChannel: log,
    initializationOptions: serverSettings(),
    // The server registers its own file watchers (.proto, buf.yaml, descriptor sets, environments).
    synchronize: { configurationSection: "protocall" },
    middleware: {
      workspace: {
        // The server asks for the `protocall` section; answer with its own settings shape.
        configuration: (params: ConfigurationParams) =>
          params.items.map((item) =>
            item.section === "protocall"
              ? serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
              : null,
          ),
      },
    },
  };
  return new LanguageClient("protocall", "Protocall Language Server", serverOptions, clientOptions);
}
