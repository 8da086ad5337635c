// What the editor does before it sends a request of a `.rpc` file: parse the text, pick the request,
// load the environment, resolve the request to the CurlOptions that `protocall run` would use, and
// apply the editor's defaults (protocol, timeout) where the request sets none. Problems come back as
// `file:line:col: message` lines with their ranges; nothing with a problem may be sent.

import { ProtocallError } from "../errors";
import type { CurlOptions, Protocol } from "../invoke/options";
import type { RpcAssertion } from "./assertion-syntax";
import { openRpcContext, type RpcContext, type RpcContextOptions, type RunVariables } from "./context";
import type { LocalFile } from "./local-files";
import { parseRpcFile } from "./parse";
import { requestLabel } from "./to-curl";
import type { Range, RpcFile, RpcRequest } from "./types";

export interface PrepareSendOptions {
  /** The document's text (unsaved edits included). */
  text: string;
  /** Absolute path of the document (relative paths in the request resolve next to it). */
  filePath: string;
  /** Which request, from 0. */
  requestIndex: number;
  /** The active environment; undefined or "" for none. */
  environment?: string;
  /** The environment file; default protocall.env.json at the workspace root. */
  envFile?: string;
  workspaceRoot?: string;
  processEnv: Readonly<Record<string, string | undefined>>;
  /** Protocol of a request that sets neither `@protocol` nor a verb (default connect). */
  defaultProtocol?: Protocol;
  /** Seconds a request may take when it sets no `@timeout`; 0 or undefined: no limit. */
  defaultTimeoutSeconds?: number;
  /** Parsed text, when the caller has it already. */
  parsed?: RpcFile;
  /** `--var name=value` values (above every other variable). */
  overrides?: Readonly<Record<string, string>>;
  /** Values captured so far in the run, and how to treat captures that have not run. */
  run?: RunVariables;
  /**
   * The file's context, opened once for many requests (`protocall run`); when given, the
   * environment, workspace and `overrides` options above are not read.
   */
  context?: RpcContext;
}

export interface SendProblem {
  message: string;
  range: Range;
  /** `file:line:col: message`, 1-based. */
  text: string;
}

export interface PreparedSend {
  request: RpcRequest;
  /** The request's name, else `request N (line L)`. */
  label: string;
  /** The options to send; undefined when there are problems. */
  options?: CurlOptions;
  /** The request's assertions with their values resolved (with `options`). */
  assertions?: RpcAssertion[];
  problems: SendProblem[];
  /** The .rpc file's directory: the working directory of the call. */
  baseDir: string;
  /** The .rpc file (as given); a `# @snapshot` is stored beside it. */
  filePath: string;
  /** The local files the request reads and writes (the editor asks before any outside the workspace). */
  files: LocalFile[];
  /** Where each body part starts in `options.data` (CurlConversion.bodyLines). */
  bodyLines?: number[];
}

/**
 * Prepares one request. Throws ProtocallError when the request does not exist or the environment
 * file or name is wrong; every problem in the request itself is in `problems`.
 */
export function prepareSend(o: PrepareSendOptions): PreparedSend {
  const file = o.parsed ?? parseRpcFile(o.text);
  const request = file.requests[o.requestIndex];
  if (!request) {
    throw new ProtocallError(
      file.requests.length === 0
        ? `${o.filePath} holds no request: add a request line (a URL) after ###`
        : `${o.filePath} has no request #${o.requestIndex + 1} (it has ${file.requests.length}); save the file and try again`,
    );
  }
  const ctx = o.context ?? openContext(o);
  const conversion = ctx.toCurl(file, request, o.run);
  const problems = conversion.diagnostics
    .filter((d) => d.severity === "error")
    .map((d) => ({
      message: d.message,
      range: d.range,
      text: `${o.filePath}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${d.message}`,
    }));
  const label = requestLabel(request);
  const options = conversion.options;
  const files = conversion.files;
  if (!options || problems.length > 0)
    return { request, label, problems, baseDir: ctx.baseDir, filePath: o.filePath, files };
  const sets = (name: string) => request.options.some((x) => x.name.text === name);
  if (o.defaultProtocol && !request.verb && !sets("protocol")) options.protocol = o.defaultProtocol;
  if (o.defaultTimeoutSeconds && o.defaultTimeoutSeconds > 0 && !sets("timeout")) {
    options.timeoutMs = Math.round(o.defaultTimeoutSeconds * 1000);
  }
  const { assertions, bodyLines } = conversion;
  return {
    request,
    label,
    options,
    assertions,
    problems,
    baseDir: ctx.baseDir,
    filePath: o.filePath,
    files,
    bodyLines,
  };
}

function openContext(o: PrepareSendOptions): RpcContext {
  const contextOptions: RpcContextOptions = {
    filePath: o.filePath,
    environment: o.environment ? o.environment : undefined,
    envFile: o.envFile ? o.envFile : undefined,
    processEnv: o.processEnv,
    overrides: o.overrides,
  };
  if (o.workspaceRoot) contextOptions.workspaceRoot = o.workspaceRoot;
  return openRpcContext(contextOptions);
}
