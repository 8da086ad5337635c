// The import statements of a .proto file, read with a small tokenizer (comments and string literals
// are skipped properly, so an "import" inside a comment or an option value does not count). The
// registry needs only the imported paths, to work out which modules a push depends on; compiling the
// file would cost far more and needs every dependency at hand.

/** The paths a .proto file imports (`import`, `import public`, `import weak`), in order. */
export function protoImports(text: string): string[] {
  const imports: string[] = [];
  const n = text.length;
  let i = 0;
  /** Whether the next token starts a statement (start of file, or after ";", "{" or "}"). */
  let statementStart = true;
  const skipSpaceAndComments = () => {
    for (;;) {
      while (i < n && /\s/.test(text[i])) i++;
      if (text.startsWith("//", i)) {
        const end = text.indexOf("\n", i);
        i = end < 0 ? n : end + 1;
      } else if (text.startsWith("/*", i)) {
        const end = text.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
      } else {
        return;
      }
    }
  };
  const readString = (): string | undefined => {
    const quote = text[i];
    if (quote !== '"' && quote !== "'") return undefined;
    let out = "";
    i++;
    while (i < n && text[i] !== quote) {
      if (text[i] === "\n") return undefined;
      if (text[i] === "\\" && i + 1 < n) {
        out += text[i + 1];
        i += 2;
      } else {
        out += text[i++];
      }
    }
    i++; // the closing quote
    return out;
  };
  const readWord = (): string => {
    const start = i;
    while (i < n && /[A-Za-z0-9_.]/.test(text[i])) i++;
    return text.slice(start, i);
  };
  while (i < n) {
    skipSpaceAndComments();
    if (i >= n) break;
    const c = text[i];
    if (c === '"' || c === "'") {
      readString();
      statementStart = false;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const word = readWord();
      if (word === "import" && statementStart) {
        skipSpaceAndComments();
        const save = i;
        const modifier = readWord();
        if (modifier !== "public" && modifier !== "weak") i = save;
        skipSpaceAndComments();
        let path = readString();
        // Adjacent string literals are concatenated.
        for (;;) {
          skipSpaceAndComments();
          if (path === undefined || (text[i] !== '"' && text[i] !== "'")) break;
          const more = readString();
          if (more === undefined) break;
          path += more;
        }
        if (path !== undefined && text[i] === ";") imports.push(path);
      }
      statementStart = false;
      continue;
    }
    statementStart = c === ";" || c === "{" || c === "}";
    i++;
  }
  return imports;
}
