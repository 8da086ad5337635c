// The registries of the Webhooks view and what the editor remembers about them: entries from the
// `protocall.registries` setting, ones added with "Add Registry…" (kept for the user, across
// workspaces), and the local registry while it runs; API tokens in the editor's secret storage, keyed
// by the registry's URL (the local registry's under one fixed key, as its port changes from run to
// run); and the repositories added under each registry, per workspace.
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../../core/errors";
import type { LocalRegistry } from "../../core/registry-emulator/local-registry";
import { registryBaseUrl, registryUrlProblem } from "../../core/webhooks/registry-url";
import { parseRepositoryName, repositoryNameProblem } from "../../core/webhooks/repository-name";
import type { ProtocallContext } from "../context";

export interface RegistryEntry {
  /** Stable key: the base URL, or `local` for the local registry (whose port changes per run). */
  readonly key: string;
  readonly name: string;
  /** Base URL, e.g. `https://buf.example.com`. */
  readonly url: string;
  readonly source: "settings" | "added" | "local";
  /** PEM file of extra trusted CAs (the setting's `caFile`, resolved against the workspace folder). */
  readonly caFile?: string;
}

const addedKey = "protocall.webhooks.registries";
const repositoriesKey = "protocall.webhooks.repositories";
const secretKey = (url: string) => `protocall.registryToken:${url}`;

interface StoredRegistry {
  name: string;
  url: string;
}

