// The language server's settings, from `initializationOptions` and the client's `protocall`
// configuration section (the latter wins).

export interface ServerSettings {
  /** Schema sources for every .rpc file: directories, .proto files, descriptor-set files. */
  schemas: string[];
  /** Build the workspace folders' .proto files and read their descriptor-set files (default true). */
  workspaceBuild: boolean;
  /** Use server reflection of the requests' URLs (default true; `@reflect false` turns it off per request). */
  reflection: boolean;
  /** The buf binary to build with instead of the bundled one. */
  bufPath?: string;
  /** The compiler of workspace builds (default buf). */
  compiler?: "buf" | "protoc";
  /** The protoc binary when `compiler` is protoc (default: protoc on PATH). */
  protocPath?: string;
  /** The selected environment of `protocall.env.json`. */
  environment?: string;
  /** The environment file instead of `protocall.env.json` at the workspace root. */
  envFile?: string;
  /** Milliseconds a reflection look-up may take (default 5000). */
  reflectionTimeoutMs: number;
  /**
   * API tokens of the registries the editor is signed in to (Webhooks view), by remote
   * (`host[:port]`), for registry modules among the schemas; before BUF_TOKEN and netrc.
   */
  registryTokens?: Record<string, string>;
  /** CAs (PEM) the editor trusts for those registries, by remote. */
  registryCas?: Record<string, string>;
}

export function defaultSettings(): ServerSettings {
  return { schemas: [], workspaceBuild: true, reflection: true, reflectionTimeoutMs: 5000 };
}

/** Merges a loosely typed settings object (from the client) over `base`; unknown or mistyped keys are ignored. */
export function mergeSettings(base: ServerSettings, raw: unknown): ServerSettings {
  if (typeof raw !== "object" || raw === null) return base;
  const r = raw as Record<string, unknown>;
  const out: ServerSettings = { ...base };
  if (Array.isArray(r.schemas)) out.schemas = r.schemas.filter((s): s is string => typeof s === "string");
  if (typeof r.workspaceBuild === "boolean") out.workspaceBuild = r.workspaceBuild;
  if (typeof r.reflection === "boolean") out.reflection = r.reflection;
  if (typeof r.bufPath === "string" && r.bufPath !== "") out.bufPath = r.bufPath;
  if (r.compiler === "buf" || r.compiler === "protoc") out.compiler = r.compiler;
  if (typeof r.protocPath === "string" && r.protocPath !== "") out.protocPath = r.protocPath;
  if (typeof r.environment === "string" && r.environment !== "") out.environment = r.environment;
  if (typeof r.envFile === "string" && r.envFile !== "") out.envFile = r.envFile;
  const byRemote = (value: unknown): Record<string, string> | undefined => {
    if (typeof value !== "object" || value === null) return undefined;
    const entries = Object.entries(value as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === "string" && e[1] !== "",
    );
    return Object.fromEntries(entries);
  };
  const tokens = byRemote(r.registryTokens);
  if (tokens) out.registryTokens = tokens;
  const cas = byRemote(r.registryCas);
  if (cas) out.registryCas = cas;
  if (typeof r.reflectionTimeoutMs === "number" && r.reflectionTimeoutMs > 0) {
    out.reflectionTimeoutMs = r.reflectionTimeoutMs;
  }
  return out;
}
