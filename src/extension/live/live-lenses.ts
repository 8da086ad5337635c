// The code lenses of live streams, made in the extension (they follow the running streams, which the
// language server does not know): "⇄ Start Live Stream" on a request with several body documents (a
// client or bidi stream), and while its stream runs, "▶ Send Next" above each body document,
// "Close Send" and "Save Session as Request" on the request.
import * as vscode from "vscode";
import { parseRpcFile } from "../../core/rpcfile/parse";
import { isStubText } from "../../core/rpcfile/stub-syntax";
import { commandIds } from "../command-table";

export class LiveLenses implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly running: (doc: vscode.TextDocument, index: number) => unknown) {}

  refresh(): void {
    this.changed.fire();
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    const uri = document.uri.toString();
    // A stub file of `protocall mock` holds answers, not requests to stream.
    if (isStubText(document.getText())) return lenses;
    for (const r of parseRpcFile(document.getText()).requests) {
      if (!r.url) continue;
      const line = (r.requestLine ?? r.range).start.line;
      const at = new vscode.Range(line, 0, line, 0);
      const args = [uri, r.index];
      if (!this.running(document, r.index)) {
        if (r.body.length > 1) {
          lenses.push(
            new vscode.CodeLens(at, {
              title: "⇄ Start Live Stream",
              command: commandIds.liveStart,
              arguments: args,
            }),
          );
        }
        continue;
      }
      lenses.push(
        new vscode.CodeLens(at, {
          title: "Close Send",
          command: commandIds.liveCloseSend,
          arguments: args,
        }),
        new vscode.CodeLens(at, {
          title: "Save Session as Request",
          command: commandIds.liveSaveSession,
          arguments: args,
        }),
      );
      r.body.forEach((part, i) => {
        if (part.kind !== "json") return;
        const l = part.range.start.line;
        lenses.push(
          new vscode.CodeLens(new vscode.Range(l, 0, l, 0), {
            title: "▶ Send Next",
            command: commandIds.liveSendNext,
            arguments: [uri, r.index, i],
          }),
        );
      });
    }
    return lenses;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
