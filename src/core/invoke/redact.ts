// Hides secrets in transcript lines before they reach a log anyone may read or share: header values
// whose names say they carry credentials, passwords in URLs and in `--user`, and credential-like
// query parameters and JSON fields. Applied to whole lines; idempotent.

const SECRET_NAME =
  /authorization|cookie|token|secret|passw(?:or)?d|api[-_]?key|apikey|session|credential|signature/i;

const MARK = "[redacted]";

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
