// Splits pasted shell text (sh, bash, zsh) into commands and their words, as the shell would before
// running them: single quotes, double quotes (with \" \\ \$ \` escapes), backslash escapes,
// backslash-newline continuations, `$'…'` strings; a newline, `;`, `&&` or `||` ends a command; `<`
// and `>` redirections are kept as their own items. What the shell would expand from the environment
// (`$NAME`, `${NAME}`, outside single quotes) becomes the request-file reference `{{$env NAME}}`, so a
// pasted command keeps reading its token from the environment. Command substitution, pipes and
// globs cannot be turned into a request: they are refused with a message that says so.
// Hand-written (not a shell-parsing package) because the environment references must be rewritten
// while the quoting of each character is known.
import { ProtocallError } from "../errors";

/** One item of a command: a word, or a redirection of the command's input or output to a file. */
export type ShellItem = { word: string } | { redirect: "<" | ">"; file: string };

const ansiEscapes: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' };

/** The commands of the text, each a list of items (empty commands are left out). */
export function splitCommands(text: string): ShellItem[][] {
  const commands: ShellItem[][] = [];
  let items: ShellItem[] = [];
  let word = "";
  let inWord = false;
  let redirect: "<" | ">" | undefined;
  const endWord = () => {
    if (!inWord) return;
    if (redirect) items.push({ redirect, file: word });
    else items.push({ word });
    redirect = undefined;
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (redirect) throw new ProtocallError(`the redirection ${redirect} names no file`);
    if (items.length > 0) commands.push(items);
    items = [];
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\") {
      const next = text[i + 1];
      if (next === "\n" || (next === "\r" && text[i + 2] === "\n")) {
        i += next === "\n" ? 2 : 3; // a line continuation
        continue;
      }
      if (next !== undefined) {
        word += next;
        inWord = true;
      }
      i += 2;
      continue;
    }
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new ProtocallError("a single quote (') is not closed: paste the whole command");
      word += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === "$" && text[i + 1] === "'") {
      const [value, end] = ansiString(text, i + 2);
      word += value;
      inWord = true;
      i = end;
      continue;
    }
    if (c === '"') {
      const [value, end] = doubleQuoted(text, i + 1);
      word += value;
      inWord = true;
      i = end;
      continue;
    }
    if (c === "$") {
      const [value, end] = expansion(text, i);
      word += value;
      inWord = true;
      i = end;
      continue;
    }
    if (c === "`")
      throw new ProtocallError(
        "the command uses command substitution (`…`): paste the command with its values",
      );
    if (c === "#" && !inWord) {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (c === "\n" || c === ";") {
      endCommand();
      i++;
      continue;
    }
    if ((c === "&" && text[i + 1] === "&") || (c === "|" && text[i + 1] === "|")) {
      endCommand();
      i += 2;
      continue;
    }
    if (c === "|") {
      throw new ProtocallError("the command line holds a pipe (|): paste only the curl or grpcurl command");
    }
    if (c === "&")
      throw new ProtocallError("the command line holds & (a background job): paste only the command");
    if (c === "<" || c === ">") {
      endWord();
      if (redirect) throw new ProtocallError(`the redirection ${redirect} names no file`);
      redirect = c;
      i += text[i + 1] === c ? 2 : 1;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      endWord();
      i++;
      continue;
    }
    word += c;
    inWord = true;
    i++;
  }
  endCommand();
  return commands;
}

/** The text of a double-quoted string from `start` (after the quote), and the index after its end. */
function doubleQuoted(text: string, start: number): [string, number] {
  let value = "";
  let i = start;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') return [value, i + 1];
    if (c === "\\" && i + 1 < text.length) {
      const next = text[i + 1];
      if (next === "\n") i += 2;
      else if ('"\\$`'.includes(next)) {
        value += next;
        i += 2;
      } else {
        value += c;
        i++;
      }
      continue;
    }
    if (c === "$") {
      const [v, end] = expansion(text, i);
      value += v;
      i = end;
      continue;
    }
    if (c === "`")
      throw new ProtocallError(
        "the command uses command substitution (`…`): paste the command with its values",
      );
    value += c;
    i++;
  }
  throw new ProtocallError('a double quote (") is not closed: paste the whole command');
}

/** A `$'…'` string from `start` (after `$'`), and the index after its end. */
function ansiString(text: string, start: number): [string, number] {
  let value = "";
  let i = start;
  while (i < text.length) {
    const c = text[i];
    if (c === "'") return [value, i + 1];
    if (c === "\\" && i + 1 < text.length) {
      const next = text[i + 1];
      value += ansiEscapes[next] ?? `\\${next}`;
      i += 2;
      continue;
    }
    value += c;
    i++;
  }
  throw new ProtocallError("a $'…' string is not closed: paste the whole command");
}

/** `$NAME` or `${NAME}` at `start` as `{{$env NAME}}`; a lone `$` stays itself. */
function expansion(text: string, start: number): [string, number] {
  const next = text[start + 1];
  if (next === "(") {
    throw new ProtocallError(
      "the command uses command substitution ($(…)): paste the command with its values",
    );
  }
  if (next === "{") {
    const end = text.indexOf("}", start + 2);
    const name = end < 0 ? "" : text.slice(start + 2, end);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new ProtocallError(
        `the command uses the shell expansion \${${name || "…"}}, which a request file cannot express: write its value`,
      );
    }
    return [`{{$env ${name}}}`, end + 1];
  }
  const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(start + 1));
  if (!m) return ["$", start + 1];
  return [`{{$env ${m[0]}}}`, start + 1 + m[0].length];
}
