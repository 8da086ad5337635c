// A reference to a module of a schema registry, as `buf` reads it in `--schema` and `buf build`:
// `REMOTE/owner/module[:ref]`, where REMOTE is the registry's host name (with a port when it is not
// 443, `localhost:8443`), and ref is a label or a commit id (dashless or dashed). With no ref the
// module's default label is meant. buf sends the ref exactly as typed and lets the registry decide
// what it names, so this parser does too: it only splits the text.

export interface ModuleRef {
  /** The registry host, with its port if the value had one: `buf.example.com`, `localhost:8443`. */
  readonly remote: string;
  readonly owner: string;
  readonly module: string;
  /** The text after `:` as typed, or "" for the default label. */
  readonly ref: string;
}

const refPattern = /^([A-Za-z0-9.-]+(?::\d+)?)\/([^/\s:]+)\/([^/\s:]+)(?::(\S+))?$/;

/**
 * Whether a `--schema` value that is not an existing path names a registry module: a host with a dot
 * (`buf.example.com/acme/weather`), `localhost`, or any host with a port, then `/owner/module`, then
 * an optional `:ref`. `proto/acme/v1` (no dot, no port) is a missing directory, not a module.
 */
export function looksLikeModuleRef(value: string): boolean {
  const m = refPattern.exec(value);
  if (!m) return false;
  const host = m[1];
  return /:\d+$/.test(host) || host.includes(".") || host.toLowerCase() === "localhost";
}

/** Splits `REMOTE/owner/module[:ref]`; undefined when the value has another shape. */
export function parseModuleRef(value: string): ModuleRef | undefined {
  if (!looksLikeModuleRef(value)) return undefined;
  const m = refPattern.exec(value)!;
  return { remote: m[1].toLowerCase(), owner: m[2], module: m[3], ref: m[4] ?? "" };
}

/** What is wrong with a module reference as a user typed it, or undefined when it is one. */
export function moduleRefProblem(value: string): string | undefined {
  if (looksLikeModuleRef(value)) return undefined;
  return `"${value}" is not a registry module: write REMOTE/owner/module[:ref], such as buf.example.com/acme/weather or localhost:8443/acme/weather:v1`;
}

/** `remote/owner/module`, as buf names a module in its messages. */
export function moduleFullName(ref: { remote: string; owner: string; module: string }): string {
  return `${ref.remote}/${ref.owner}/${ref.module}`;
}

/** The value back as typed: `remote/owner/module[:ref]`. */
export function formatModuleRef(ref: ModuleRef): string {
  return ref.ref ? `${moduleFullName(ref)}:${ref.ref}` : moduleFullName(ref);
}

/** A commit id in the registry's form (32 lowercase hex digits) from a dashless or dashed UUID. */
export function normalizeCommitId(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  if (/^[0-9a-f]{32}$/.test(t)) return t;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(t)) return t.replaceAll("-", "");
  return undefined;
}

/** A dashless id written with dashes, as buf prints commit ids in some errors. */
export function dashedId(id: string): string {
  return /^[0-9a-f]{32}$/.test(id)
    ? `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`
    : id;
}

/** The registry's base URL: buf always speaks https to a registry. */
export function registryBaseUrl(remote: string): string {
  return `https://${remote}`;
}
