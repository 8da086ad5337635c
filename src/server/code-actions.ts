// Quick fixes: a diagnostic of this server that knows the text that fixes it (`data.replacement`:
// the closest field, method, enum value or code name, a JSON name for a proto name) offers to
// replace the text at its range with it. The fix is computed with the diagnostic, so a code action
// costs no schema look-up.
import {
  type CodeAction,
  CodeActionKind,
  type CodeActionParams,
  type Diagnostic,
} from "vscode-languageserver";

/** The replacement a diagnostic carries, if it is one of ours and has one. */
function replacementOf(d: Diagnostic): string | undefined {
  if (d.source !== "protocall") return undefined;
  const data = d.data as { replacement?: unknown } | undefined;
  return typeof data?.replacement === "string" ? data.replacement : undefined;
}

export function codeActions(params: CodeActionParams): CodeAction[] {
  const only = params.context.only;
  if (
    only &&
    !only.some((k) => k === CodeActionKind.QuickFix || CodeActionKind.QuickFix.startsWith(`${k}.`))
  ) {
    return [];
  }
  const out: CodeAction[] = [];
  for (const d of params.context.diagnostics) {
    const replacement = replacementOf(d);
    if (replacement === undefined) continue;
    out.push({
      title: `Change to ${replacement}`,
      kind: CodeActionKind.QuickFix,
      diagnostics: [d],
      isPreferred: true,
      edit: { changes: { [params.textDocument.uri]: [{ range: d.range, newText: replacement }] } },
    });
  }
  return out;
}
