// The extension's shell inside the real extension host: activation and its API, the language client
// starting for an .rpc file (its CodeLens, symbols, hovers and diagnostics come from the server), and
// the restricted-mode declaration.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as vscode from "vscode";
import { type VscodeTest, waitFor } from "../harness";

async function openRpc(path: string): Promise<vscode.TextDocument> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
  await vscode.window.showTextDocument(doc);
  return doc;
}

function positionOf(doc: vscode.TextDocument, text: string, offset = 1): vscode.Position {
  const i = doc.getText().indexOf(text);
  assert.ok(i >= 0, `"${text}" is not in ${doc.uri.fsPath}`);
  return doc.positionAt(i + offset);
}

function hoverText(hovers: vscode.Hover[]): string {
  return hovers
    .flatMap((h) => h.contents)
    .map((c) => (typeof c === "string" ? c : "value" in c ? c.value : ""))
    .join("\n");
}

export const tests: VscodeTest[] = [
  {
    name: "the extension activates and returns its API",
    async run() {
      const ext = vscode.extensions.getExtension("protocall.protocall");
      assert.ok(ext, "protocall.protocall is installed");
      const api = await ext.activate();
      assert.equal(ext.isActive, true);
      for (const part of ["send", "services", "webhooks", "deliveries"]) {
        assert.ok(part in (api as object), `activate() returns the ${part} API`);
      }
      // Every command the manifest declares is registered (activate() registers the command table).
      const commands = new Set(await vscode.commands.getCommands(true));
      const declared = (ext.packageJSON.contributes.commands as { command: string }[]).map((c) => c.command);
      assert.ok(declared.length >= 39, `package.json declares ${declared.length} commands`);
      for (const id of declared) assert.ok(commands.has(id), `the command ${id} is registered`);
    },
  },
  {
    name: "restricted mode is declared in the manifest; this workspace is trusted",
    async run() {
      const ext = vscode.extensions.getExtension("protocall.protocall");
      const caps = ext?.packageJSON.capabilities?.untrustedWorkspaces;
      assert.equal(caps?.supported, "limited");
      assert.ok(
        Array.isArray(caps.restrictedConfigurations) &&
          caps.restrictedConfigurations.includes("protocall.bufPath"),
      );
      assert.equal(vscode.workspace.isTrusted, true);
    },
  },
  {
    name: "opening an .rpc file starts the language server: CodeLens, symbols and hovers from the workspace build",
    timeoutMs: 60_000,
    async run(env) {
      const doc = await openRpc(join(env.workspace, "requests/demo.rpc"));
      assert.equal(doc.languageId, "rpc");
      const lenses = await waitFor(
        "CodeLens from the language server",
        async () => {
          const l = await vscode.commands.executeCommand<vscode.CodeLens[]>(
            "vscode.executeCodeLensProvider",
            doc.uri,
            100,
          );
          return l && l.length > 0 ? l : undefined;
        },
        40_000,
      );
      assert.ok(
        lenses.some((l) => l.command?.title.includes("Send")),
        "a Send lens",
      );
      const symbols = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>(
        "vscode.executeDocumentSymbolProvider",
        doc.uri,
      );
      assert.ok(
        symbols.some((s) => s.name.includes("Greet someone")),
        `symbols: ${symbols.map((s) => s.name)}`,
      );
      // The field's comment comes from examples/proto: the server built the workspace's buf module.
      const text = await waitFor(
        "a hover with the field's comment",
        async () => {
          const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
            "vscode.executeHoverProvider",
            doc.uri,
            positionOf(doc, '"name": "world"', 2),
          );
          const t = hoverText(hovers);
          return t.includes("The name of the person") ? t : undefined;
        },
        40_000,
      );
      assert.match(text, /string/);
    },
  },
  {
    name: "an unknown method in an .rpc file is a diagnostic",
    timeoutMs: 60_000,
    async run(env) {
      const path = join(env.workspace, "requests/shell-suite-bad.rpc");
      await writeFile(path, `### bad\n${env.demoUrl}/demo.v1.GreetService/Greeet\n\n{"name": "x"}\n`);
      const doc = await openRpc(path);
      const diags = await waitFor(
        "a diagnostic for Greeet",
        () => {
          const d = vscode.languages.getDiagnostics(doc.uri);
          return d.some((x) => /Greeet/.test(x.message)) ? d : undefined;
        },
        40_000,
      );
      const d = diags.find((x) => /Greeet/.test(x.message));
      assert.equal(d?.range.start.line, 1);
    },
  },
];