export class RegistryStore implements vscode.Disposable {
  private localRegistry: { entry: RegistryEntry; registry: LocalRegistry } | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when registries, tokens or repositories change. */
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly context: ProtocallContext) {
    this.subscriptions.push(
      this.changed,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (context.settings.affects(e, "registries")) this.changed.fire();
      }),
      context.secrets.onDidChange((e) => {
        if (e.key.startsWith("protocall.registryToken:")) this.changed.fire();
      }),
    );
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
  }

  /** Every registry (local first, then the setting's, then added ones) and the setting's bad entries. */
  list(): { entries: RegistryEntry[]; problems: string[] } {
    const entries: RegistryEntry[] = [];
    const problems: string[] = [];
    const seen = new Set<string>();
    if (this.localRegistry) {
      entries.push(this.localRegistry.entry);
      seen.add(this.localRegistry.entry.url);
    }
    this.context.settings.get("registries").forEach((item, i) => {
      const where = `Setting protocall.registries[${i}]`;
      const obj = item as { name?: unknown; url?: unknown; caFile?: unknown } | null;
      if (!obj || typeof obj !== "object" || typeof obj.url !== "string") {
        problems.push(
          `${where} needs a "url" string, e.g. { "name": "buf.build", "url": "https://buf.build" }`,
        );
        return;
      }
      const problem = registryUrlProblem(obj.url);
      if (problem) {
        problems.push(`${where}: ${problem}`);
        return;
      }
      const url = registryBaseUrl(obj.url);
      if (seen.has(url)) return;
      seen.add(url);
      if (obj.caFile !== undefined && (typeof obj.caFile !== "string" || obj.caFile.trim() === "")) {
        problems.push(`${where}: "caFile" must be the path of a PEM file`);
        return;
      }
      const name = typeof obj.name === "string" && obj.name.trim() ? obj.name.trim() : new URL(url).host;
      const caFile = typeof obj.caFile === "string" ? resolveSettingPath(obj.caFile.trim()) : undefined;
      entries.push({ key: url, name, url, source: "settings", ...(caFile ? { caFile } : {}) });
    });
    for (const stored of this.added()) {
      if (seen.has(stored.url)) continue;
      seen.add(stored.url);
      entries.push({ key: stored.url, name: stored.name, url: stored.url, source: "added" });
    }
    return { entries, problems };
  }

  /** The registry with this key, URL (in any form the user may write it) or name. */
  find(keyUrlOrName: string): RegistryEntry | undefined {
    const { entries } = this.list();
    const byKey = entries.find((e) => e.key === keyUrlOrName || e.name === keyUrlOrName);
    if (byKey) return byKey;
    if (registryUrlProblem(keyUrlOrName)) return undefined;
    const url = registryBaseUrl(keyUrlOrName);
    return entries.find((e) => e.url === url);
  }

  /** Resolves a registry or fails with a message naming what was asked for. */
  get(keyUrlOrName: string): RegistryEntry {
    const entry = this.find(keyUrlOrName);
    if (!entry) {
      throw new ProtocallError(
        `no registry "${keyUrlOrName}" in the Webhooks view: add it with Add Registry…`,
      );
    }
    return entry;
  }

  /** Adds a registry by name and address (a domain means https://domain); returns it. */
  async add(name: string, address: string): Promise<RegistryEntry> {
    const url = registryBaseUrl(address);
    const existing = this.list().entries.find((e) => e.url === url);
    if (existing) {
      throw new ProtocallError(`${url} is already in the Webhooks view as "${existing.name}"`);
    }
    const label = name.trim() || new URL(url).host;
    await this.context.globalState.update(addedKey, [...this.added(), { name: label, url }]);
    this.changed.fire();
    return { key: url, name: label, url, source: "added" };
  }

  /** Removes an added registry (a registry from the settings is removed there). */
  async remove(entry: RegistryEntry): Promise<void> {
    if (entry.source === "settings") {
      throw new ProtocallError(
        `"${entry.name}" comes from the setting protocall.registries: remove it there (Open Settings)`,
      );
    }
    if (entry.source === "added") {
      await this.context.globalState.update(
        addedKey,
        this.added().filter((r) => r.url !== entry.url),
      );
    }
    await this.context.secrets.delete(secretKey(entry.key));
    this.changed.fire();
  }

  token(entry: RegistryEntry): Promise<string | undefined> {
    return Promise.resolve(this.context.secrets.get(secretKey(entry.key)));
  }

  async setToken(entry: RegistryEntry, token: string): Promise<void> {
    if (!token.trim()) throw new ProtocallError("the API token is empty: paste the registry's API token");
    await this.context.secrets.store(secretKey(entry.key), token.trim());
    this.changed.fire();
  }

  async clearToken(entry: RegistryEntry): Promise<void> {
    await this.context.secrets.delete(secretKey(entry.key));
    this.changed.fire();
  }

  /** `owner/repository` names added under the registry in this workspace. */
  repositories(entry: RegistryEntry): string[] {
    return this.context.workspaceState.get<Record<string, string[]>>(repositoriesKey, {})[entry.key] ?? [];
  }

  async addRepository(entry: RegistryEntry, text: string): Promise<string> {
    const problem = repositoryNameProblem(text);
    if (problem) throw new ProtocallError(problem);
    const parsed = parseRepositoryName(text)!;
    const name = `${parsed.owner}/${parsed.repository}`;
    const all = this.context.workspaceState.get<Record<string, string[]>>(repositoriesKey, {});
    const list = all[entry.key] ?? [];
    if (!list.includes(name)) {
      await this.context.workspaceState.update(repositoriesKey, { ...all, [entry.key]: [...list, name] });
      this.changed.fire();
    }
    return name;
  }

  async removeRepository(entry: RegistryEntry, name: string): Promise<void> {
    const all = this.context.workspaceState.get<Record<string, string[]>>(repositoriesKey, {});
    await this.context.workspaceState.update(repositoriesKey, {
      ...all,
      [entry.key]: (all[entry.key] ?? []).filter((r) => r !== name),
    });
    this.changed.fire();
  }

  /** The running local registry, if any. */
  local(): { entry: RegistryEntry; registry: LocalRegistry } | undefined {
    return this.localRegistry;
  }

  /** Shows a started local registry, signed in, with the repositories its user administers. */
  async setLocal(registry: LocalRegistry | undefined): Promise<void> {
    const previous = this.localRegistry;
    this.localRegistry = undefined;
    if (previous) await this.context.secrets.delete(secretKey(previous.entry.key));
    if (registry) {
      const entry: RegistryEntry = {
        key: "local",
        name: "Local registry",
        url: registry.url,
        source: "local",
      };
      this.localRegistry = { entry, registry };
      await this.context.secrets.store(secretKey(entry.key), registry.token);
      for (const repo of registry.repositories) await this.addRepository(entry, repo);
    }
    this.changed.fire();
  }

  /**
   * Extra CA (PEM) to trust when calling the registry: the local registry's own certificate, or the
   * setting's `caFile`. Throws when that file cannot be read, saying which setting to fix.
   */
  ca(entry: RegistryEntry): string | undefined {
    const local = this.localRegistry;
    if (local && entry.url === local.entry.url) return local.registry.ca;
    if (!entry.caFile) return undefined;
    let pem: string;
    try {
      pem = readFileSync(entry.caFile, "utf8");
    } catch (err) {
      throw new ProtocallError(
        `cannot read the caFile of "${entry.name}" (${entry.caFile}): ${errorMessage(err)}; fix its path in the setting protocall.registries`,
      );
    }
    if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
      throw new ProtocallError(
        `the caFile of "${entry.name}" (${entry.caFile}) holds no PEM certificate; give a file with "-----BEGIN CERTIFICATE-----" blocks in the setting protocall.registries`,
      );
    }
    return pem;
  }

  private added(): StoredRegistry[] {
    const value = this.context.globalState.get<unknown>(addedKey, []);
    return Array.isArray(value)
      ? value.filter((r): r is StoredRegistry => typeof r?.url === "string" && typeof r?.name === "string")
      : [];
  }
}

/** A path from the settings: absolute as given, else relative to the first workspace folder. */
function resolveSettingPath(path: string): string {
  if (isAbsolute(path)) return path;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return folder ? join(folder, path) : path;
}
