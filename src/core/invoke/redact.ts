// The one redactor: hides secrets before they reach anything a user may read or share (`curl -v`'s
// transcript, the editor's output channel, error texts, copied command lines): header values whose
// names say they carry credentials (Authorization, cookies, tokens, API keys: X-Access-Token,
// X-Goog-Api-Key, Private-Token, X-Amz-Security-Token alike), passwords in URLs, in `--user` and in
// netrc lines, and credential-like query parameters and JSON fields; the secret settings of an
// `--auth` value (client-secret=, password=, refresh-token=); and every value it was told is a secret
// (rememberSecret: the OAuth2 tokens we fetch and the secrets we sent for them), wherever it appears.
// Idempotent.

const SECRET_NAME =
  /authorization|cookie|token|secret|passw(?:or)?d|api[-_]?key|apikey|session|credential|signature/i;

const MARK = "[redacted]";

/** Values known to be secrets (tokens we fetched), hidden wherever they appear. */
const known = new Set<string>();

/** Tells the redactor a secret value (an OAuth2 token, a client secret): it is hidden from now on. */
export function rememberSecret(value: string): void {
  // Short values would hide ordinary text.
  if (value.length >= 8 && value !== MARK) known.add(value);
}

/** Whether a header of this name carries a credential. */
export function isSecretHeader(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** The value shown for a header: a credential is replaced by a marker that keeps the auth scheme. */
export function redactHeaderValue(name: string, value: string): string {
  return hideValue(name, value) ?? value;
}

/** The value to show for a header, or undefined to show it as it is. */
function hideValue(name: string, value: string): string | undefined {
  if (!SECRET_NAME.test(name) || value === MARK || value === "") return undefined;
  // Keep the scheme of an Authorization value (Bearer, Basic).
  const scheme = /authorization$/i.test(name) ? /^([A-Za-z][\w-]*)\s+(\S.*)$/.exec(value) : null;
  if (scheme) return scheme[2] === MARK ? undefined : `${scheme[1]} ${MARK}`;
  return MARK;
}

/** The line with its secrets replaced by `[redacted]`. */
export function redactSecrets(line: string): string {
  let out = line;
  for (const secret of known) if (out.includes(secret)) out = out.split(secret).join(MARK);
  // Verbose header lines: `> (#1) Authorization: Bearer x`, `< (#2) [*] Set-Cookie: …`, and plain
  // `Name: value` lines.
  out = out.replace(
    /^((?:.*?[<>] \(#\d+\)(?: \[\*\])? )?)([A-Za-z0-9!#$%&*+.^_`|~-]+):[ \t]*(.*)$/,
    (whole, head: string, name: string, value: string) => {
      const hidden = hideValue(name, value);
      return hidden === undefined ? whole : `${head}${name}: ${hidden}`;
    },
  );
  // -H / --header / --reflect-header values on a command line, quoted or not.
  const flag = "((?:-H|--header|--reflect-header)(?:=|\\s+))";
  const name = "([A-Za-z0-9!#$%&*+.^_`|~-]+):[ \\t]*";
  out = out.replace(new RegExp(`${flag}(['"])${name}((?:(?!\\2).)*)\\2`, "g"), (whole, f, q, n, v) => {
    const hidden = hideValue(n, v);
    return hidden === undefined ? whole : `${f}${q}${n}: ${hidden}${q}`;
  });
  out = out.replace(new RegExp(`${flag}${name}([^\\s'"]+)`, "g"), (whole, f, n, v) => {
    const hidden = hideValue(n, v);
    return hidden === undefined ? whole : `${f}${n}:${hidden}`;
  });
  // user:password@ in URLs.
  out = out.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)[^@\s/]+@/gi, `$1${MARK}@`);
  // --user / -u name:password.
  out = out.replace(/((?:--user|-u)(?:=|\s+)['"]?[^:\s'"]+:)[^\s'"]+/g, `$1${MARK}`);
  // --auth settings: client-secret=… password=… refresh-token=… (quoted or not).
  out = out.replace(
    /(^|[\s'"])((?:client-secret|password|refresh-token)=)(?:"[^"]*"|'[^']*'|[^\s'"]+)/g,
    (whole, before: string, key: string) => (whole.endsWith(MARK) ? whole : `${before}${key}${MARK}`),
  );
  // netrc: `password SECRET` (and `login NAME password SECRET` on one line).
  out = out.replace(/(\bpassword\s+)(?!\[redacted\]|SECRET\b)\S+/g, `$1${MARK}`);
  // ?token=… &password=… in URLs.
  out = out.replace(/([?&][^=&\s#]*?)=([^&\s#'"]+)/g, (whole, key: string, value: string) =>
    SECRET_NAME.test(key) && value !== MARK ? `${key}=${MARK}` : whole,
  );
  // "password": "…" in JSON.
  out = out.replace(/("([^"\\]*)"\s*:\s*)"(?:[^"\\]|\\.)*"/g, (whole, head: string, key: string) =>
    SECRET_NAME.test(key) ? `${head}"${MARK}"` : whole,
  );
  return out;
}
