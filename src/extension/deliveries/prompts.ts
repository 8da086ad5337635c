// The Deliveries view's questions to the user: where to replay a delivery (the listener, the forward
// URL, another URL), and in which format and file to export the deliveries. Text from deliveries (a
// forward URL) is shown inert.
import * as vscode from "vscode";
import type { ExportFormat } from "../../core/webhooks/delivery-export";
import { inertText } from "../../core/webhooks/inert-text";

/**
 * Asks where to replay delivery `id`: "listener", "forward" or a URL; undefined when dismissed.
 * `running`: the listener's callback URL when it runs; `forward`: the forward URL, if any.
 */
export async function pickReplayTarget(
  id: number,
  running: string | undefined,
  forward: string | undefined,
): Promise<string | undefined> {
  type Item = vscode.QuickPickItem & { target: "listener" | "forward" | "other" };
  const items: Item[] = [
    {
      label: "$(radio-tower) To the listener",
      detail: running ?? "Starts the listener first",
      target: "listener",
    },
  ];
  if (forward) {
    items.push({ label: "$(arrow-right) To the forward URL", detail: inertText(forward), target: "forward" });
  }
  items.push({ label: "$(globe) To another URL…", target: "other" });
  const pick = await vscode.window.showQuickPick(items, { title: `Replay delivery #${id}` });
  if (!pick) return undefined;
  if (pick.target !== "other") return pick.target;
  return vscode.window.showInputBox({
    title: `Replay delivery #${id} to`,
    prompt: "The URL to POST the delivery to (Connect unary, its original bytes)",
    placeHolder: "https://localhost:8080/buf.alpha.webhook.v1alpha1.EventService/Event",
    ignoreFocusOut: true,
    validateInput: (value) => {
      try {
        const u = new URL(value.trim());
        return u.protocol === "http:" || u.protocol === "https:"
          ? undefined
          : "Use an http:// or https:// URL";
      } catch {
        return "Enter a URL, e.g. https://localhost:8080/hook";
      }
    },
  });
}

/** Asks for the export format (unless given); undefined when dismissed. */
export async function pickExportFormat(given?: ExportFormat): Promise<ExportFormat | undefined> {
  if (given) return given;
  const pick = await vscode.window.showQuickPick(
    [
      {
        label: "JSON Lines",
        description: ".jsonl",
        detail: "One delivery per line",
        format: "jsonl" as const,
      },
      {
        label: "JSON array",
        description: ".json",
        detail: "One array of deliveries",
        format: "json" as const,
      },
    ],
    { title: "Export deliveries as" },
  );
  return pick?.format;
}

/** Asks for the file to export to (unless given); undefined when dismissed. */
export async function pickExportFile(
  format: ExportFormat,
  given?: vscode.Uri,
): Promise<vscode.Uri | undefined> {
  if (given) return given;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  return vscode.window.showSaveDialog({
    title: "Export deliveries",
    defaultUri: folder ? vscode.Uri.joinPath(folder, `deliveries.${format}`) : undefined,
    filters: format === "jsonl" ? { "JSON Lines": ["jsonl", "ndjson"] } : { JSON: ["json"] },
  });
}
