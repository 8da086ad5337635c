// What every part of the extension gets at activation: the extension context, the log, and the
// language client (started on first need). Parts register their own commands and views with these.
import type * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

export interface ExtensionShared {
  context: vscode.ExtensionContext;
  /** The "Protocall" output channel; verbose transcripts go here, with secrets redacted. */
  log: vscode.LogOutputChannel;
  /** Starts the language server if it is not running yet; resolves once it is ready. */
  languageClient(): Promise<LanguageClient>;
}
