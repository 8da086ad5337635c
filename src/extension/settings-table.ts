// Every `protocall.*` setting the extension reads: its default, the values it may take, and how a
// value from the user's settings is checked (a value of the wrong type or out of range reads as the
// default, as VS Code's own settings editor would refuse it). This is the one place in the code where
// defaults are written; a test checks them against package.json's `contributes.configuration`.
// The language server's settings (`ServerSettings`) are mapped from these values here too.
// No `vscode` import: the table and the mappings are plain data and functions, tested without an editor.

import type { ServerSettings } from "../core/analysis/settings";
import type { Protocol } from "../core/invoke/options";

/** One setting: its default and, where the manifest has them, its allowed values or range. */
interface SettingSpec<T> {
  readonly default: T;
  /** The values an enum setting may take. */
  readonly values?: readonly T[];
  readonly minimum?: number;
  readonly maximum?: number;
}

const setting = <T>(spec: SettingSpec<T>): SettingSpec<T> => spec;

/** The `protocall.*` settings, keyed by their name without the `protocall.` prefix. */
export const settingsTable = {
  servers: setting<readonly unknown[]>({ default: [] }),
  schemas: setting<readonly string[]>({ default: [] }),
  workspaceBuild: setting({ default: true }),
  reflection: setting({ default: true }),
  reflectionTimeout: setting({ default: 5, minimum: 0.1 }),
  compiler: setting<"buf" | "protoc">({ default: "buf", values: ["buf", "protoc"] }),
  bufPath: setting({ default: "" }),
  protocPath: setting({ default: "" }),
  protocol: setting<Protocol>({ default: "connect", values: ["connect", "grpc", "grpcweb"] }),
  timeout: setting({ default: 0, minimum: 0 }),
  environment: setting({ default: "" }),
  envFile: setting({ default: "" }),
  "history.size": setting({ default: 20, minimum: 1, maximum: 200 }),
  registries: setting<readonly unknown[]>({ default: [] }),
  "listener.host": setting({ default: "127.0.0.1" }),
  "listener.port": setting({ default: 0, minimum: 0, maximum: 65535 }),
  "listener.tls": setting({ default: true }),
  "listener.forwardTo": setting({ default: "" }),
  "listener.maxStoreBytes": setting({ default: 64 * 1024 * 1024, minimum: 1024 * 1024 }),
  "mock.port": setting({ default: 0, minimum: 0, maximum: 65535 }),
  "trace.server": setting<"off" | "messages" | "verbose">({
    default: "off",
    values: ["off", "messages", "verbose"],
  }),
};

export type SettingKey = keyof typeof settingsTable;
export type SettingValue<K extends SettingKey> = (typeof settingsTable)[K]["default"];

/** The section every key lives under. */
export const settingsSection = "protocall";

/**
 * A raw value from the configuration as the setting's type: the default when it is missing, of
 * another type, not one of the allowed values, or out of range (numbers are clamped). String lists
 * keep only their strings.
 */
export function checkSetting<K extends SettingKey>(key: K, raw: unknown): SettingValue<K> {
  const spec = settingsTable[key] as SettingSpec<unknown>;
  const fallback = spec.default as SettingValue<K>;
  if (raw === undefined || raw === null) return fallback;
  if (Array.isArray(spec.default)) {
    if (!Array.isArray(raw)) return fallback;
    return (key === "schemas" ? raw.filter((s) => typeof s === "string") : raw) as SettingValue<K>;
  }
  if (typeof raw !== typeof spec.default) return fallback;
  if (spec.values && !spec.values.includes(raw)) return fallback;
  if (typeof raw === "number") {
    if (!Number.isFinite(raw)) return fallback;
    const low = spec.minimum ?? Number.NEGATIVE_INFINITY;
    const high = spec.maximum ?? Number.POSITIVE_INFINITY;
    return Math.min(high, Math.max(low, raw)) as SettingValue<K>;
  }
  return raw as SettingValue<K>;
}

/** Reads one setting (already checked); what `Settings.get` is for a scope. */
export type SettingsRead = <K extends SettingKey>(key: K) => SettingValue<K>;

/** Milliseconds a reflection look-up may take, from `protocall.reflectionTimeout` (seconds). */
export function reflectionTimeoutMs(read: SettingsRead): number {
  return Math.max(100, Math.round(read("reflectionTimeout") * 1000));
}

/**
 * The language server's settings. In a restricted (untrusted) workspace the server neither builds nor
 * reflects, and the settings that name binaries or files are left out (VS Code already ignores the
 * workspace's values of these restricted settings; the user's own values are not used there either).
 */
export function serverSettingsFrom(read: SettingsRead, trusted: boolean): ServerSettings {
  const settings: ServerSettings = {
    schemas: trusted ? [...read("schemas")] : [],
    workspaceBuild: trusted && read("workspaceBuild"),
    reflection: trusted && read("reflection"),
    reflectionTimeoutMs: reflectionTimeoutMs(read),
  };
  const bufPath = read("bufPath");
  if (trusted && bufPath) settings.bufPath = bufPath;
  if (read("compiler") === "protoc") {
    settings.compiler = "protoc";
    const protocPath = read("protocPath");
    if (trusted && protocPath) settings.protocPath = protocPath;
  }
  const environment = read("environment");
  if (environment) settings.environment = environment;
  const envFile = read("envFile");
  if (trusted && envFile) settings.envFile = envFile;
  return settings;
}

/** The local listener's settings (`protocall.listener.*`), as the core's ListenerSettings. */
export function listenerSettingsFrom(read: SettingsRead): {
  host: string;
  port: number;
  tls: boolean;
  forwardTo?: string;
  maxStoreBytes: number;
} {
  const forwardTo = read("listener.forwardTo").trim();
  return {
    host: read("listener.host"),
    port: read("listener.port"),
    tls: read("listener.tls"),
    ...(forwardTo ? { forwardTo } : {}),
    maxStoreBytes: read("listener.maxStoreBytes"),
  };
}
