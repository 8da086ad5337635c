// Restricted mode: in an untrusted workspace the extension still activates and the language server
// still parses .rpc files, but it does not build the workspace's .proto files.
import assert from "node:assert/strict";
import { join } from "node:path";
import * as vscode from "vscode";
import { type VscodeTest, waitFor } from "../harness";

/** This suite runs in a code-server whose workspace is not trusted. */
export const workspaceTrust = false;

export const tests: VscodeTest[] = [
  {
    name: "the workspace is untrusted and the extension activates",
    async run() {
      assert.equal(vscode.workspace.isTrusted, false);
      const ext = vscode.extensions.getExtension("protocall.protocall");
      await ext?.activate();
      assert.equal(ext?.isActive, true);
    },
  },
  {
    name: "the language server runs but does not build the workspace's .proto files",
    timeoutMs: 60_000,
    async run(env) {
      const doc = await vscode.workspace.openTextDocument(
        vscode.Uri.file(join(env.workspace, "requests/demo.rpc")),
      );
      await vscode.window.showTextDocument(doc);
      // The server answers (it parses the file: one symbol per request)...
      const symbols = await waitFor(
        "document symbols from the language server",
        async () => {
          const s = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>(
            "vscode.executeDocumentSymbolProvider",
            doc.uri,
          );
          return s && s.length > 0 ? s : undefined;
        },
        40_000,
      );
      assert.ok(symbols.some((s) => s.name.includes("Greet someone")));
      // ...but knows no schema: no field comment from examples/proto on hover. (A trusted workspace
      // shows it within a second of the symbols, see the shell suite; watch for 5 s.)
      const at = doc.positionAt(doc.getText().indexOf('"name": "world"') + 2);
      const until = Date.now() + 5000;
      while (Date.now() < until) {
        const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
          "vscode.executeHoverProvider",
          doc.uri,
          at,
        );
        const text = hovers
          .flatMap((h) => h.contents)
          .map((c) => (typeof c === "string" ? c : "value" in c ? c.value : ""))
          .join("\n");
        assert.doesNotMatch(text, /The name of the person/);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  },
];
