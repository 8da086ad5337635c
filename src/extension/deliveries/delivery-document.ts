// Read-only documents for deliveries: protocall-delivery:/delivery-<id>.json shows the decoded
// EventRequest with when and how it arrived (time, remote address, headers, raw size).
import * as vscode from "vscode";
import { deliveryDocument } from "../../core/webhooks/delivery-summary";
import type { ListenerSession } from "../../core/webhooks/listener-session";

export const deliveryScheme = "protocall-delivery";

export function deliveryUri(id: number): vscode.Uri {
  return vscode.Uri.from({ scheme: deliveryScheme, path: `/delivery-${id}.json` });
}

export function deliveryIdOf(uri: vscode.Uri): number | undefined {
  const m = /^\/delivery-(\d+)\.json$/.exec(uri.path);
  return m ? Number(m[1]) : undefined;
}

export class DeliveryDocumentProvider implements vscode.TextDocumentContentProvider {
  constructor(
    private readonly session: ListenerSession,
    /** Fires for an open delivery document whose delivery changed (a forwarding result arrived). */
    readonly onDidChange: vscode.Event<vscode.Uri>,
  ) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const id = deliveryIdOf(uri);
    const delivery = id === undefined ? undefined : await this.session.get(id);
    if (!delivery) {
      return `${JSON.stringify({ error: `delivery ${uri.path.slice(1)} is no longer in the store (cleared or pruned)` }, null, 2)}\n`;
    }
    return `${JSON.stringify(deliveryDocument(delivery), null, 2)}\n`;
  }
}
