// Snapshot tests in the real extension host: the first Send of a `# @snapshot` request writes
// requests/<name>.snapshots.json, a changed response opens the diff of the stored file against the
// new one (a protocall-snapshot document) and protocall.acceptSnapshot, given the diff's document
// as the editor title's button gives it, stores the new response.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import type { SendOutcome } from "../../../src/extension/send/api";
import { type VscodeTest, waitFor } from "../harness";

const rpc = (host: string, text: string) => `### Count
# @protocol grpc
# @snapshot
${host}/demo.v1.DemoService/Count

{"count": 1, "text": "${text}"}
`;

async function send(uri: vscode.Uri): Promise<SendOutcome> {
  const outcome = (await vscode.commands.executeCommand("protocall.send", uri.toString(), 0)) as
    | SendOutcome
    | undefined;
  assert.ok(outcome, "protocall.send returns what it did");
  return outcome;
}

/** The open diff whose new side is a snapshot proposal, if any. */
function snapshotDiff(): vscode.TabInputTextDiff | undefined {
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      const input = tab.input;
      if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === "protocall-snapshot")
        return input;
    }
  }
  return undefined;
}

export const tests: VscodeTest[] = [
  {
    name: "a changed response opens the snapshot diff, and Accept stores the new response",
    timeoutMs: 90_000,
    async run(env) {
      const ext = vscode.extensions.getExtension("protocall.protocall");
      assert.ok(ext);
      await ext.activate();
      const path = join(env.workspace, "requests", "snap.rpc");
      const stored = join(env.workspace, "requests", "snap.snapshots.json");
      writeFileSync(path, rpc(env.demoUrl, "first"));
      const uri = vscode.Uri.file(path);
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc);

      env.step("first Send writes the snapshot");
      const first = await send(uri);
      assert.equal(first.verdict, "passed", JSON.stringify(first.failures));
      assert.ok(existsSync(stored));
      assert.match(readFileSync(stored, "utf8"), /"text": "first"/);

      env.step("a changed response fails and opens the diff");
      const edit = new vscode.WorkspaceEdit();
      edit.replace(uri, new vscode.Range(0, 0, doc.lineCount, 0), rpc(env.demoUrl, "second"));
      await vscode.workspace.applyEdit(edit);
      await doc.save();
      const second = await send(uri);
      assert.equal(second.verdict, "failed");
      assert.match(
        second.failures?.[0]?.message ?? "",
        /snapshot differs at 1 path: messages\[0\]\.text: expected "first", got "second"/,
      );
      const diff = await waitFor("the snapshot diff", async () => snapshotDiff(), 20_000);
      assert.equal(diff.original.fsPath, stored);
      const proposed = await vscode.workspace.openTextDocument(diff.modified);
      assert.match(proposed.getText(), /"text": "second"/);
      assert.match(readFileSync(stored, "utf8"), /"text": "first"/, "nothing is stored before Accept");

      env.step("Accept stores it");
      await vscode.commands.executeCommand("protocall.acceptSnapshot", diff.modified);
      assert.match(readFileSync(stored, "utf8"), /"text": "second"/);
      const third = await send(uri);
      assert.equal(third.verdict, "passed", JSON.stringify(third.failures));
    },
  },
];
