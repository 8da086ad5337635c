// The Send part's API (activate()'s `send`) and what one "Send" returns. protocall.send also returns
// the SendOutcome, so `await vscode.commands.executeCommand("protocall.send", uri, index)` gives the
// result shown in the panel; the copy commands return the copied command line.
import type * as vscode from "vscode";
import type { CheckFailure } from "../../core/assertions/checked-request";
import type { CheckResult } from "../../core/assertions/evaluate";
import type { RequestVerdict } from "../../core/assertions/results";
import type { CallResult } from "../../core/invoke/call-session";
import type { ResponsePanelState } from "../response/panel";
import type { ResponseEntry } from "../response/render";

export type CopyFormat = "protocall" | "buf" | "grpcurl";

/** What one "Send" did. */
export interface SendOutcome {
  /** Whether the request went out (false: a problem in the request, or the user declined). */
  sent: boolean;
  /** The panel entry (also for requests that were not sent: it lists the problems). */
  entry?: ResponseEntry;
  result?: CallResult;
  /** Why it was not sent. */
  problems: string[];
  /** Each check of the response (the implicit status check, `# @assert`, `# @capture`), once sent. */
  checks?: CheckResult[];
  /** The values its `# @capture` options took. */
  captured?: Record<string, string>;
  /** passed, failed (a check did not hold) or errored (the call failed outside the RPC). */
  verdict?: RequestVerdict;
  /** What to tell the user when it did not pass, one line each, where (the core's failure lines). */
  failures?: CheckFailure[];
}

export interface SendApi {
  send(uri?: string | vscode.Uri, requestIndex?: number): Promise<SendOutcome | undefined>;
  copyAs(format: CopyFormat, uri?: string | vscode.Uri, requestIndex?: number): Promise<string | undefined>;
  /** What the response panel shows now. */
  panel(): ResponsePanelState;
  /** The responses kept for a request, newest first. */
  history(uri: string | vscode.Uri, requestIndex: number): ResponseEntry[];
  /** Forgets connections and schemas (the next send dials and resolves again). */
  refresh(): Promise<void>;
}
