// A failed `# @snapshot` check in the editor: a diff of the stored snapshot file against the file as
// it would be with the new response (a read-only document of the `protocall-snapshot` scheme), and
// "Accept", which stores the new response (core/assertions/snapshot.ts writeSnapshot, the same write
// `protocall run --update-snapshots` makes). Accept is offered in a notification and on the diff's
// title bar (protocall.acceptSnapshot, ../command-table.ts).
import { existsSync } from "node:fs";
import { basename } from "node:path";
import * as vscode from "vscode";
import type { CheckResult } from "../../core/assertions/evaluate";
import { type SnapshotSpec, snapshotFileText, writeSnapshot } from "../../core/assertions/snapshot";
import { errorMessage } from "../../core/errors";

export const snapshotScheme = "protocall-snapshot";

/** A new response waiting to be accepted: where it goes and what it is. */
export interface SnapshotProposal {
  file: string;
  key: string;
  snapshot: CheckResult["actual"];
  /** The proposed file's document. */
  uri: vscode.Uri;
}

export class SnapshotReview implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly proposals = new Map<string, SnapshotProposal>();
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration: vscode.Disposable;
  private last: SnapshotProposal | undefined;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(snapshotScheme, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  /** Opens the diff of a failed snapshot check and offers Accept (not awaited by the caller). */
  async review(
    spec: SnapshotSpec,
    check: CheckResult,
    interactive: boolean,
  ): Promise<SnapshotProposal | undefined> {
    let text: string;
    try {
      text = snapshotFileText(spec.file, spec.key, check.actual ?? null);
    } catch {
      return undefined; // A broken file: the check's message already says how to fix it.
    }
    const uri = vscode.Uri.from({
      scheme: snapshotScheme,
      path: spec.file,
      query: new URLSearchParams({ key: spec.key }).toString(),
    });
    const proposal: SnapshotProposal = { file: spec.file, key: spec.key, snapshot: check.actual, uri };
    this.proposals.set(uri.toString(), proposal);
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
    this.last = proposal;
    if (!interactive) return proposal;
    const stored = existsSync(spec.file) ? vscode.Uri.file(spec.file) : uri;
    await vscode.commands.executeCommand(
      "vscode.diff",
      stored,
      uri,
      `${basename(spec.file)}: "${spec.key}" stored ↔ new response`,
      { preview: true },
    );
    const count = check.diff?.length ?? 0;
    void vscode.window
      .showWarningMessage(
        `Protocall: the response of "${spec.key}" differs from its snapshot at ${count} ${count === 1 ? "path" : "paths"}.`,
        "Accept",
      )
      .then((answer) => (answer === "Accept" ? this.accept(uri) : undefined));
    return proposal;
  }

  /** protocall.acceptSnapshot: stores the proposal shown (or, without one, the latest). */
  async accept(uriArg?: unknown): Promise<SnapshotProposal | undefined> {
    const key =
      uriArg instanceof vscode.Uri ? uriArg.toString() : typeof uriArg === "string" ? uriArg : undefined;
    const proposal = key ? this.proposals.get(key) : this.last;
    if (!proposal) {
      void vscode.window.showInformationMessage("Protocall: no snapshot difference to accept.");
      return undefined;
    }
    try {
      writeSnapshot(proposal.file, proposal.key, proposal.snapshot ?? null);
    } catch (e) {
      void vscode.window.showErrorMessage(`Protocall: cannot store the snapshot: ${errorMessage(e)}`);
      return undefined;
    }
    this.proposals.delete(proposal.uri.toString());
    if (this.last === proposal) this.last = undefined;
    void vscode.window.showInformationMessage(
      `Protocall: snapshot of "${proposal.key}" stored in ${basename(proposal.file)}.`,
    );
    return proposal;
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}
