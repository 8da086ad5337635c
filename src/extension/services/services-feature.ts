// The Services view (`protocall.services`) and its commands: refresh, add/remove a server, add a
// registry module as a schema (add-registry-module.ts), add a
// request for a method, go to a definition, copy a full name. The view starts the language server
// when it opens; the server owns the schemas (one build, one cache, one set of compiler errors).
// The commands are listed in ../command-table.ts.
import * as vscode from "vscode";
import type { ServerDrift } from "../../core/drift/server-drift";
import { errorMessage } from "../../core/errors";
import { normalizeServerUrl, parseHeaderInput, serverUrlProblem } from "../../core/schema/server-entry";
import { refreshRequest, type ServiceServer } from "../../server/protocol";
import type { ProtocallContext } from "../context";
import { addRegistryModule } from "./add-registry-module";
import { type AddedRequest, addRequest } from "./add-request";
import { type NodeElement, type ServicesElement, ServicesTree, servicesViewId } from "./tree";

/** The Services view's API (activate()'s `services`), for other extensions and the extension tests. */
export interface ServicesApi {
  /** The view's data: `getChildren()` gives the root items, `getTreeItem(e)` how each is shown. */
  readonly provider: vscode.TreeDataProvider<ServicesElement>;
  readonly view: vscode.TreeView<ServicesElement>;
  /** Refreshes the view and the language server's schemas (the Refresh command). */
  refresh(): Promise<void>;
  /** Adds a request for a method item (the item's click). */
  addRequest(element: ServicesElement): Promise<AddedRequest | undefined>;
}

const protocols: (vscode.QuickPickItem & { value: ServiceServer["protocol"] })[] = [
  { label: "Connect", description: "connect (default)", value: "connect" },
  { label: "gRPC", description: "grpc", value: "grpc" },
  { label: "gRPC-Web", description: "grpcweb", value: "grpcweb" },
];

export class ServicesFeature {
  readonly api: ServicesApi;
  private readonly provider: ServicesTree;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: ProtocallContext) {
    this.provider = new ServicesTree(ctx);
    const view = vscode.window.createTreeView(servicesViewId, {
      treeDataProvider: this.provider,
      showCollapseAll: true,
    });
    // The view needs the language server: start it as soon as the view shows (right after activation
    // when the view is what activated the extension), so that its start overlaps the rest of the
    // workbench's work instead of waiting for the tree's first request.
    const startServer = () =>
      setTimeout(() => {
        void ctx.languageClient().catch(() => undefined);
      }, 0);
    if (view.visible) startServer();
    ctx.subscriptions.push(
      this.provider,
      view,
      view.onDidChangeVisibility((e) => {
        if (e.visible) startServer();
      }),
      { dispose: () => this.timer && clearTimeout(this.timer) },
      // The running mock is a source of the view while it runs.
      ctx.mock.onDidChange(() => this.provider.refresh()),
    );
    this.watch();
    this.api = {
      provider: this.provider,
      view,
      refresh: () => this.refresh(),
      addRequest: (element) => this.addRequest(element),
    };
  }

  /** protocall.services.refresh: the language server drops its schemas; the view asks again. */
  async refresh(): Promise<void> {
    try {
      const client = await this.ctx.languageClient();
      await client.sendRequest(refreshRequest);
    } catch (err) {
      this.ctx.log.warn(`Refreshing the schemas failed: ${errorMessage(err)}`);
    }
    this.provider.refresh();
  }

  /** protocall.services.addServer: asks for a server's URL, headers and protocol (or takes a given entry). */
  async addServer(given?: ServiceServer): Promise<ServiceServer | undefined> {
    const server =
      given && typeof given === "object" && typeof given.url === "string"
        ? checkedServer(given)
        : await askServer();
    if (!server) return undefined;
    await this.ctx.settings.addServer(server);
    this.provider.refresh();
    return server;
  }

  /** protocall.services.addRegistryModule: a registry module as a schema (`REMOTE/owner/module[:ref]`, or asks). */
  async addRegistryModule(given?: unknown): Promise<string | undefined> {
    const added = await addRegistryModule(this.ctx, given);
    if (added) this.provider.refresh();
    return added;
  }

  /** protocall.services.removeServer: a server item's trash button. */
  async removeServer(element?: ServicesElement): Promise<boolean> {
    const url = element?.type === "source" ? (element.server?.url ?? element.info.origin) : undefined;
    if (!url) return false;
    const removed = await this.ctx.settings.removeServer(url);
    if (!removed) {
      void vscode.window.showWarningMessage(
        `${url} is not in the workspace or user settings (protocall.servers); remove it where it is configured.`,
      );
    }
    this.provider.refresh();
    return removed;
  }

  /** protocall.services.addRequest: a method item's click. */
  addRequest(element: ServicesElement): Promise<AddedRequest | undefined> {
    return addRequest(this.ctx, element as NodeElement);
  }

  /** protocall.services.goToDefinition: opens the .proto file at the element's declaration. */
  goToDefinition(element?: ServicesElement): Promise<vscode.TextEditor | undefined> {
    return openDefinition(element);
  }

  /**
   * protocall.services.showDriftReport: a server with a drift badge → its report (as `protocall drift`
   * prints it) in a new read-only-by-intent text document; returns the report shown.
   */
  async showDriftReport(element?: ServicesElement): Promise<ServerDrift | undefined> {
    if (element?.type !== "source" || element.info.kind !== "server") return undefined;
    const state = this.provider.driftOf(element.info.id);
    if (state?.status !== "done" || !state.drift) {
      const why =
        state?.status === "failed"
          ? `comparing it failed: ${state.message}`
          : state?.status === "pending"
            ? "it is still being compared; try again in a moment"
            : "no schema of the workspace declares a service it serves";
      void vscode.window.showInformationMessage(`No drift report for ${element.info.origin}: ${why}.`);
      return undefined;
    }
    const { drift, text } = state;
    const header = `Drift of ${drift.report.input.spec} from ${drift.against} (buf breaking, ${drift.report.rules} rules; the same as \`protocall drift ${drift.report.input.spec} --against ${drift.against}\`)\n\n`;
    const doc = await vscode.workspace.openTextDocument({ content: header + text, language: "plaintext" });
    await vscode.window.showTextDocument(doc, { preview: true });
    return drift;
  }

  /** protocall.services.copyName. */
  async copyName(element?: ServicesElement): Promise<string | undefined> {
    if (element?.type !== "node") return undefined;
    await vscode.env.clipboard.writeText(element.node.name);
    return element.node.name;
  }

  /** .proto, buf and descriptor-set changes rebuild on the server; show the result once it settles. */
  private watch(): void {
    const later = () => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => this.provider.refresh(), 500);
    };
    const watcher = vscode.workspace.createFileSystemWatcher(
      "**/{*.proto,buf.yaml,buf.work.yaml,buf.lock,*.binpb}",
    );
    this.ctx.subscriptions.push(
      watcher,
      watcher.onDidChange(later),
      watcher.onDidCreate(later),
      watcher.onDidDelete(later),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (this.ctx.settings.affects(e)) later();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(later),
    );
  }
}

