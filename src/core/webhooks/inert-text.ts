// Text from a server (names, callback URLs, error messages) shown in editor notifications and dialogs,
// made inert: those surfaces turn `[text](target)` into a clickable link (command links included), so
// the link syntax is broken apart and the text shows as written, nothing more.

/** `text` with every `](` written as `] (`, so no part of it can become a link. */
export function inertText(text: string): string {
  return text.replace(/\]\s*\(/g, "] (");
}
