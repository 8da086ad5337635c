// The `protocall mcp` tools offered to VS Code's agents as language-model tools (declared in
// package.json's contributes.languageModelTools, registered here): each runs the same core tool
// (core/mcp/run-tool.ts) over the editor's warm call session, with VS Code's proxy settings, inside the
// first workspace folder's scope (the servers its request files name, its files). An untrusted
// workspace gets no tools (the manifest's `when`) and a call that still arrives is refused, as Send
// refuses to send there without a click.
import { homedir } from "node:os";
import * as vscode from "vscode";
import type { ToolOutcome } from "../../core/mcp/run-tool";
import { mcpTools } from "../../core/mcp/tools";
import type { AllowHints } from "../../core/mcp/workspace-scope";
import type { ProtocallContext } from "../context";
import type { CallEngine } from "../send/call-engine";
import { invocationMessage } from "./invocation-message";
import { editorToolName } from "./tool-names";

export const untrustedRefusal =
  "Protocall's tools do not run in Restricted Mode: trust the workspace (Manage Workspace Trust) to let an agent list, call and run its services";

/** The editor has no flags: a server is allowed by naming it in a request file of the workspace. */
const editorHints: AllowHints = {
  server: (origin) =>
    `name ${origin} in a .rpc file or environment file of the workspace to let the tools call it`,
  outsideFiles: "the editor's tools read and write only files inside the workspace",
};

export class AgentToolsFeature {
  constructor(
    private readonly ctx: ProtocallContext,
    private readonly engine: CallEngine,
  ) {
    for (const tool of mcpTools) {
      ctx.subscriptions.push(
        vscode.lm.registerTool<Record<string, unknown>>(editorToolName(tool.name), {
          prepareInvocation: (options) => ({
            invocationMessage: invocationMessage(tool.name, options.input),
          }),
          invoke: async (options) => {
            const { text, isError } = await this.run(tool.name, options.input);
            // An error is thrown: VS Code hands its message to the model as the tool's failure.
            if (isError) throw new Error(text);
            return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
          },
        }),
      );
    }
  }

  /** Runs a tool as `protocall mcp` would for this workspace. */
  async run(name: string, input: unknown): Promise<ToolOutcome> {
    if (!vscode.workspace.isTrusted) return { isError: true, text: untrustedRefusal };
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!root) {
      return { isError: true, text: "Protocall's tools work on a workspace folder: open one first" };
    }
    const [{ runTool }, { WorkspaceScope }, session] = await Promise.all([
      import("../../core/mcp/run-tool"),
      import("../../core/mcp/workspace-scope"),
      this.engine.session(),
    ]);
    this.ctx.log.info(`agent tool ${name}`);
    return runTool(name, input, {
      scope: new WorkspaceScope({ root, allowHints: editorHints }),
      session,
      env: this.ctx.settings.connectionEnv(),
      homedir: homedir(),
      product: `protocall/${this.ctx.version}`,
    });
  }
}
