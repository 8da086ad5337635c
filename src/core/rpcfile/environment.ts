// Environments for `{{name}}` references, and `.env` files for `{{$dotenv NAME}}`.
//
// Environments live in `protocall.env.json` at the workspace root, a file meant to be committed:
//
//   { "$shared": { "version": "v1" }, "dev": { "host": "http://localhost:8080" }, "prod": { ... } }
//
// Secrets go in its companion `protocall.env.private.json` (same shape), which is meant to be
// git-ignored. A name resolves, from strongest to weakest: the private file's environment, the
// shared file's environment, the private file's `$shared`, the shared file's `$shared`. So a
// private value overrides a shareable one at the same level, and an environment's own value always
// beats a `$shared` default; between the two rank the .rpc file's own variables (see variables.ts).
// (The same two-file split as the VS Code REST Client's settings and
// .env/.env.local, kept in JSON so the editor can offer completion and the status bar can list
// environments.)
import { readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ProtocallError } from "../errors";
import { jsonProblemAt } from "../invoke/json-error";

export const environmentFileName = "protocall.env.json";
export const privateEnvironmentFileName = "protocall.env.private.json";
export const sharedEnvironmentName = "$shared";

/** Reads a text file; undefined when it does not exist. Other failures throw. */
export type ReadText = (path: string) => string | undefined;

export const readTextFile: ReadText = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new ProtocallError(`cannot read ${path}: ${code ?? (err as Error).message}`);
  }
};

/** The private companion of an environment file: `x.json` → `x.private.json`. */
export function privateCompanion(path: string): string {
  const name = basename(path);
  const dot = name.toLowerCase().endsWith(".json") ? name.length - 5 : name.length;
  return join(dirname(path), `${name.slice(0, dot)}.private${name.slice(dot)}`);
}

export interface EnvironmentFiles {
  /** The shareable file and its parsed content, when it exists. */
  shared?: { path: string; content: Record<string, Record<string, string>> };
  /** The private companion, when it exists. */
  private?: { path: string; content: Record<string, Record<string, string>> };
}

/** Reads an environment file and its private companion. Invalid JSON or shapes throw ProtocallError. */
export function readEnvironmentFiles(path: string, readText: ReadText = readTextFile): EnvironmentFiles {
  const files: EnvironmentFiles = {};
  const shared = readText(path);
  if (shared !== undefined) files.shared = { path, content: parseEnvironmentFile(shared, path) };
  const privatePath = privateCompanion(path);
  const secret = readText(privatePath);
  if (secret !== undefined)
    files.private = { path: privatePath, content: parseEnvironmentFile(secret, privatePath) };
  return files;
}

/** Parses `{ "env": { "name": "value" } }`; numbers and bools become strings. */
export function parseEnvironmentFile(text: string, path: string): Record<string, Record<string, string>> {
  let json: unknown;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    json = JSON.parse(body);
  } catch {
    // Not JSON.parse's message: it quotes the start of the file, which may be a secret.
    const where = jsonProblemAt(body) ?? "invalid JSON";
    throw new ProtocallError(`${path} is not valid JSON (${where}); fix the file`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new ProtocallError(
      `${path} must hold a JSON object of environments, such as {"dev": {"host": "http://localhost:8080"}}`,
    );
  }
  const out: Record<string, Record<string, string>> = {};
  for (const [env, vars] of Object.entries(json)) {
    if (typeof vars !== "object" || vars === null || Array.isArray(vars)) {
      throw new ProtocallError(`${path}: environment "${env}" must be an object of variables`);
    }
    const values: Record<string, string> = {};
    for (const [name, value] of Object.entries(vars)) {
      if (typeof value === "string") values[name] = value;
      else if (typeof value === "number" || typeof value === "boolean") values[name] = String(value);
      else {
        throw new ProtocallError(
          `${path}: variable "${name}" of environment "${env}" must be a string, number or bool`,
        );
      }
    }
    out[env] = values;
  }
  return out;
}

