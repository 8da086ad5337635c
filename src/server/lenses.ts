// Code lenses above each request ("▶ Send", "Load Test…", "Copy as curl") and document symbols (one per request).
import { type CodeLens, type DocumentSymbol, SymbolKind } from "vscode-languageserver";
import { isStubText, type ParsedStubFile, parseStubFile } from "../core/rpcfile/stub-syntax";
import type { RpcFile } from "../core/rpcfile/types";
import { callStubCommand, copyAsCurlCommand, loadTestCommand, sendCommand } from "./protocol";

/**
 * The lenses of a document: a stub file of `protocall mock` holds answers, not requests to send, so
 * each stub gets "▶ Call this stub" (on the mock); a request file gets Send and Copy as curl.
 */
export function documentLenses(uri: string, text: string, file: () => RpcFile): CodeLens[] {
  return isStubText(text) ? stubLenses(uri, parseStubFile(text)) : codeLenses(uri, file());
}

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

/** Above each stub of a mock's stub file: "▶ Call this stub" (sent to the running mock, started if needed). */
export function stubLenses(uri: string, file: ParsedStubFile): CodeLens[] {
  return file.stubs.map((stub, index) => {
    const range = { start: { line: stub.line, character: 0 }, end: { line: stub.line, character: 0 } };
    return {
      range,
      command: { title: "▶ Call this stub", command: callStubCommand, arguments: [uri, index] },
    };
  });
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
