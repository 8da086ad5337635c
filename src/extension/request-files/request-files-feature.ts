// Editing .rpc request files: "Paste as Request" (protocall.pasteAsRequest) turns a `buf curl`,
// `protocall curl` or `grpcurl` command line on the clipboard into a request, appended to the active
// .rpc editor or a new untitled one (the core's commandLineToRequests does the conversion). The
// command also takes the text as its argument, for other extensions and tests: a browser-hosted
// editor may never answer a clipboard read. The commands are listed in ../command-table.ts.
import * as vscode from "vscode";
import { errorMessage } from "../../core/errors";
import { commandLineToRequests } from "../../core/rpcfile/from-curl";
import type { ProtocallContext } from "../context";
import { type AddedRequest, addRequestToEditor } from "../rpc-editor";

/** What Paste as Request did: where the requests went, how many, and what was left out. */
export interface PastedRequest extends AddedRequest {
  count: number;
  notes: string[];
}

export class RequestFilesFeature {
  constructor(private readonly ctx: ProtocallContext) {}

  /**
   * protocall.pasteAsRequest: the command line in `text`, else on the clipboard, as requests. A text
   * that is not such a command line gets an error message saying why (also returned as `error`), and
   * nothing is added.
   */
  async pasteAsRequest(text?: unknown): Promise<PastedRequest | { error: string } | undefined> {
    const commandLine = typeof text === "string" ? text : await vscode.env.clipboard.readText();
    let pasted: ReturnType<typeof commandLineToRequests>;
    try {
      pasted = commandLineToRequests(commandLine);
    } catch (err) {
      const message = `Protocall: cannot paste as a request: ${errorMessage(err)}`;
      this.ctx.log.warn(message);
      void vscode.window.showErrorMessage(message);
      return { error: message };
    }
    const added = await addRequestToEditor(this.ctx.settings, pasted.text);
    if (!added) return undefined;
    const what = `${pasted.count} request${pasted.count === 1 ? "" : "s"} from ${[...new Set(pasted.tools)].join(", ")}`;
    this.ctx.log.info(`Pasted ${what}${pasted.notes.length ? ` (${pasted.notes.join("; ")})` : ""}`);
    if (pasted.notes.length > 0) {
      void vscode.window.showWarningMessage(`Protocall: pasted ${what}. Note: ${pasted.notes.join("; ")}.`);
    }
    return { ...added, count: pasted.count, notes: pasted.notes };
  }
}