/** The environments the files define (`$shared` excluded), sorted. */
export function environmentNames(files: EnvironmentFiles): string[] {
  const names = new Set<string>();
  for (const f of [files.shared, files.private]) {
    for (const n of Object.keys(f?.content ?? {})) if (n !== sharedEnvironmentName) names.add(n);
  }
  return [...names].sort();
}

/**
 * The variables of environment `name`, merged as described at the top of this file. Without a name,
 * only the `$shared` values. An unknown name throws ProtocallError listing the known ones.
 */
export function selectEnvironment(files: EnvironmentFiles, name: string | undefined): Record<string, string> {
  const pub = files.shared?.content ?? {};
  const priv = files.private?.content ?? {};
  if (name !== undefined && !Object.hasOwn(pub, name) && !Object.hasOwn(priv, name)) {
    const known = environmentNames(files);
    const where = files.shared?.path ?? files.private?.path;
    throw new ProtocallError(
      where
        ? `environment "${name}" is not defined in ${where}${known.length ? `; defined: ${known.join(", ")}` : ""}`
        : `environment "${name}" is selected but there is no ${environmentFileName}; create one at the workspace root or pass --env-file`,
    );
  }
  return {
    ...pub[sharedEnvironmentName],
    ...priv[sharedEnvironmentName],
    ...(name !== undefined ? pub[name] : {}),
    ...(name !== undefined ? priv[name] : {}),
  };
}

/**
 * The variables of environment `name` in two layers: its own values (private over shared file) and
 * the `$shared` defaults (private over shared file). Variables rank file variables between the two
 * (variables.ts). An unknown name throws as selectEnvironment does.
 */
export function environmentLayers(
  files: EnvironmentFiles,
  name: string | undefined,
): { selected: Record<string, string>; shared: Record<string, string> } {
  selectEnvironment(files, name);
  const pub = files.shared?.content ?? {};
  const priv = files.private?.content ?? {};
  return {
    selected: name !== undefined ? { ...pub[name], ...priv[name] } : {},
    shared: { ...pub[sharedEnvironmentName], ...priv[sharedEnvironmentName] },
  };
}

/** Parses a `.env` file: `KEY=value`, `export KEY=value`, quotes, `#` comments. */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][\w.-]*)\s*=\s*(.*?)\s*$/.exec(raw);
    if (!m) continue;
    let value = m[2];
    const q = value[0];
    if ((q === '"' || q === "'" || q === "`") && value.length >= 2 && value.lastIndexOf(q) > 0) {
      value = value.slice(1, value.lastIndexOf(q));
      if (q === '"')
        value = value.replace(/\\n/g, "\n").replace(/\\r/g, "\r").replace(/\\t/g, "\t").replace(/\\"/g, '"');
    } else {
      const hash = value.search(/\s#/);
      if (hash >= 0) value = value.slice(0, hash).trimEnd();
    }
    out[m[1]] = value;
  }
  return out;
}

/** The `.env` values for a `.rpc` file: the workspace root's `.env`, overridden by the one next to the file. */
export function loadDotenv(
  rpcFile: string,
  workspaceRoot: string,
  readText: ReadText = readTextFile,
): Record<string, string> {
  const dirs = [resolve(workspaceRoot), resolve(dirname(rpcFile))];
  const out: Record<string, string> = {};
  for (const dir of dirs[0] === dirs[1] ? [dirs[0]] : dirs) {
    const text = readText(join(dir, ".env"));
    if (text !== undefined) Object.assign(out, parseDotenv(text));
  }
  return out;
}

/**
 * The workspace root of a `.rpc` file: the nearest directory at or above it holding
 * `protocall.env.json`, else the nearest holding `.git`, else the file's own directory.
 */
export function findWorkspaceRoot(rpcFile: string, exists: (path: string) => boolean = pathExists): string {
  const start = resolve(dirname(rpcFile));
  for (const marker of [environmentFileName, ".git"]) {
    for (let dir = start; ; dir = dirname(dir)) {
      if (exists(join(dir, marker))) return dir;
      if (dirname(dir) === dir) break;
    }
  }
  return start;
}

function pathExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
