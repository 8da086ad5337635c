// A request of a .rpc document made ready to send, with the settings of its folder (environment,
// environment file, default protocol and timeout) through the core's prepareSend (the same conversion
// as `protocall run`), and the one check the editor adds: in a restricted workspace, schemas that need
// the compiler are refused.
import { existsSync, statSync } from "node:fs";
import * as vscode from "vscode";
import { errorMessage } from "../../core/errors";
import type { CurlOptions } from "../../core/invoke/options";
import { type PreparedSend, prepareSend } from "../../core/rpcfile/prepare-send";
import type { Settings } from "../settings";
import { workspaceEnvironmentFile } from "./environment-status";
import type { SendTarget } from "./send-target";

/**
 * Prepares the request with the settings of its folder and the values earlier requests of its file
 * captured; says what is wrong when it cannot (a capture that has not run names the request to run).
 */
export function prepareTarget(
  settings: Settings,
  target: SendTarget,
  captures: Readonly<Record<string, string>> = {},
): PreparedSend | { error: string } {
  const { document, index } = target;
  const read = settings.reader(document.uri);
  try {
    return prepareSend({
      text: document.getText(),
      filePath: document.uri.fsPath,
      requestIndex: index,
      environment: read("environment"),
      envFile: read("envFile") ? workspaceEnvironmentFile(settings, document.uri) : undefined,
      processEnv: process.env,
      defaultProtocol: read("protocol"),
      defaultTimeoutSeconds: read("timeout"),
      run: { captures },
    });
  } catch (err) {
    return { error: errorMessage(err) };
  }
}

/** The problems that keep a prepared request from being sent (or copied), or undefined. */
export function preparedProblems(prepared: PreparedSend | { error: string }): string[] | undefined {
  if ("error" in prepared) return [prepared.error];
  if (!prepared.options) return prepared.problems.map((p) => p.text);
  return undefined;
}

/** In a restricted workspace: schemas that need the compiler are refused; nothing is built. */
export function restrictedProblem(o: CurlOptions): string | undefined {
  if (vscode.workspace.isTrusted) return undefined;
  for (const s of o.schemas) {
    const compiled = s.endsWith(".proto") || (existsSync(s) && statSync(s).isDirectory());
    if (compiled) {
      return `@schema ${s} needs the compiler, which does not run in Restricted Mode; trust the workspace, or use a descriptor-set file`;
    }
  }
  return undefined;
}
