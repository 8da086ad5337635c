// Panels left from before a window reload. The response panel and the load panel show what this
// window's extension host holds in memory (a response history, a run), which a reload ends; VS Code
// would bring each back as an empty editor group (it restores a webview only through a serializer).
// Each is closed as VS Code brings it back, so the editor opens as the user left it, minus the panels
// whose content is gone.
import * as vscode from "vscode";

/** The webview panel types whose content does not outlive the window. */
export const memoryOnlyPanels = ["protocall.response", "protocall.load"] as const;

export function closeStalePanels(subscriptions: vscode.Disposable[]): void {
  for (const viewType of memoryOnlyPanels) {
    subscriptions.push(
      vscode.window.registerWebviewPanelSerializer(viewType, {
        async deserializeWebviewPanel(panel) {
          panel.dispose();
        },
      }),
    );
  }
}
