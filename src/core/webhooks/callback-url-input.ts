// The callback URL check as an editor input box shows it while the user types: every rule the URL
// breaks, each with its own message, and editor advice in place of command-line flags. The URL itself
// shows right above the message, so it is not repeated in each line.
import { callbackUrlProblems } from "./callback-url";
import { defaultPrefix } from "./paths";

/** Every problem of `text` as a callback URL (empty when it is valid), worded for the editor. */
export function callbackUrlInputProblems(text: string, prefix = defaultPrefix): string[] {
  return callbackUrlProblems(text, prefix).map((p) =>
    p
      .replace(`callback URL "${text}" `, "The URL ")
      .replace(/^callback URL /, "The URL ")
      .replace("(`protocall listen --tls`)", "(the setting protocall.listener.tls, on by default)"),
  );
}

/**
 * The input box's validation message: each problem as a bullet, one per line (an input box shows
 * the lines run together, so the bullets keep them apart); undefined when valid.
 */
export function callbackUrlInputMessage(text: string, prefix = defaultPrefix): string | undefined {
  const problems = callbackUrlInputProblems(text, prefix);
  return problems.length ? problems.map((p) => `• ${p}`).join("\n") : undefined;
}
