// A registry's address as the user gives it: a domain means https://domain; a full http(s) URL is
// accepted too, so a local emulator on http://127.0.0.1:PORT works (the same rule as `--remote`).
import { ProtocallError } from "../errors";

/** Why `text` is not a registry address, or undefined when it is one. */
export function registryUrlProblem(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === "")
    return "give the registry's domain (buf.example.com) or its URL (https://buf.example.com)";
  if (/\s/.test(trimmed)) return `"${trimmed}" has white space in it: give a domain or a URL`;
  const full = trimmed.includes("://") ? trimmed : `https://${trimmed}`;
  let url: URL;
  try {
    url = new URL(full);
  } catch {
    return `"${trimmed}" is not a domain or a URL: write buf.example.com or https://buf.example.com`;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return `"${trimmed}" uses ${url.protocol.replace(/:$/, "")}: a registry is reached over https (or http for a local one)`;
  }
  if (url.hostname === "")
    return `"${trimmed}" has no host: write buf.example.com or https://buf.example.com`;
  if (url.search !== "" || url.hash !== "") {
    return `"${trimmed}" must not have a query or fragment: give only the registry's address`;
  }
  if (url.username !== "" || url.password !== "") {
    return `"${trimmed}" must not carry a user name or password: sign in with an API token instead`;
  }
  return undefined;
}

/** The registry's base URL (no trailing slash), e.g. `https://buf.example.com`; throws when invalid. */
export function registryBaseUrl(text: string): string {
  const problem = registryUrlProblem(text);
  if (problem) throw new ProtocallError(`registry address ${problem}`);
  const trimmed = text.trim();
  const url = new URL(trimmed.includes("://") ? trimmed : `https://${trimmed}`);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
}
