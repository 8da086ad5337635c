// The .netrc file format: `machine <host> login <name> password <secret>` entries (on one line or
// many), a `default` entry, `account` and `macdef` (skipped), `#` comments and "quoted" tokens.

export interface NetrcEntry {
  /** Undefined for the `default` entry. */
  machine?: string;
  login?: string;
  password?: string;
  /** 1-based line of the `machine` / `default` token, for messages. */
  line: number;
}

interface Token {
  text: string;
  line: number;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === "\n") {
      line++;
      i++;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r" || c === "\f" || c === "\v") {
      i++;
      continue;
    }
    if (c === "#") {
      while (i < n && text[i] !== "\n") i++;
      continue;
    }
    if (c === '"') {
      let s = "";
      i++;
      while (i < n && text[i] !== '"') {
        if (text[i] === "\\" && i + 1 < n) i++;
        if (text[i] === "\n") line++;
        s += text[i++];
      }
      i++;
      tokens.push({ text: s, line });
      continue;
    }
    const start = i;
    while (i < n && !/\s/.test(text[i])) i++;
    const word = text.slice(start, i);
    if (word === "macdef") {
      // A macro definition (its name and body) runs to the next empty line.
      const end = text.indexOf("\n\n", i);
      const stop = end < 0 ? n : end + 2;
      for (let k = i; k < stop; k++) if (text[k] === "\n") line++;
      i = stop;
      continue;
    }
    tokens.push({ text: word, line });
  }
  return tokens;
}

/** Parses the text of a .netrc file into its entries, in order. */
export function parseNetrc(text: string): NetrcEntry[] {
  const entries: NetrcEntry[] = [];
  const tokens = tokenize(text);
  let current: NetrcEntry | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    switch (t.text) {
      case "machine":
        current = { machine: tokens[++i]?.text ?? "", line: t.line };
        entries.push(current);
        break;
      case "default":
        current = { line: t.line };
        entries.push(current);
        break;
      case "login":
        if (current) current.login = tokens[++i]?.text ?? "";
        else i++;
        break;
      case "password":
        if (current) current.password = tokens[++i]?.text ?? "";
        else i++;
        break;
      case "account":
        i++;
        break;
      default:
        break;
    }
  }
  return entries;
}

/**
 * The entry for `host` (as written in the URL, with its port if one was written), else the
 * `default` entry (wherever it is in the file), else undefined. Host names compare case-insensitively.
 */
export function findNetrcEntry(entries: NetrcEntry[], host: string): NetrcEntry | undefined {
  const h = host.toLowerCase();
  return (
    entries.find((e) => e.machine !== undefined && e.machine.toLowerCase() === h) ??
    entries.find((e) => e.machine === undefined)
  );
}
