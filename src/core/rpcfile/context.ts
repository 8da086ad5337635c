// Everything a `.rpc` file's requests need besides their text: the selected environment, `.env`
// values, the process environment and a file reader. Loaded once per file; each request then gets
// its own variable resolver, so a file variable holding `{{$uuid}}` has one value per request.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  environmentFileName,
  findWorkspaceRoot,
  loadDotenv,
  type ReadText,
  readEnvironmentFiles,
  readTextFile,
  selectEnvironment,
} from "./environment";
import { type CurlConversion, requestToCurl } from "./to-curl";
import type { RpcFile, RpcRequest } from "./types";
import { VariableResolver, type VariableScope } from "./variables";

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
  environment: Record<string, string>;
  /** Converts one request of the file to CurlOptions, resolving its references. */
  toCurl(file: RpcFile, request: RpcRequest): CurlConversion;
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
  const environment = selectEnvironment(readEnvironmentFiles(envFile, readText), o.environment);
  const dotenv = loadDotenv(filePath, workspaceRoot, readText);
  return {
    filePath,
    baseDir,
    workspaceRoot,
    envFile,
    environment,
    toCurl(file, request) {
      const scope: VariableScope = {
        fileVariables: file.variables,
        environment,
        environmentName: o.environment,
        processEnv: o.processEnv,
        dotenv,
        now: o.now,
        random: o.random,
        uuid: o.uuid,
      };
      return requestToCurl(file, request, {
        baseDir,
        variables: new VariableResolver(scope),
        readFile: (path) => readFileSync(path, "utf8"),
      });
    },
  };
}
