// The status bar item of the active environment (from protocall.env.json or protocall.envFile) and
// the "Select Environment…" quick pick that writes the `protocall.environment` workspace setting.
// Shown while an .rpc editor is active or when the workspace has an environment file.
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import * as vscode from "vscode";
import { errorMessage } from "../../core/errors";
import { environmentFileName, environmentNames, readEnvironmentFiles } from "../../core/rpcfile/environment";
import { commandIds } from "../command-table";
import type { Settings } from "../settings";

/** The environment file of the workspace: the setting (relative to the first folder), else protocall.env.json. */
export function workspaceEnvironmentFile(settings: Settings, scope?: vscode.Uri): string | undefined {
  const folder =
    (scope && vscode.workspace.getWorkspaceFolder(scope)) ?? vscode.workspace.workspaceFolders?.[0];
  const setting = settings.get("envFile", scope);
  if (setting) return isAbsolute(setting) || !folder ? setting : join(folder.uri.fsPath, setting);
  return folder ? join(folder.uri.fsPath, environmentFileName) : undefined;
}

export interface EnvironmentStatus extends vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  refresh(): void;
  /** Runs the quick pick; resolves with the chosen environment ("" for none), undefined when dismissed. */
  select(): Promise<string | undefined>;
}

export function createEnvironmentStatus(settings: Settings): EnvironmentStatus {
  const item = vscode.window.createStatusBarItem("protocall.environment", vscode.StatusBarAlignment.Left, 50);
  item.name = "Protocall Environment";
  item.command = commandIds.selectEnvironment;
  const disposables: vscode.Disposable[] = [item];

  const refresh = () => {
    const env = settings.get("environment");
    const file = workspaceEnvironmentFile(settings);
    const hasFile = file !== undefined && existsSync(file);
    item.text = `$(server-environment) ${env || "No Environment"}`;
    item.tooltip = hasFile
      ? `Protocall environment from ${file}: click to change`
      : `No ${environmentFileName} in the workspace: click to create one`;
    const rpcActive = vscode.window.activeTextEditor?.document.languageId === "rpc";
    if (rpcActive || hasFile) item.show();
    else item.hide();
  };

  const select = async (): Promise<string | undefined> => {
    const file = workspaceEnvironmentFile(settings);
    if (!file) {
      void vscode.window.showWarningMessage(
        "Open a folder to use environments (protocall.env.json at its root).",
      );
      return undefined;
    }
    let names: string[];
    try {
      names = environmentNames(readEnvironmentFiles(file));
    } catch (err) {
      void vscode.window.showErrorMessage(`Protocall: ${errorMessage(err)}`);
      return undefined;
    }
    if (names.length === 0) {
      const create = "Create protocall.env.json";
      const answer = await vscode.window.showInformationMessage(
        existsSync(file)
          ? `${file} defines no environment. Add one, such as "dev": {"host": "http://127.0.0.1:8080"}.`
          : `There is no ${environmentFileName} at the workspace root. Environments hold variables, such as {{host}}, for .rpc files.`,
        ...(existsSync(file) ? ["Open File"] : [create]),
      );
      if (answer === create) {
        const skeleton = `{\n  "$shared": {},\n  "dev": {\n    "host": "http://127.0.0.1:8080"\n  }\n}\n`;
        await vscode.workspace.fs.writeFile(vscode.Uri.file(file), new TextEncoder().encode(skeleton));
      }
      if (answer) await vscode.window.showTextDocument(vscode.Uri.file(file));
      refresh();
      return undefined;
    }
    const current = settings.get("environment");
    const none = "No Environment";
    const picked = await vscode.window.showQuickPick(
      [
        { label: none, description: current === "" ? "active" : "only $shared values apply", value: "" },
        ...names.map((n) => ({ label: n, description: n === current ? "active" : undefined, value: n })),
      ],
      { title: "Protocall: Select Environment", placeHolder: `Environments of ${file}` },
    );
    if (!picked) return undefined;
    await settings.update("environment", picked.value);
    refresh();
    return picked.value;
  };

  const watcher = vscode.workspace.createFileSystemWatcher(`**/*.json`);
  disposables.push(
    watcher,
    watcher.onDidCreate(refresh),
    watcher.onDidDelete(refresh),
    vscode.window.onDidChangeActiveTextEditor(refresh),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (settings.affects(e)) refresh();
    }),
  );
  refresh();
  return {
    item,
    refresh,
    select,
    dispose() {
      for (const d of disposables) d.dispose();
    },
  };
}
