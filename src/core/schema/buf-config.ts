// Reads buf's configuration files — buf.yaml (v1beta1, v1, v2) and buf.work.yaml — into the few facts
// the workspace logic needs: the module directories with their excludes, and the declared deps.
// Parsed with the `yaml` library, so anything YAML allows reads as buf reads it (comments, quoted
// strings, flow sequences, anchors, CRLF); the library is loaded on first use, so commands that never
// read a workspace (most `protocall curl` calls) never initialise it. A file buf would refuse (bad
// YAML, a field of the wrong shape, no or an unknown version, a path outside its folder) fails here
// with `file:line:column` and what to fix, before buf runs.
import { readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import type { Document, Node } from "yaml";
import { ProtocallError } from "../errors";

/** A module of a buf.yaml: its directory and the directories excluded from it. */
export interface BufModule {
  /** Relative to the buf.yaml's folder, slash-separated, normalised (`.` for the folder itself). */
  readonly path: string;
  /** Relative to the buf.yaml's folder (as v2 writes them; a v1 file's are relative to the same folder). */
  readonly excludes: readonly string[];
}

export interface BufYaml {
  /** The file read (absolute). */
  readonly file: string;
  readonly version: "v1beta1" | "v1" | "v2";
  /** v2: the `modules` listed (`.` when none is); v1 and v1beta1: the folder itself. */
  readonly modules: readonly BufModule[];
  /** The `deps` entries (module references such as `buf.build/googleapis/googleapis`). */
  readonly deps: readonly string[];
}

export interface BufWorkYaml {
  readonly file: string;
  readonly version: "v1";
  /** The module directories, relative to the file's folder, normalised as BufModule.path. */
  readonly directories: readonly string[];
}

/** Reads `dir`/buf.yaml; undefined when there is none. Throws ProtocallError when buf would refuse it. */
export async function readBufYaml(dir: string): Promise<BufYaml | undefined> {
  const file = join(dir, "buf.yaml");
  const text = await readConfig(file);
  return text === undefined ? undefined : parseBufYaml(text, file);
}

/** Reads `dir`/buf.work.yaml; undefined when there is none. Throws ProtocallError when buf would refuse it. */
export async function readBufWorkYaml(dir: string): Promise<BufWorkYaml | undefined> {
  const file = join(dir, "buf.work.yaml");
  const text = await readConfig(file);
  return text === undefined ? undefined : parseBufWorkYaml(text, file);
}

async function readConfig(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return undefined;
    throw new ProtocallError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

/** Parses the text of a buf.yaml (`file` names it in errors). */
export async function parseBufYaml(text: string, file: string): Promise<BufYaml> {
  const config = await load(text, file);
  const version = config.version(["v1beta1", "v1", "v2"], "v2");
  const deps = config.strings("deps");
  if (version !== "v2") {
    // One module, the folder itself; `build.excludes` are relative to it.
    const excludes = config
      .strings("build", "excludes")
      .map((e, j) => config.relativePath(e, "build", "excludes", j));
    return { file, version, modules: [{ path: ".", excludes }], deps };
  }
  const modules: BufModule[] = config.maps("modules").map((i) => ({
    path: config.relativePath(config.string("modules", i, "path") ?? ".", "modules", i, "path"),
    excludes: config
      .strings("modules", i, "excludes")
      .map((e, j) => config.relativePath(e, "modules", i, "excludes", j)),
  }));
  return { file, version, modules: modules.length > 0 ? modules : [{ path: ".", excludes: [] }], deps };
}

/** Parses the text of a buf.work.yaml (`file` names it in errors). */
export async function parseBufWorkYaml(text: string, file: string): Promise<BufWorkYaml> {
  const config = await load(text, file);
  const version = config.version(["v1"], "v1");
  const directories = config.strings("directories").map((d, i) => config.relativePath(d, "directories", i));
  return { file, version, directories };
}

type Key = string | number;

/** A parsed YAML document with typed, located accessors: every error names file:line:column. */
interface Config {
  version<V extends string>(known: readonly V[], latest: V): V;
  /** A string at `path`, undefined when absent. */
  string(...path: Key[]): string | undefined;
  /** A sequence of strings at `path` ([] when absent). */
  strings(...path: Key[]): string[];
  /** A sequence at `path` ([] when absent). */
  list(...path: Key[]): unknown[];
  /** The indexes of a sequence of mappings at `path` ([] when absent). */
  maps(...path: Key[]): number[];
  /** `value` (read at `path`) as a normalised path inside the file's folder. */
  relativePath(value: string, ...path: Key[]): string;
}

let yamlModule: Promise<typeof import("yaml")> | undefined;

async function load(text: string, file: string): Promise<Config> {
  yamlModule ??= import("yaml");
  const { LineCounter, parseDocument, isAlias, isMap, isSeq, isScalar } = await yamlModule;
  const lines = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined) => {
    const { line, col } = lines.linePos(offset ?? 0);
    return `${file}:${line}:${col}`;
  };
  const [syntax] = doc.errors;
  if (syntax) {
    throw new ProtocallError(
      `${at(syntax.pos[0])}: invalid YAML: ${firstLine(syntax.message)}; fix the file (buf cannot read it either)`,
    );
  }
  const root = doc.contents;
  if (root !== null && !isMap(root) && !(isScalar(root) && root.value === null)) {
    throw new ProtocallError(`${at(root.range?.[0])}: expected a mapping of keys (such as "version: v2")`);
  }
  // Aliases (`*name`) stand for the node they name.
  const deref = (n: unknown): Node | undefined =>
    n === null || n === undefined
      ? undefined
      : isAlias(n)
        ? (n.resolve(doc) as Node | undefined)
        : (n as Node);
  const nodeAt = (path: Key[]): Node | undefined => {
    let n: Node | undefined = root ?? undefined;
    for (const key of path) {
      if (!isMap(n) && !isSeq(n)) return undefined;
      n = deref(n.get(key, true));
    }
    return n;
  };
  const where = (path: Key[]): string => {
    // The node itself, else the nearest parent that exists.
    for (let i = path.length; i >= 0; i--) {
      const n = i === 0 ? root : nodeAt(path.slice(0, i));
      if (n?.range) return at(n.range[0]);
    }
    return at(0);
  };
  const label = (path: Key[]) =>
    path
      .map((k) => (typeof k === "number" ? `[${k}]` : `.${k}`))
      .join("")
      .replace(/^\./, "");
  const fail = (path: Key[], what: string): never => {
    throw new ProtocallError(`${where(path)}: ${what}`);
  };
  const scalarString = (n: Node, path: Key[]): string => {
    if (!isScalar(n) || n.value === null || typeof n.value === "object") {
      return fail(path, `"${label(path)}" must be a string`);
    }
    return String(n.value);
  };
  const config: Config = {
    version(known, latest) {
      const n = nodeAt(["version"]);
      if (!n) return fail([], `"version" is not set; add "version: ${latest}" at the top`);
      const v = scalarString(n, ["version"]);
      if (!(known as readonly string[]).includes(v)) {
        return fail(["version"], `unknown version "${v}"; use ${latest} (known: ${known.join(", ")})`);
      }
      return v as (typeof known)[number];
    },
    string(...path) {
      const n = nodeAt(path);
      return n === undefined ? undefined : scalarString(n, path);
    },
    list(...path) {
      const n = nodeAt(path);
      if (n === undefined) return [];
      if (!isSeq(n))
        return fail(path, `"${label(path)}" must be a list; write its items as "- item" lines or [a, b]`);
      return n.items.map(deref);
    },
    maps(...path) {
      return config.list(...path).map((item, i) => {
        if (!isMap(item))
          fail([...path, i], `"${label([...path, i])}" must be a mapping (such as "path: proto")`);
        return i;
      });
    },
    strings(...path) {
      return config.list(...path).map((item, i) => scalarString(item as Node, [...path, i]));
    },
    relativePath(value, ...path) {
      const normal = posix.normalize(value.replace(/\\/g, "/")).replace(/\/+$/, "") || ".";
      if (
        normal.startsWith("/") ||
        /^[a-zA-Z]:/.test(normal) ||
        normal === ".." ||
        normal.startsWith("../")
      ) {
        return fail(path, `"${value}" is outside the folder of this file; use a path inside it`);
      }
      return normal;
    },
  };
  return config;
}

function firstLine(message: string): string {
  return message
    .split("\n")[0]
    .replace(/ at line \d+, column \d+:?$/, "")
    .trim();
}
