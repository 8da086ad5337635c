// Adding a new request to the text of a `.rpc` file: after the last request, separated by an empty
// line, with the file variable its URL needs (`@host = …`) defined at the top when neither the file
// nor the environment defines it; and where to put the cursor (the first value of the JSON body).
import { parseRpcFile } from "./parse";

export interface TextInsert {
  /** Offset in the original text. */
  offset: number;
  text: string;
}

export interface AppendResult {
  /** Inserts to apply to the original text (offsets in the original, ascending). */
  inserts: TextInsert[];
  /** Where the cursor goes in the resulting text: the start of the body's first line inside `{`. */
  cursor: number;
}

export interface AppendOptions {
  /** A variable the request uses, defined at the top when the file does not define it. */
  variable?: { name: string; value: string };
  /** Names the environment file (or other scope) already defines. */
  defined?: readonly string[];
}

export function appendRequest(existing: string, request: string, options: AppendOptions = {}): AppendResult {
  const inserts: TextInsert[] = [];
  let added = 0;
  const v = options.variable;
  if (v && !options.defined?.includes(v.name)) {
    const parsed = parseRpcFile(existing);
    if (!parsed.variables.some((x) => x.name.text === v.name)) {
      const line = `@${v.name} = ${v.value.replace(/[\r\n]/g, "")}\n`;
      const text = existing.trim() === "" ? line : `${line}\n`;
      inserts.push({ offset: 0, text });
      added += text.length;
    }
  }
  // The new request starts after an empty line.
  let separator: string;
  if (existing === "") separator = added > 0 ? "\n" : "";
  else if (existing.endsWith("\n\n")) separator = "";
  else if (existing.endsWith("\n")) separator = "\n";
  else separator = "\n\n";
  const tail = `${separator}${request.endsWith("\n") ? request : `${request}\n`}`;
  // One insert per offset, so that the order of equal offsets never matters.
  if (inserts.length > 0 && existing.length === 0) inserts[0].text += tail;
  else inserts.push({ offset: existing.length, text: tail });
  const start = existing.length + added + separator.length;
  return { inserts, cursor: start + bodyCursor(request) };
}

/** The offset in a request's text of the first value of its body (or the body's start). */
function bodyCursor(request: string): number {
  const blank = request.indexOf("\n\n");
  if (blank < 0) return request.length;
  const body = blank + 2;
  if (request[body] !== "{") return body;
  const next = request.indexOf("\n", body);
  if (next < 0 || request.slice(body, next).trim() !== "{") return body + 1;
  const line = request.slice(next + 1, request.indexOf("\n", next + 1) >>> 0);
  const indent = line.length - line.trimStart().length;
  // A first field (`  "name": ""`): the cursor goes inside its value; an empty object: after `{`.
  const m = /^(\s*"[^"]*":\s*)/.exec(line);
  if (m && !line.trimStart().startsWith("}")) {
    const valueStart = m[1].length;
    const quoted = line[valueStart] === '"' ? 1 : 0;
    return next + 1 + valueStart + quoted;
  }
  return line.trimStart().startsWith("}") ? body + 1 : next + 1 + indent;
}
