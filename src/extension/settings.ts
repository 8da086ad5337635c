// The one reader (and writer) of the `protocall.*` settings: every part of the extension reads its
// settings here, typed and checked, with the defaults of `settings-table.ts`; nothing else in the
// extension calls `workspace.getConfiguration`. Values are read when asked for (VS Code caches the
// configuration), so a setting changed by the user applies at its next use.
import * as vscode from "vscode";
import { type EditorProxySettings, withProxyOverride } from "../core/invoke/proxy-choice";
import type { ListenerSettings } from "../core/webhooks/listener-session";
import { checkServiceServer, type ServerSettings, type ServiceServer } from "../server/protocol";
import {
  checkSetting,
  listenerSettingsFrom,
  reflectionTimeoutMs,
  type SettingKey,
  type SettingsRead,
  type SettingValue,
  serverSettingsFrom,
  settingsSection,
} from "./settings-table";

export class Settings {
  /** One setting of `scope` (a document or folder; settings of `resource` scope differ per folder). */
  get<K extends SettingKey>(key: K, scope?: vscode.Uri): SettingValue<K> {
    return checkSetting(key, vscode.workspace.getConfiguration(settingsSection, scope).get<unknown>(key));
  }

  /** A reader of every setting for one scope. */
  reader(scope?: vscode.Uri): SettingsRead {
    const config = vscode.workspace.getConfiguration(settingsSection, scope);
    return (key) => checkSetting(key, config.get<unknown>(key));
  }

  /** Whether a configuration change touches one of these settings (or, without keys, any `protocall.*`). */
  affects(e: vscode.ConfigurationChangeEvent, ...keys: (SettingKey | "listener")[]): boolean {
    if (keys.length === 0) return e.affectsConfiguration(settingsSection);
    return keys.some((k) => e.affectsConfiguration(`${settingsSection}.${k}`));
  }

  /** Writes a setting to the workspace (or, with no folder open, the user settings). */
  async update<K extends SettingKey>(key: K, value: SettingValue<K>): Promise<void> {
    const target = vscode.workspace.workspaceFolders
      ? vscode.ConfigurationTarget.Workspace
      : vscode.ConfigurationTarget.Global;
    await vscode.workspace.getConfiguration(settingsSection).update(key, value, target);
  }

  /** The language server's settings for `scope`, given the workspace's trust. */
  server(scope?: vscode.Uri): ServerSettings {
    return serverSettingsFrom(this.reader(scope), vscode.workspace.isTrusted);
  }

  /** Milliseconds a reflection look-up may take. */
  reflectionTimeoutMs(scope?: vscode.Uri): number {
    return reflectionTimeoutMs(this.reader(scope));
  }

  /**
   * VS Code's own proxy settings (`http.proxy`, `http.noProxy`), which every connection the
   * extension makes follows (withProxyOverride); the environment's variables apply when they are empty.
   */
  httpProxy(): EditorProxySettings {
    const http = vscode.workspace.getConfiguration("http");
    const proxy = http.get<unknown>("proxy");
    const noProxy = http.get<unknown>("noProxy");
    const strictSSL = http.get<unknown>("proxyStrictSSL");
    return {
      strictSSL: strictSSL === false ? false : undefined,
      proxy: typeof proxy === "string" ? proxy : undefined,
      noProxy: Array.isArray(noProxy) ? noProxy.filter((s): s is string => typeof s === "string") : [],
    };
  }

  /** The environment the extension's connections read, with `http.proxy` and `http.noProxy` applied. */
  connectionEnv(): NodeJS.ProcessEnv {
    return withProxyOverride(process.env, this.httpProxy());
  }

  /** The local listener's settings. */
  listener(): ListenerSettings {
    return listenerSettingsFrom(this.reader());
  }

