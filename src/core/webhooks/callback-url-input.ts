// The callback URL check as an editor input box shows it while the user types: every rule the URL
// breaks, each with its own message, and editor advice in place of command-line flags.
import { callbackUrlProblems } from "./callback-url";
import { defaultPrefix } from "./paths";

/** Every problem of `text` as a callback URL (empty when it is valid), worded for the editor. */
export function callbackUrlInputProblems(text: string, prefix = defaultPrefix): string[] {
  return callbackUrlProblems(text, prefix).map((p) =>
    p.replace("(`protocall listen --tls`)", "(the setting protocall.listener.tls, on by default)"),
  );
}

/** The input box's validation message: each problem on its own line; undefined when valid. */
export function callbackUrlInputMessage(text: string, prefix = defaultPrefix): string | undefined {
  const problems = callbackUrlInputProblems(text, prefix);
  return problems.length ? problems.join("\n") : undefined;
}
