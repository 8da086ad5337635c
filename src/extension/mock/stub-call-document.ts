// "Call this stub" documents: protocall-stub-call:/<stub file>/stub-<index>.rpc?<n> holds the stub's
// request part as a request file aimed at the running mock (core/mock/stub-request.ts), which Send
// runs like any request. Each call gets a fresh URI (the query), so it always reflects the stub file
// as it is now and the mock's current address.
import { dirname } from "node:path";
import * as vscode from "vscode";
import { stubRequestText } from "../../core/mock/stub-request";

export const stubCallScheme = "protocall-stub-call";

export class StubCallDocuments implements vscode.TextDocumentContentProvider {
  private next = 1;
  private readonly texts = new Map<string, string>();

  /** A document calling stub `index` of `stubFile` at `baseUrl`; undefined when there is no such stub. */
  async open(
    stubFile: vscode.TextDocument,
    index: number,
    baseUrl: string,
  ): Promise<vscode.TextDocument | undefined> {
    const baseDir = stubFile.uri.scheme === "file" ? dirname(stubFile.uri.fsPath) : process.cwd();
    const text = stubRequestText(stubFile.getText(), index, baseUrl, baseDir);
    if (text === undefined) return undefined;
    const uri = vscode.Uri.from({
      scheme: stubCallScheme,
      path: `${stubFile.uri.path}/stub-${index + 1}.rpc`,
      query: String(this.next++),
    });
    this.texts.set(uri.toString(), text);
    // Only the latest few are kept: each call makes its own.
    if (this.texts.size > 50) this.texts.delete(this.texts.keys().next().value as string);
    return vscode.workspace.openTextDocument(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return (
      this.texts.get(uri.toString()) ?? "# This stub call is no longer kept: use Call this stub again.\n"
    );
  }
}
