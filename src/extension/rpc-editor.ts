// Adding a request to a .rpc document in the editor (what "Add Request to .rpc File" and "Paste as
// Request" do): appended to the active .rpc editor, or else in a new untitled .rpc document, with the
// file variable its URL needs defined at the top (unless the file or the environment file defines
// it), and the cursor placed in the body. The text layout is the core's appendRequest.
import { resolve } from "node:path";
import * as vscode from "vscode";
import { type AppendResult, appendRequest } from "../core/rpcfile/append-request";
import { environmentFileName, readEnvironmentFiles } from "../core/rpcfile/environment";
import type { Settings } from "./settings";

/** Where a request was added: the document and the line of its `###` (or its first line). */
export interface AddedRequest {
  document: vscode.TextDocument;
  /** The zero-based line where the request starts. */
  line: number;
}

/**
 * Appends `request` (a request block, ending with a newline) to the active .rpc editor or a new
 * untitled .rpc document. `variable`: a file variable the request uses (`{{host}}`) and its value.
 */
export async function addRequestToEditor(
  settings: Settings,
  request: string,
  variable?: { name: string; value: string },
): Promise<AddedRequest | undefined> {
  const active = vscode.window.activeTextEditor;
  if (active && active.document.languageId === "rpc") {
    const doc = active.document;
    const plan = appendRequest(doc.getText(), request, {
      variable,
      defined: environmentVariables(settings, doc.uri),
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
  const plan = appendRequest("", request, { variable, defined: environmentVariables(settings, undefined) });
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

/** Variable names the environment file defines (any environment), so `@host` is not added over them. */
function environmentVariables(settings: Settings, uri: vscode.Uri | undefined): string[] {
  const folder = (uri && vscode.workspace.getWorkspaceFolder(uri)) ?? vscode.workspace.workspaceFolders?.[0];
  if (folder?.uri.scheme !== "file") return [];
  // protocall.envFile is a restricted setting: VS Code ignores the workspace's value when untrusted.
  const path = resolve(folder.uri.fsPath, settings.get("envFile", folder.uri) || environmentFileName);
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
