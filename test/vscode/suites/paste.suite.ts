// "Paste as Request" inside the real extension host: a command line (given as the command's
// argument: a headless browser never answers a clipboard read) becomes a request appended to the
// active .rpc file, which then sends to the demo server; without an .rpc editor it opens in a new
// untitled .rpc document; a text that is not such a command line is refused with a clear message and
// changes nothing.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { SendOutcome } from "../../../src/extension/send/api";
import type { VscodeTest } from "../harness";

interface Pasted {
  document: vscode.TextDocument;
  line: number;
  count: number;
  notes: string[];
}

async function paste(text: string): Promise<Pasted | { error: string } | undefined> {
  await vscode.extensions.getExtension("protocall.protocall")?.activate();
  return vscode.commands.executeCommand("protocall.pasteAsRequest", text);
}

export const tests: VscodeTest[] = [
  {
    name: "a buf curl command line is appended to the active .rpc file as a request that sends",
    timeoutMs: 60_000,
    async run(env) {
      const path = join(env.workspace, "requests", "pasted.rpc");
      writeFileSync(path, "### First\nhttp://127.0.0.1:1/demo.v1.GreetService/Greet\n\n{}\n");
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
      const editor = await vscode.window.showTextDocument(doc);
      const result = await paste(
        `buf curl --protocol grpc \\\n  -d '{"name": "pasted"}' ${env.demoUrl}/demo.v1.GreetService/Greet`,
      );
      assert.ok(result && "document" in result, `pasted: ${JSON.stringify(result)}`);
      assert.equal(result.document.uri.toString(), doc.uri.toString(), "into the active .rpc file");
      assert.equal(result.count, 1);
      assert.equal(
        doc.getText(),
        [
          "### First",
          "http://127.0.0.1:1/demo.v1.GreetService/Greet",
          "",
          "{}",
          "",
          "### Greet",
          "# @protocol grpc",
          `${env.demoUrl}/demo.v1.GreetService/Greet`,
          "",
          '{"name": "pasted"}',
          "",
        ].join("\n"),
      );
      assert.equal(doc.lineAt(result.line).text, "### Greet", "the result says where the request starts");
      assert.ok(editor.selection.active.line > result.line, "the cursor is in the new request");
      const outcome = (await vscode.commands.executeCommand(
        "protocall.send",
        doc.uri.toString(),
        1,
      )) as SendOutcome;
      assert.equal(outcome.sent, true, outcome.problems.join("; "));
      assert.equal(outcome.result?.ok, true, outcome.result?.error?.text);
      assert.match(outcome.result?.messages[0] ?? "", /Hello, pasted/);
      await doc.save();
    },
  },
  {
    name: "without an .rpc editor, grpcurl commands open as requests in a new untitled .rpc document",
    async run() {
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      const result = await paste(
        "grpcurl -plaintext -d '{\"count\": 2}' 127.0.0.1:8080 demo.v1.DemoService/Count\ngrpcurl -plaintext 127.0.0.1:8080 list\n",
      );
      assert.ok(result && "document" in result, `pasted: ${JSON.stringify(result)}`);
      assert.equal(result.document.isUntitled, true);
      assert.equal(result.document.languageId, "rpc");
      assert.equal(result.count, 2);
      const text = result.document.getText();
      assert.match(
        text,
        /^### Count\n# @protocol grpc\nhttp:\/\/127\.0\.0\.1:8080\/demo\.v1\.DemoService\/Count\n/,
      );
      assert.match(
        text,
        /### List services\n# @list-services\n# @protocol grpc\nhttp:\/\/127\.0\.0\.1:8080\n/,
      );
      await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
    },
  },
  {
    name: "a text that is not a curl or grpcurl command line is refused with a clear message, nothing added",
    async run(env) {
      const path = join(env.workspace, "requests", "pasted.rpc");
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
      await vscode.window.showTextDocument(doc);
      const before = doc.getText();
      for (const [text, message] of [
        [
          "curl -X POST https://example.com/x",
          /cannot paste as a request: "curl -X" is not one: copy a buf curl, protocall curl or grpcurl command line/,
        ],
        [
          "buf curl -H 'x: 1' -d '{}",
          /cannot paste as a request: a single quote \('\) is not closed: paste the whole command/,
        ],
        [
          "grpcurl -plaintext localhost:8080",
          /cannot paste as a request: the grpcurl command names no method/,
        ],
      ] as const) {
        const result = await paste(text);
        assert.ok(result && "error" in result, `refused: ${text}`);
        assert.match(result.error, message);
      }
      assert.equal(doc.getText(), before, "the document is unchanged");
    },
  },
];
