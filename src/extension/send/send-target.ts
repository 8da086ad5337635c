// Which request of which .rpc document a Send or Copy command is about: the arguments of a CodeLens
// (document URI and request index), else the active .rpc editor's request under the cursor, else the
// only request, else the user's pick. Also the key under which a request's responses are kept.
import * as vscode from "vscode";
import { parseRpcFile } from "../../core/rpcfile/parse";
import { requestAt } from "../../core/rpcfile/request-at";

export interface SendTarget {
  document: vscode.TextDocument;
  index: number;
}

/** The key of a request's history: its document and its name (or index, for a nameless request). */
export function requestKey(document: vscode.TextDocument, index: number): string {
  const request = parseRpcFile(document.getText()).requests[index];
  return `${document.uri.toString()}#${request?.name?.text ?? index}`;
}

/** The document and request a command is about, or undefined when there is none (after saying so). */
export async function resolveSendTarget(uriArg: unknown, indexArg: unknown): Promise<SendTarget | undefined> {
  const document = await targetDocument(uriArg);
  if (!document) {
    void vscode.window.showWarningMessage("Protocall: open a .rpc request file to send a request from it.");
    return undefined;
  }
  if (typeof indexArg === "number") return { document, index: indexArg };
  const file = parseRpcFile(document.getText());
  if (file.requests.length === 0) {
    void vscode.window.showWarningMessage(
      `Protocall: ${vscode.workspace.asRelativePath(document.uri)} holds no request; write a URL after ###.`,
    );
    return undefined;
  }
  const editor = vscode.window.activeTextEditor;
  if (editor && editor.document === document) {
    const at = requestAt(file, { line: editor.selection.active.line, character: 0 });
    if (at) return { document, index: at.index };
  }
  if (file.requests.length === 1) return { document, index: 0 };
  const picked = await vscode.window.showQuickPick(
    file.requests.map((r) => ({
      label: r.name?.text ?? `Request ${r.index + 1}`,
      description: r.url?.text,
      detail: `line ${(r.requestLine ?? r.range).start.line + 1}`,
      index: r.index,
    })),
    { title: "Protocall: Which request?", placeHolder: "The cursor is not inside a request" },
  );
  return picked ? { document, index: picked.index } : undefined;
}

/** The document named by the argument (a URI or its string), else the active .rpc editor's. */
async function targetDocument(uriArg: unknown): Promise<vscode.TextDocument | undefined> {
  const uri =
    typeof uriArg === "string" ? vscode.Uri.parse(uriArg) : uriArg instanceof vscode.Uri ? uriArg : undefined;
  if (uri) return vscode.workspace.openTextDocument(uri);
  const editor = vscode.window.activeTextEditor;
  return editor?.document.languageId === "rpc" ? editor.document : undefined;
}
