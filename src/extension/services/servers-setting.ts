// The `protocall.servers` setting: the servers the Services view reflects. Entries are added to the
// workspace settings (the user settings when no folder is open) and removed from wherever they are.
import * as vscode from "vscode";
import type { ServiceServer } from "../../server/protocol";

const section = "protocall";
const key = "servers";

/**
 * The configured servers with a string URL: those of the user settings and of the workspace (and
 * its folders) together, not the one hiding the other as VS Code's own merge of an array would;
 * the first entry of a URL wins, the workspace's first. In a restricted workspace VS Code reports
 * no workspace value for this restricted setting.
 */
export function configuredServers(): ServiceServer[] {
  const inspected = vscode.workspace.getConfiguration(section).inspect<unknown[]>(key);
  const folderValues = (vscode.workspace.workspaceFolders ?? []).map(
    (f) => vscode.workspace.getConfiguration(section, f.uri).inspect<unknown[]>(key)?.workspaceFolderValue,
  );
  const out: ServiceServer[] = [];
  const seen = new Set<string>();
  for (const list of [inspected?.workspaceValue, ...folderValues, inspected?.globalValue]) {
    for (const s of Array.isArray(list) ? list : []) {
      if (typeof s !== "object" || s === null) continue;
      const url = (s as { url?: unknown }).url;
      if (typeof url !== "string" || seen.has(url)) continue;
      seen.add(url);
      out.push(s as ServiceServer);
    }
  }
  return out;
}

/**
 * Adds a server to the workspace settings; to the user settings without a workspace folder, or in a
 * restricted workspace (where VS Code ignores the workspace's value of this setting).
 */
export async function addServerSetting(server: ServiceServer): Promise<void> {
  const config = vscode.workspace.getConfiguration(section);
  const hasFolder = (vscode.workspace.workspaceFolders?.length ?? 0) > 0 && vscode.workspace.isTrusted;
  const target = hasFolder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  const inspected = config.inspect<ServiceServer[]>(key);
  const current = (hasFolder ? inspected?.workspaceValue : inspected?.globalValue) ?? [];
  const rest = current.filter((s) => s.url !== server.url);
  await config.update(key, [...rest, server], target);
}

/** Removes the entries with this URL from the workspace and user settings; returns whether any was found. */
export async function removeServerSetting(url: string): Promise<boolean> {
  const config = vscode.workspace.getConfiguration(section);
  const inspected = config.inspect<ServiceServer[]>(key);
  let removed = false;
  const targets: [ServiceServer[] | undefined, vscode.ConfigurationTarget][] = [
    [inspected?.workspaceValue, vscode.ConfigurationTarget.Workspace],
    [inspected?.globalValue, vscode.ConfigurationTarget.Global],
  ];
  for (const [value, target] of targets) {
    if (!Array.isArray(value) || !value.some((s) => s?.url === url)) continue;
    await config.update(
      key,
      value.filter((s) => s?.url !== url),
      target,
    );
    removed = true;
  }
  return removed;
}
