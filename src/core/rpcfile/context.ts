// Everything a `.rpc` file's requests need besides their text: the selected environment, `.env`
// values, the process environment, `--var` values and a file reader. Loaded once per file; each
// request then gets its own variable resolver (with the values captured so far in the run), so a
// file variable holding `{{$uuid}}` has one value per request.
import { dirname, join, resolve } from "node:path";
import {
  environmentFileName,
  environmentLayers,
  findWorkspaceRoot,
  loadDotenv,
  type ReadText,
  readEnvironmentFiles,
  readTextFile,
} from "./environment";
import { applyEnvironmentAuth } from "./environment-auth";
import { readIncludedFile } from "./local-files";
import { type CurlConversion, requestLabel, requestToCurl } from "./to-curl";
import type { RpcFile, RpcRequest } from "./types";
import { type CaptureSource, VariableResolver, type VariableScope } from "./variables";

/** Values a run adds to a file's variables (variables.ts has the order of precedence). */
export interface RunVariables {
  /** Values captured by the requests that ran before (`# @capture`), by name. */
  captures?: Readonly<Record<string, string>>;
  /**
   * "defer" keeps references to values that an earlier request of the file captures, and that have
   * not been captured yet, as written (to check a whole file before it runs); default "error", which
   * names the request to run first.
   */
  pendingCaptures?: "error" | "defer";
  /**
   * Why a request that ran took no value for a name it captures (its call failed, the path led to
   * nothing), by name: a later reference then says so rather than "run that request first".
   */
  missedCaptures?: Readonly<Record<string, string>>;
}

export interface RpcContextOptions {
  /** Path of the .rpc file (relative paths are resolved against `cwd`). */
  filePath: string;
  cwd?: string;
  /** The environment to select; none when undefined (only `$shared` values apply). */
  environment?: string;
  /** The environment file; default `protocall.env.json` at the workspace root. */
  envFile?: string;
  /** Default: the nearest directory holding protocall.env.json, else .git, else the file's directory. */
  workspaceRoot?: string;
  processEnv: Readonly<Record<string, string | undefined>>;
  /** `--var name=value` values: above every other variable. */
  overrides?: Readonly<Record<string, string>>;
  readText?: ReadText;
  now?: () => Date;
  random?: () => number;
  uuid?: () => string;
}

export interface RpcContext {
  /** Absolute path of the .rpc file. */
  filePath: string;
  baseDir: string;
  workspaceRoot: string;
  /** The environment file consulted (it may not exist). */
  envFile: string;
  /** The selected environment's variables with the `$shared` defaults merged in. */
  environment: Record<string, string>;
  /** The same in two layers: file variables rank between them (variables.ts). */
  environmentLayers: { selected: Record<string, string>; shared: Record<string, string> };
  /**
   * Converts one request of the file to CurlOptions, resolving its references (and its assertions'
   * values) with the run's captured values.
   */
  toCurl(file: RpcFile, request: RpcRequest, run?: RunVariables): CurlConversion;
}

/** Which requests of a file capture each variable name, in file order. */
export function captureSources(file: RpcFile): Map<string, CaptureSource[]> {
  const out = new Map<string, CaptureSource[]>();
  for (const request of file.requests) {
    for (const c of request.captures) {
      const list = out.get(c.name.text) ?? [];
      if (!list.some((s) => s.index === request.index)) {
        list.push({ index: request.index, label: requestLabel(request), line: c.range.start.line });
      }
      out.set(c.name.text, list);
    }
  }
  return out;
}

/** Loads the environment and `.env` values for a file. Throws ProtocallError for a bad environment file or name. */
export function openRpcContext(o: RpcContextOptions): RpcContext {
  const filePath = resolve(o.cwd ?? process.cwd(), o.filePath);
  const baseDir = dirname(filePath);
  const readText = o.readText ?? readTextFile;
  const workspaceRoot = o.workspaceRoot ?? findWorkspaceRoot(filePath);
  const envFile = o.envFile
    ? resolve(o.cwd ?? process.cwd(), o.envFile)
    : join(workspaceRoot, environmentFileName);
  const layers = environmentLayers(readEnvironmentFiles(envFile, readText), o.environment);
  const dotenv = loadDotenv(filePath, workspaceRoot, readText);
  const sources = new WeakMap<RpcFile, Map<string, CaptureSource[]>>();
  return {
    filePath,
    baseDir,
    workspaceRoot,
    envFile,
    environment: { ...layers.shared, ...layers.selected },
    environmentLayers: layers,
    toCurl(file, request, run) {
      let captured = sources.get(file);
      if (!captured) {
        captured = captureSources(file);
        sources.set(file, captured);
      }
      const scope: VariableScope = {
        overrides: o.overrides,
        captures: run?.captures,
        fileVariables: file.variables,
        environment: layers.selected,
        sharedEnvironment: layers.shared,
        captureSources: captured,
        requestIndex: request.index,
        pendingCaptures: run?.pendingCaptures,
        missedCaptures: run?.missedCaptures,
        environmentName: o.environment,
        processEnv: o.processEnv,
        dotenv,
        now: o.now,
        random: o.random,
        uuid: o.uuid,
      };
      const variables = new VariableResolver(scope);
      const conversion = requestToCurl(file, request, {
        baseDir,
        variables,
        readFile: (path) => readIncludedFile(path),
      });
      applyEnvironmentAuth(conversion, request, layers, variables, o.environment);
      return conversion;
    },
  };
}
