// The Services view (`protocall.services`) and its commands: refresh, add/remove a server, add a
// request for a method, go to a definition, copy a full name. The view starts the language server
// when it opens; the server owns the schemas (one build, one cache, one set of compiler errors).
import * as vscode from "vscode";
import { normalizeServerUrl, parseHeaderInput, serverUrlProblem } from "../../core/schema/server-entry";
import { refreshRequest, type ServiceServer } from "../../server/protocol";
import type { ExtensionShared } from "../shared";
import { type AddedRequest, addRequest } from "./add-request";
import { addServerSetting, configuredServers, removeServerSetting } from "./servers-setting";
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

/** Registers this part's commands and views; returns its API (part of activate()'s ProtocallApi). */
export function registerServices(shared: ExtensionShared): ServicesApi {
  const { context } = shared;
  const provider = new ServicesTree(shared, configuredServers);
  const view = vscode.window.createTreeView(servicesViewId, {
    treeDataProvider: provider,
    showCollapseAll: true,
  });

  // The view needs the language server: start it as soon as the view shows (right after activation
  // when the view is what activated the extension), so that its start overlaps the rest of the
  // workbench's work instead of waiting for the tree's first request.
  const startServer = () =>
    setTimeout(() => {
      void shared.languageClient().catch(() => undefined);
    }, 0);
  if (view.visible) startServer();
  context.subscriptions.push(
    view.onDidChangeVisibility((e) => {
      if (e.visible) startServer();
    }),
  );

  const refresh = async () => {
    try {
      const client = await shared.languageClient();
      await client.sendRequest(refreshRequest, null);
    } catch (err) {
      shared.log.warn(`Refreshing the schemas failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    provider.refresh();
  };

  // .proto, buf and descriptor-set changes rebuild on the server; show the result once it settles.
  let timer: NodeJS.Timeout | undefined;
  const later = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => provider.refresh(), 500);
  };
  const watcher = vscode.workspace.createFileSystemWatcher(
    "**/{*.proto,buf.yaml,buf.work.yaml,buf.lock,*.binpb}",
  );
  watcher.onDidChange(later);
  watcher.onDidCreate(later);
  watcher.onDidDelete(later);

  const add = (element: ServicesElement) => addRequest(shared, element as NodeElement);

  context.subscriptions.push(
    provider,
    view,
    watcher,
    { dispose: () => timer && clearTimeout(timer) },
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("protocall")) later();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(later),
    vscode.commands.registerCommand("protocall.services.refresh", refresh),
    vscode.commands.registerCommand("protocall.services.addServer", (given?: ServiceServer) =>
      addServer(given).then((s) => {
        if (s) provider.refresh();
        return s;
      }),
    ),
    vscode.commands.registerCommand("protocall.services.removeServer", async (element?: ServicesElement) => {
      const url = element?.type === "source" ? (element.server?.url ?? element.info.origin) : undefined;
      if (!url) return false;
      const removed = await removeServerSetting(url);
      if (!removed) {
        void vscode.window.showWarningMessage(
          `${url} is not in the workspace or user settings (protocall.servers); remove it where it is configured.`,
        );
      }
      provider.refresh();
      return removed;
    }),
    vscode.commands.registerCommand("protocall.services.addRequest", add),
    vscode.commands.registerCommand("protocall.services.goToDefinition", goToDefinition),
    vscode.commands.registerCommand("protocall.services.copyName", async (element?: ServicesElement) => {
      if (element?.type !== "node") return undefined;
      await vscode.env.clipboard.writeText(element.node.name);
      return element.node.name;
    }),
  );

  return { provider, view, refresh, addRequest: add };
}

/** Asks for a server's URL, headers and protocol (or takes a given entry) and saves it. */
async function addServer(given?: ServiceServer): Promise<ServiceServer | undefined> {
  let server: ServiceServer;
  if (given && typeof given === "object" && typeof given.url === "string") {
    const problem = serverUrlProblem(given.url);
    if (problem) {
      void vscode.window.showErrorMessage(problem);
      return undefined;
    }
    server = { ...given, url: normalizeServerUrl(given.url) };
  } else {
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
    server = { url: normalizeServerUrl(url) };
    const { headers } = parseHeaderInput(headerText);
    if (headers.length > 0) server.headers = headers;
    if (protocol.value !== "connect") server.protocol = protocol.value;
  }
  await addServerSetting(server);
  return server;
}

/** Opens the .proto file at an element's declaration. */
async function goToDefinition(element?: ServicesElement): Promise<vscode.TextEditor | undefined> {
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