/** A server entry given to the command (by a test or another extension), its URL checked. */
function checkedServer(given: ServiceServer): ServiceServer | undefined {
  const problem = serverUrlProblem(given.url);
  if (problem) {
    void vscode.window.showErrorMessage(problem);
    return undefined;
  }
  return { ...given, url: normalizeServerUrl(given.url) };
}

/** Asks for a server's URL, headers and protocol. */
async function askServer(): Promise<ServiceServer | undefined> {
  const url = await vscode.window.showInputBox({
    title: "Add Server (1/3): URL",
    prompt: "The server's base URL. Its services are read with gRPC server reflection.",
    placeHolder: "http://127.0.0.1:8080",
    ignoreFocusOut: true,
    validateInput: (v) => serverUrlProblem(v),
  });
  if (url === undefined) return undefined;
  const headerText = await vscode.window.showInputBox({
    title: "Add Server (2/3): headers (optional)",
    prompt: "Headers sent with reflection and with new requests, as Name: value; separate several with ;",
    placeHolder: "Authorization: Bearer …",
    ignoreFocusOut: true,
    validateInput: (v) => parseHeaderInput(v).problem,
  });
  if (headerText === undefined) return undefined;
  const protocol = await vscode.window.showQuickPick(protocols, {
    title: "Add Server (3/3): protocol",
    placeHolder: "The protocol for reflection and new requests",
    ignoreFocusOut: true,
  });
  if (!protocol) return undefined;
  const server: ServiceServer = { url: normalizeServerUrl(url) };
  const { headers } = parseHeaderInput(headerText);
  if (headers.length > 0) server.headers = headers;
  if (protocol.value !== "connect") server.protocol = protocol.value;
  return server;
}

/** Opens the .proto file at an element's declaration. */
async function openDefinition(element?: ServicesElement): Promise<vscode.TextEditor | undefined> {
  if (element?.type !== "node" || element.node.kind === "package") return undefined;
  const location = element.node.location;
  if (!location) {
    const why =
      element.source.info.kind === "server"
        ? "a server's reflection carries no source positions"
        : "its schema has no source info, or its .proto file is not in the workspace";
    void vscode.window.showInformationMessage(`No definition to open for ${element.node.name}: ${why}.`);
    return undefined;
  }
  const { start, end } = location.range;
  const selection = new vscode.Range(start.line, start.character, end.line, end.character);
  return vscode.window.showTextDocument(vscode.Uri.parse(location.uri), { selection, preview: true });
}
