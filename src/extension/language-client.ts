// The .rpc language server (dist/server.js, a Node process over stdio) as the extension holds it:
// started the first time an .rpc file or a Protocall view needs it, restarted on demand or when the
// workspace becomes trusted, stopped with the extension. Its settings come from the settings reader
// (`Settings.server`), which in a restricted workspace turns builds and reflection off.

import * as vscode from "vscode";
import {
  type ConfigurationParams,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import type { RegistryAccess } from "../core/schema/registry-modules";
import type { Settings } from "./settings";

export class LanguageServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;

  constructor(
    private readonly extension: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly settings: Settings,
    /** API tokens of the registries the editor is signed in to, by remote (`host[:port]`). */
    private readonly registries: () => Promise<RegistryAccess>,
  ) {}

  /** Starts the server if it is not running yet; resolves once it is ready. */
  start(): Promise<LanguageClient> {
    if (!this.starting) {
      const c = this.create();
      this.client = c;
      this.starting = c.start().then(
        () => c,
        (err: unknown) => {
          this.starting = undefined;
          this.client = undefined;
          this.log.error(`The Protocall language server did not start: ${String(err)}`);
          throw err;
        },
      );
    }
    return this.starting;
  }

  /** Restarts a running server (with the current settings and trust), or starts it. */
  async restart(): Promise<void> {
    if (!this.client) {
      await this.start();
      return;
    }
    await this.client.restart();
  }

  /** Restarts the server only if it runs (its settings changed in a way it cannot follow live). */
  async restartIfRunning(): Promise<void> {
    if (this.client) await this.client.restart();
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    this.starting = undefined;
    await c?.stop();
  }

  dispose(): void {
    void this.stop();
  }

  private create(): LanguageClient {
    const module = this.extension.asAbsolutePath("dist/server.js");
    // The server's reflection and registry calls follow VS Code's http.proxy / http.noProxy, read
    // when the server starts.
    const env = this.settings.connectionEnv();
    const serverOptions: ServerOptions = {
      run: { module, transport: TransportKind.stdio, options: { env } },
      debug: { module, transport: TransportKind.stdio, options: { env, execArgv: ["--enable-source-maps"] } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ language: "rpc" }],
      outputChannel: this.log,
      initializationOptions: this.settings.server(),
      // The server registers its own file watchers (.proto, buf.yaml, descriptor sets, environments).
      synchronize: { configurationSection: "protocall" },
      middleware: {
        workspace: {
          // The server asks for the `protocall` section; answer with its own settings shape.
          // Registry tokens (from secret storage) and CAs go along for registry modules among the schemas.
          configuration: async (params: ConfigurationParams) => {
            const access = await this.registries().catch(() => ({ tokens: {}, cas: {} }));
            return params.items.map((item) =>
              item.section === "protocall"
                ? {
                    ...this.settings.server(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined),
                    registryTokens: access.tokens,
                    registryCas: access.cas,
                  }
                : null,
            );
          },
        },
      },
    };
    return new LanguageClient("protocall", "Protocall Language Server", serverOptions, clientOptions);
  }
}
