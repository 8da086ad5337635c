// Discovery for the Test Explorer: every .rpc file of the workspace is a test item, each of its
// requests a child item whose range is the request (so the gutter shows a run icon on its first
// line). Items follow the files: created, changed (saved or edited, from the editor's text) and
// deleted files update their items. Ids: the file's URI, and `<uri>#<index>` for a request.
import * as vscode from "vscode";
import { parseRpcFile } from "../../core/rpcfile/parse";
import { isStubText } from "../../core/rpcfile/stub-syntax";
import { requestLabel } from "../../core/rpcfile/to-curl";

/** What a request item stands for. */
export interface RequestRef {
  uri: vscode.Uri;
  index: number;
}

const RPC_GLOB = "**/*.rpc";
const EXCLUDE = "**/node_modules/**";

export function requestItemId(uri: vscode.Uri, index: number): string {
  return `${uri.toString()}#${index}`;
}

export class TestItems implements vscode.Disposable {
  private readonly refs = new WeakMap<vscode.TestItem, RequestRef>();
  private readonly disposables: vscode.Disposable[] = [];
  private discovered: Promise<void> | undefined;

  constructor(private readonly controller: vscode.TestController) {
    controller.resolveHandler = async (item) => {
      if (!item) await this.discover();
    };
    // Open .rpc editors get their items (and gutter icons) at once, before the Test Explorer is
    // opened; after activation, so the parser does not load during it.
    const isRpc = (d: vscode.TextDocument) => d.languageId === "rpc" && d.uri.scheme === "file";
    const timer = setTimeout(() => {
      for (const d of vscode.workspace.textDocuments) if (isRpc(d)) this.update(d);
    }, 0);
    this.disposables.push(
      { dispose: () => clearTimeout(timer) },
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (isRpc(e.document)) this.update(e.document);
      }),
      vscode.workspace.onDidOpenTextDocument((d) => {
        if (isRpc(d)) this.update(d);
      }),
    );
  }

  /** The request an item stands for (undefined for a file item). */
  request(item: vscode.TestItem): RequestRef | undefined {
    return this.refs.get(item);
  }

  /** Finds every .rpc file of the workspace once, then keeps the items in step with the files. */
  discover(): Promise<void> {
    this.discovered ??= (async () => {
      const watcher = vscode.workspace.createFileSystemWatcher(RPC_GLOB);
      this.disposables.push(
        watcher,
        watcher.onDidCreate((uri) => void this.updateFromDisk(uri)),
        watcher.onDidChange((uri) => void this.updateFromDisk(uri)),
        watcher.onDidDelete((uri) => this.controller.items.delete(uri.toString())),
      );
      await this.scan();
    })();
    return this.discovered;
  }

  /** Lists the workspace's .rpc files again (the Test Explorer's Refresh). */
  async rescan(): Promise<void> {
    await this.discover();
    this.controller.items.replace([]);
    await this.scan();
  }

  private async scan(): Promise<void> {
    const files = await vscode.workspace.findFiles(RPC_GLOB, EXCLUDE);
    await Promise.all(files.map((uri) => this.updateFromDisk(uri)));
  }

  /** Lists a document's requests (its text as the editor holds it, unsaved edits included). */
  update(document: { uri: vscode.Uri; getText(): string }): vscode.TestItem {
    const { uri } = document;
    const file =
      this.controller.items.get(uri.toString()) ??
      this.controller.createTestItem(uri.toString(), vscode.workspace.asRelativePath(uri), uri);
    this.controller.items.add(file);
    // A stub file of `protocall mock` holds answers, not requests to run.
    const text = document.getText();
    const parsed = isStubText(text) ? { requests: [] } : parseRpcFile(text);
    const children: vscode.TestItem[] = [];
    for (const r of parsed.requests) {
      if (!r.url) continue;
      const item = this.controller.createTestItem(requestItemId(uri, r.index), requestLabel(r), uri);
      const start = r.range.start;
      const line = (r.separator ?? r.requestLine ?? r.range).start.line;
      item.range = new vscode.Range(line, 0, r.range.end.line, r.range.end.character);
      item.description = r.url.text;
      item.sortText = String(start.line).padStart(8, "0");
      this.refs.set(item, { uri, index: r.index });
      children.push(item);
    }
    file.children.replace(children);
    return file;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  private async updateFromDisk(uri: vscode.Uri): Promise<void> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open) {
      this.update(open);
      return;
    }
    try {
      const bytes = await vscode.workspace.fs.readFile(uri);
      const text = new TextDecoder().decode(bytes);
      this.update({ uri, getText: () => text });
    } catch {
      this.controller.items.delete(uri.toString());
    }
  }
}
