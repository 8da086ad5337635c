// Finds where and why a JSON text is invalid, for messages with an exact line and column.
// Only run after JSON.parse has failed, so it can be simple rather than fast.

export interface JsonProblem {
  /** Offset in the text of the offending character (the text's length at an early end). */
  offset: number;
  reason: string;
}

const ws = new Set([" ", "\t", "\n", "\r"]);

/** Returns the first problem in `text` as one JSON value, or undefined when it is valid. */
export function findJsonProblem(text: string): JsonProblem | undefined {
  let i = 0;
  const n = text.length;

  class Stop {
    constructor(readonly problem: JsonProblem) {}
  }
  const stop = (reason: string, at = i): never => {
    throw new Stop({ offset: at, reason });
  };
  const describe = (at: number) => (at >= n ? "the end of the document" : `${JSON.stringify(text[at])}`);
  const skip = () => {
    while (i < n && ws.has(text[i])) i++;
  };

  const value = (): void => {
    skip();
    if (i >= n) stop("a value is missing at the end of the document");
    const c = text[i];
    if (c === "{") {
      object();
      return;
    }
    if (c === "[") {
      array();
      return;
    }
    if (c === '"') {
      string();
      return;
    }
    if (c === "-" || (c >= "0" && c <= "9")) {
      number();
      return;
    }
    for (const lit of ["true", "false", "null"]) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    if (c < " ")
      stop(
        `unexpected control character U+${c.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()} (binary data?)`,
      );
    stop(`unexpected ${describe(i)}: expected a JSON value`);
  };

  const object = () => {
    i++;
    skip();
    if (text[i] === "}") {
      i++;
      return;
    }
    for (;;) {
      skip();
      if (text[i] !== '"') stop(`unexpected ${describe(i)}: expected a field name in double quotes`);
      string();
      skip();
      if (text[i] !== ":") stop(`unexpected ${describe(i)}: expected ':' after the field name`);
      i++;
      value();
      skip();
      if (text[i] === ",") {
        i++;
        skip();
        if (text[i] === "}") stop("unexpected '}' after ',': remove the trailing comma");
        continue;
      }
      if (text[i] === "}") {
        i++;
        return;
      }
      stop(`unexpected ${describe(i)}: expected ',' or '}' in the object`);
    }
  };

  const array = () => {
    i++;
    skip();
    if (text[i] === "]") {
      i++;
      return;
    }
    for (;;) {
      value();
      skip();
      if (text[i] === ",") {
        i++;
        skip();
        if (text[i] === "]") stop("unexpected ']' after ',': remove the trailing comma");
        continue;
      }
      if (text[i] === "]") {
        i++;
        return;
      }
      stop(`unexpected ${describe(i)}: expected ',' or ']' in the array`);
    }
  };

  const string = () => {
    i++;
    while (i < n) {
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) stop("invalid \\u escape in a string");
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) stop(`invalid escape \\${e ?? ""} in a string`);
        i += 2;
        continue;
      }
      if (c < " ") {
        stop(
          c === "\n"
            ? "a string is not closed before the end of the line (a missing '\"'?)"
            : `control character U+${c.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()} in a string: escape it`,
        );
      }
      i++;
    }
    stop("a string is not closed (a missing '\"'?)");
  };

  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0] === "-") stop(`invalid number`);
    i += (m as RegExpExecArray)[0].length;
    if (i < n && /[0-9A-Za-z.]/.test(text[i])) stop(`invalid number`);
  };

  try {
    value();
    skip();
    if (i < n) stop(`unexpected ${describe(i)} after the end of the JSON value`);
    return undefined;
  } catch (e) {
    if (e instanceof Stop) return e.problem;
    throw e;
  }
}

/**
 * Where and why a text is not one JSON value, as `line L, column C: reason`, quoting at most the
 * offending character (never the text around it: the file may hold secrets). Undefined when valid.
 */
export function jsonProblemAt(text: string): string | undefined {
  const problem = findJsonProblem(text);
  if (!problem) return undefined;
  const before = text.slice(0, problem.offset);
  const line = before.split("\n").length;
  const column = problem.offset - (before.lastIndexOf("\n") + 1) + 1;
  return `line ${line}, column ${column}: ${problem.reason}`;
}
