// Read-only documents for the mock's calls: protocall-mock-call:/call-<id>.json shows one call as the
// mock's call log keeps it (time, method, protocol, what answered, status, duration, request headers,
// request and response messages), the same JSON the admin path serves.
import * as vscode from "vscode";
import type { MockCall } from "../../core/mock/call-log";

export const mockCallScheme = "protocall-mock-call";

export function mockCallUri(id: number): vscode.Uri {
  return vscode.Uri.from({ scheme: mockCallScheme, path: `/call-${id}.json` });
}

export class MockCallDocumentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly calls: () => readonly MockCall[]) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    const m = /^\/call-(\d+)\.json$/.exec(uri.path);
    const call = m ? this.calls().find((c) => c.id === Number(m[1])) : undefined;
    if (!call) {
      return `${JSON.stringify({ error: `call ${uri.path.slice(1)} is no longer kept (the mock stopped, was reset, or kept newer calls)` }, null, 2)}\n`;
    }
    return `${JSON.stringify(call, null, 2)}\n`;
  }
}
