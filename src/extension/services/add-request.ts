// "Add Request to .rpc File" (a click on a method in the Services view): the language server writes
// the request (the method's comments, its URL, a JSON skeleton of the input message); it is appended
// to the active .rpc editor, or else opens in a new untitled .rpc document, with the cursor in the
// body. A server's requests use its URL (and its protocol, headers and TLS options); a workspace
// schema's use `{{host}}`, defined at the top of the file (as the first configured server, else
// http://localhost:8080) unless the file or the environment file already defines it.
import { resolve } from "node:path";
import * as vscode from "vscode";
import { type AppendResult, appendRequest } from "../../core/rpcfile/append-request";
import { environmentFileName, readEnvironmentFiles } from "../../core/rpcfile/environment";
import { normalizeServerUrl } from "../../core/schema/server-entry";
import {
  type ServiceRequestTextParams,
  type ServiceRequestTextResult,
  serviceRequestTextRequest,
} from "../../server/protocol";
import type { ExtensionShared } from "../shared";
import { configuredServers } from "./servers-setting";
import type { NodeElement } from "./tree";

const hostVariable = "host";
const fallbackHost = "http://localhost:8080";

/** What addRequest did: the document and where the request starts and the cursor is. */
export interface AddedRequest {
  document: vscode.TextDocument;
  /** The zero-based line of the request's `###` line. */
  line: number;
}

export async function addRequest(
  shared: ExtensionShared,
  element: NodeElement,
): Promise<AddedRequest | undefined> {
  if (element?.type !== "node" || element.node.kind !== "method") return undefined;
  const server = element.source.server;
  const params: ServiceRequestTextParams = {
    source: element.source.info.id,
    server,
    method: element.node.name,
    baseUrl: server ? normalizeServerUrl(server.url) : `{{${hostVariable}}}`,
  };
  const client = await shared.languageClient();
  const result = await client.sendRequest<ServiceRequestTextResult>(serviceRequestTextRequest, params);
  if (!result.text) {
    void vscode.window.showErrorMessage(result.error ?? `Cannot write a request for ${element.node.name}.`);
    return undefined;
  }
  const variable = server ? undefined : { name: hostVariable, value: defaultHost() };
  const active = vscode.window.activeTextEditor;
  if (active && active.document.languageId === "rpc") {
    const doc = active.document;
    const plan = appendRequest(doc.getText(), result.text, {
      variable,
      defined: environmentVariables(doc.uri),
    });
    const ok = await active.edit((b) => {
      for (const i of plan.inserts) b.insert(doc.positionAt(i.offset), i.text);
    });
    if (!ok) {
      void vscode.window.showErrorMessage(`Cannot edit ${doc.uri.fsPath}: the document changed; try again.`);
      return undefined;
    }
    return place(active, plan);
  }
  const plan = appendRequest("", result.text, { variable, defined: environmentVariables(undefined) });
  const content = plan.inserts.map((i) => i.text).join("");
  const doc = await vscode.workspace.openTextDocument({ language: "rpc", content });
  const editor = await vscode.window.showTextDocument(doc);
  return place(editor, plan);
}

function place(editor: vscode.TextEditor, plan: AppendResult): AddedRequest {
  const doc = editor.document;
  const cursor = doc.positionAt(plan.cursor);
  editor.selection = new vscode.Selection(cursor, cursor);
  editor.revealRange(new vscode.Range(cursor, cursor), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  let line = cursor.line;
  while (line > 0 && !doc.lineAt(line).text.startsWith("###")) line--;
  return { document: doc, line };
}

/** The URL `{{host}}` stands for in a new file: the first configured server, else localhost:8080. */
function defaultHost(): string {
  const first = configuredServers()[0];
  return first ? normalizeServerUrl(first.url) : fallbackHost;
}

/** Variable names the environment file defines (any environment), so `@host` is not added over them. */
function environmentVariables(uri: vscode.Uri | undefined): string[] {
  const folder = (uri && vscode.workspace.getWorkspaceFolder(uri)) ?? vscode.workspace.workspaceFolders?.[0];
  if (folder?.uri.scheme !== "file") return [];
  // protocall.envFile is a restricted setting: VS Code ignores the workspace's value when untrusted.
  const configured = vscode.workspace.getConfiguration("protocall", folder.uri).get<string>("envFile", "");
  const path = resolve(folder.uri.fsPath, configured || environmentFileName);
  try {
    const files = readEnvironmentFiles(path);
    const names = new Set<string>();
    for (const f of [files.shared, files.private]) {
      for (const vars of Object.values(f?.content ?? {})) for (const n of Object.keys(vars)) names.add(n);
    }
    return [...names];
  } catch {
    return [];
  }
}
