// The input of "Add server…" in the Services view, checked before it is saved to `protocall.servers`:
// the server's base URL and its headers (typed as `Name: value; Other: value`).
import { errorMessage } from "../errors";
import { parseHeaderLine } from "../header-line";

/** Why `text` is not a usable server base URL (a message saying how to write one), or undefined when it is. */
export function serverUrlProblem(text: string): string | undefined {
  const t = text.trim();
  if (t === "")
    return "Enter the server's base URL, such as http://127.0.0.1:8080 or https://api.example.com";
  if (/^[\w.-]+(:\d+)?(\/.*)?$/.test(t)) {
    return `Add the scheme: http://${t} (plain text) or https://${t} (TLS)`;
  }
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    return `"${t}" is not a URL; write it as http://host:port or https://host`;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    return `The URL must start with http:// or https:// (not ${u.protocol}//)`;
  }
  if (u.hostname === "") return "The URL names no host; write it as http://host:port";
  if (u.search || u.hash) return "Remove the query (?…) and fragment (#…): give the base URL only";
  if (u.username || u.password) return "Do not put credentials in the URL; add them as a header instead";
  return undefined;
}

/** The URL as saved: trimmed, without a trailing slash. */
export function normalizeServerUrl(text: string): string {
  return text.trim().replace(/\/+$/, "");
}

/**
 * Splits `Name: value; Other: value` (or one per line) into header lines, checked as `-H` values.
 * Empty input gives no headers.
 */
export function parseHeaderInput(text: string): { headers: string[]; problem?: string } {
  const parts = text
    .split(/[;\n]/)
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const headers: string[] = [];
  for (const p of parts) {
    try {
      const [name, value] = parseHeaderLine(p, "the header");
      headers.push(`${name}: ${value}`);
    } catch (err) {
      return { headers: [], problem: errorMessage(err) };
    }
  }
  return { headers };
}
