// What the commands of the views that list stored items (Deliveries, Traffic) share: which item a
// command is about (its argument, a tree node or an id, else the view's selection), and running a
// command's work so that a failure becomes an error notification (its text kept inert), not a throw.
import * as vscode from "vscode";
import { errorMessage, ProtocallError } from "../core/errors";
import { inertText } from "../core/webhooks/inert-text";

/** The id of the item a command is about; `notSelected` says what to select when there is none. */
export function itemId(arg: unknown, selection: readonly { id: number }[], notSelected: string): number {
  const id =
    typeof arg === "number"
      ? arg
      : arg && typeof arg === "object" && typeof (arg as { id: unknown }).id === "number"
        ? (arg as { id: number }).id
        : selection[0]?.id;
  if (id === undefined) throw new ProtocallError(notSelected);
  return id;
}

/** Runs a command's work; a failure is logged and shown as an error notification, not thrown. */
export async function guarded<R>(
  log: vscode.LogOutputChannel,
  what: string,
  work: () => Promise<R>,
): Promise<R | undefined> {
  try {
    return await work();
  } catch (err) {
    log.error(`${what}: ${errorMessage(err)}`);
    void vscode.window.showErrorMessage(inertText(errorMessage(err)));
    return undefined;
  }
}
