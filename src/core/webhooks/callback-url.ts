// The registry's rules for a webhook callback URL, checked before a request is sent so the user
// learns every problem at once. Each rule has its own message.
import { eventPath } from "./paths";

/** Returns the problems with `url` as a callback URL (empty when it is valid). */
export function callbackUrlProblems(url: string, prefix: string): string[] {
  const path = eventPath(prefix);
  if (url.trim() === "") return [`callback URL is empty: give the listener's URL ending in ${path}`];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [`callback URL "${url}" is not a valid URL: write it as https://HOST${path}`];
  }
  const problems: string[] = [];
  if (parsed.protocol !== "https:") {
    problems.push(
      `callback URL "${url}" must use the https scheme, not ${parsed.protocol.replace(/:$/, "")}: serve the listener over TLS (\`protocall listen --tls\`)`,
    );
  }
  // The URL parser reads "https:///x" and "https:/x" as if "x" were the host; the raw text must name one.
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(url)?.[1];
  if (!authority?.replace(/^.*@/, "")) {
    problems.push(`callback URL "${url}" has no host: write it as https://HOST${path}`);
  }
  if (parsed.search !== "" || url.includes("?")) {
    problems.push(`callback URL "${url}" must not have a query: remove the part from "?"`);
  }
  if (parsed.hash !== "" || url.includes("#")) {
    problems.push(`callback URL "${url}" must not have a fragment: remove the part from "#"`);
  }
  // The raw text after the authority, up to any query or fragment, must end with the exact path.
  const afterScheme = url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, "");
  const rawPath = afterScheme.replace(/[?#].*$/s, "");
  if (!rawPath.trimEnd().endsWith(path)) {
    problems.push(`callback URL "${url}" must end with the Event method's full path ${path}`);
  }
  if (/\s/.test(url)) {
    problems.push(`callback URL "${url}" has extra characters (white space): remove them`);
  }
  if (parsed.username !== "" || parsed.password !== "") {
    problems.push(`callback URL "${url}" has extra characters (user info before "@"): remove them`);
  }
  return problems;
}
