// Read-only documents for proxied calls: protocall-traffic:/call-<id>.txt shows the call as
// call-document.ts writes it (headers, each message with its time, trailers).
import * as vscode from "vscode";
import { callDocument } from "../../core/proxy/call-document";
import type { ProxiedCall } from "../../core/proxy/call-store";

export const trafficScheme = "protocall-traffic";

export function callUri(id: number): vscode.Uri {
  return vscode.Uri.from({ scheme: trafficScheme, path: `/call-${id}.txt` });
}

export class TrafficDocumentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly find: (id: number) => ProxiedCall | undefined) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    const m = /^\/call-(\d+)\.txt$/.exec(uri.path);
    const call = m ? this.find(Number(m[1])) : undefined;
    return call ? callDocument(call) : `${uri.path.slice(1)} is no longer in the store (pruned)\n`;
  }
}