  /**
   * The Services view's servers (`protocall.servers`) with a string URL: those of the user settings
   * and of the workspace (and its folders) together, not the one hiding the other as VS Code's own
   * merge of an array would; the first entry of a URL wins, the workspace's first. In a restricted
   * workspace VS Code reports no workspace value for this restricted setting. Entries with a field of
   * the wrong type are left out; `serverProblems()` says what is wrong with them.
   */
  servers(): ServiceServer[] {
    return this.serverEntries().servers;
  }

  /** What is wrong with the `protocall.servers` entries left out of `servers()`, one line each. */
  serverProblems(): string[] {
    return this.serverEntries().problems;
  }

  private serverEntries(): { servers: ServiceServer[]; problems: string[] } {
    const inspected = vscode.workspace.getConfiguration(settingsSection).inspect<unknown>("servers");
    const folderValues = (vscode.workspace.workspaceFolders ?? []).map(
      (f) =>
        vscode.workspace.getConfiguration(settingsSection, f.uri).inspect<unknown>("servers")
          ?.workspaceFolderValue,
    );
    const servers: ServiceServer[] = [];
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const list of [inspected?.workspaceValue, ...folderValues, inspected?.globalValue]) {
      for (const s of Array.isArray(list) ? list : []) {
        if (typeof s !== "object" || s === null) continue;
        const url = (s as { url?: unknown }).url;
        if (typeof url !== "string" || seen.has(url)) continue;
        seen.add(url);
        const problem = checkServiceServer(s, `the protocall.servers entry ${url}:`);
        if (problem) problems.push(problem.replace(": .", ": ").replace(/^the/, "The"));
        else servers.push(s as ServiceServer);
      }
    }
    return { servers, problems };
  }

  /**
   * Adds a server to the workspace settings; to the user settings without a workspace folder, or in a
   * restricted workspace (where VS Code ignores the workspace's value of this setting).
   */
  async addServer(server: ServiceServer): Promise<void> {
    const config = vscode.workspace.getConfiguration(settingsSection);
    const hasFolder = (vscode.workspace.workspaceFolders?.length ?? 0) > 0 && vscode.workspace.isTrusted;
    const target = hasFolder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    const inspected = config.inspect<unknown>("servers");
    const current = (hasFolder ? inspected?.workspaceValue : inspected?.globalValue) ?? [];
    const rest = (Array.isArray(current) ? current : []).filter(
      (s) => (s as ServiceServer | null)?.url !== server.url,
    );
    await config.update("servers", [...rest, server], target);
  }

  /** Appends a schema source to `protocall.schemas` (the workspace's, else the user's) unless it is there. */
  async addSchema(spec: string): Promise<void> {
    const config = vscode.workspace.getConfiguration(settingsSection);
    const hasFolder = (vscode.workspace.workspaceFolders?.length ?? 0) > 0 && vscode.workspace.isTrusted;
    const target = hasFolder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    const inspected = config.inspect<unknown>("schemas");
    const current = (hasFolder ? inspected?.workspaceValue : inspected?.globalValue) ?? [];
    const list = (Array.isArray(current) ? current : []).filter((s): s is string => typeof s === "string");
    if (!list.includes(spec)) await config.update("schemas", [...list, spec], target);
  }

  /** Removes the servers with this URL from the workspace and user settings; returns whether any was found. */
  async removeServer(url: string): Promise<boolean> {
    const config = vscode.workspace.getConfiguration(settingsSection);
    const inspected = config.inspect<unknown>("servers");
    let removed = false;
    const targets: [unknown, vscode.ConfigurationTarget][] = [
      [inspected?.workspaceValue, vscode.ConfigurationTarget.Workspace],
      [inspected?.globalValue, vscode.ConfigurationTarget.Global],
    ];
    for (const [value, target] of targets) {
      if (!Array.isArray(value)) continue;
      const matches = (s: unknown) => (s as ServiceServer | null)?.url === url;
      if (!value.some(matches)) continue;
      await config.update(
        "servers",
        value.filter((s) => !matches(s)),
        target,
      );
      removed = true;
    }
    return removed;
  }
}
