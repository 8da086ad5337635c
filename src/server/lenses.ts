// Code lenses above each request ("▶ Send", "Load Test…", "Copy as curl") and document symbols (one per request).
import { type CodeLens, type DocumentSymbol, SymbolKind } from "vscode-languageserver";
import type { RpcFile } from "../core/rpcfile/types";
import { copyAsCurlCommand, loadTestCommand, sendCommand } from "./protocol";

export function codeLenses(uri: string, file: RpcFile): CodeLens[] {
  const lenses: CodeLens[] = [];
  for (const r of file.requests) {
    if (!r.url) continue;
    const line = r.range.start.line;
    const range = { start: { line, character: 0 }, end: { line, character: 0 } };
    lenses.push(
      { range, command: { title: "▶ Send", command: sendCommand, arguments: [uri, r.index] } },
      { range, command: { title: "Load Test…", command: loadTestCommand, arguments: [uri, r.index] } },
      { range, command: { title: "Copy as curl", command: copyAsCurlCommand, arguments: [uri, r.index] } },
    );
  }
  return lenses;
}

export function documentSymbols(file: RpcFile): DocumentSymbol[] {
  return file.requests.map((r) => {
    const selection = r.name?.range ?? r.url?.range ?? r.range;
    return {
      name: r.name?.text || r.url?.text || `request ${r.index + 1}`,
      detail: r.name && r.url ? r.url.text : undefined,
      kind: SymbolKind.Function,
      range: r.range,
      selectionRange: selection,
    };
  });
}
