// The `.rpc` request file parser. Total: any text yields variables, requests and diagnostics with
// exact ranges, and nothing throws. The format:
//
//   @host = http://localhost:8080          file variables, before the first request
//   ### Greet a person                     a separator; its text names the request
//   # @protocol grpc                       request options: `protocall curl` long flags
//   GRPC {{host}}/demo.v1.GreetService/Greet   the request line: optional verb, then the URL
//   Authorization: Bearer {{token}}        headers until the first empty line
//
//   {"name": "world"}                      the body: zero or more JSON documents
//   < ./more.json                          or a file to include, relative to the .rpc file
//
// Lines starting with `#` or `//` are comments outside JSON documents (between body documents too); a
// line starting with `###` always starts a new request. A file without `###` holds one request. Values
// (and JSON documents, strings included) may hold `{{...}}` references, which variables.ts resolves.
// `# @name <text>` also names a request, as in .http files. `# @assert` and `# @capture` options
// (assertion-syntax.ts) say what the response must be and which of its values later requests use;
// `# @snapshot` compares the whole response with a stored one (core/assertions/snapshot.ts).

import { closest } from "../closest";
import { isProtocolOwnedHeader } from "../header-line";
import { curlFlagsByName } from "../invoke/curl-flags";
import { findJsonProblem } from "../invoke/json-error";
import { parseAssertion, parseCapture } from "./assertion-syntax";
import { checkOptionValue, extraOptionNames, optionFlag } from "./option-value";
import { snapshotPathProblem } from "./snapshot-path";
import type {
  Position,
  Range,
  RpcFile,
  RpcHeader,
  RpcOption,
  RpcRequest,
  RpcVariable,
  RpcVerb,
  Severity,
  Token,
} from "./types";

interface Line {
  text: string;
  line: number;
}

const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const variableName = /^[A-Za-z_][\w.-]*$/;
const optionLine = /^(\s*(?:#|\/\/)\s*)@([^\s=]*)(?:(=\s*|\s+)(.*?))?\s*$/s;
const variableLine = /^(\s*)@([^\s=]*)\s*(=?)\s*(.*?)\s*$/s;
const verbs: Record<string, RpcVerb> = { GRPC: "GRPC", "GRPC-WEB": "GRPC-WEB", CONNECT: "CONNECT" };

/** Splits text into lines at `\r\n`, `\n` or `\r`, as LSP does. */
export function splitLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

export function range(line: number, start: number, endLine: number, end: number): Range {
  return { start: { line, character: start }, end: { line: endLine, character: end } };
}

function token(l: Line, start: number, end: number): Token {
  return { text: l.text.slice(start, end), range: range(l.line, start, l.line, end) };
}

function isBlank(s: string): boolean {
  return s.trim() === "";
}

function isComment(s: string): boolean {
  const t = s.trimStart();
  return t.startsWith("#") || t.startsWith("//");
}

/** Parses a `.rpc` file. Never throws. */
export function parseRpcFile(text: string): RpcFile {
  const out: RpcFile = { variables: [], requests: [], diagnostics: [] };
  try {
    parseInto(typeof text === "string" ? text : String(text), out);
  } catch (err) {
    // Not expected; the fuzz test guards it. A parser bug must not take the editor or the CLI down.
    out.diagnostics.push({
      severity: "error",
      message: `internal parser error: ${err instanceof Error ? err.message : String(err)}`,
      range: range(0, 0, 0, 0),
    });
  }
  return out;
}

function parseInto(text: string, out: RpcFile): void {
  const lines = splitLines(text).map((t, i) => ({ text: t, line: i }));
  if (lines.length > 0 && lines[0].text.charCodeAt(0) === 0xfeff) {
    // A byte order mark is not part of the first line's content; keep ranges true to the text.
    lines[0] = { text: ` ${lines[0].text.slice(1)}`, line: 0 };
  }
  // Blocks: the lines before the first `###`, then each `###` line and the lines after it.
  const blocks: { separator?: Line; lines: Line[] }[] = [{ lines: [] }];
  for (const l of lines) {
    if (l.text.startsWith("###")) blocks.push({ separator: l, lines: [] });
    else blocks[blocks.length - 1].lines.push(l);
  }
  const state = { requestSeen: false, names: new Map<string, Token>() };
  for (const b of blocks) parseBlock(b.separator, b.lines, out, state);
}

function diag(out: RpcFile, severity: Severity, message: string, r: Range, code?: string): void {
  out.diagnostics.push(code ? { severity, message, range: r, code } : { severity, message, range: r });
}

function parseBlock(
  separator: Line | undefined,
  lines: Line[],
  out: RpcFile,
  state: { requestSeen: boolean; names: Map<string, Token> },
): void {
  const req: RpcRequest = {
    index: out.requests.length,
    range: range(0, 0, 0, 0),
    comments: [],
    options: [],
    headers: [],
    body: [],
    assertions: [],
    captures: [],
  };
  if (separator) {
    req.separator = range(separator.line, 0, separator.line, separator.text.length);
    const rest = separator.text.slice(3);
    const lead = rest.length - rest.trimStart().length;
    const name = rest.trim();
    if (name !== "") req.name = token(separator, 3 + lead, 3 + lead + name.length);
  }

  let i = 0;
  // Where the request starts when there is no separator: after the file's variables.
  let firstLine = 0;
  // Before the request line: blank lines, comments, options and (before the first request) variables.
  for (; i < lines.length; i++) {
    const l = lines[i];
    if (isBlank(l.text)) continue;
    if (isComment(l.text)) {
      const m = optionLine.exec(l.text);
      if (m) parseOption(l, m, req, out);
      else req.comments.push(commentToken(l));
      continue;
    }
    if (l.text.trimStart().startsWith("@")) {
      parseVariable(l, out, state.requestSeen);
      // Comments above a variable belong to the file, not to the request.
      if (!separator) req.comments = [];
      firstLine = i + 1;
      continue;
    }
    break;
  }

  if (i < lines.length) {
    parseRequestLine(lines[i], req, out);
    state.requestSeen = true;
    i++;
    // Headers until the first empty line.
    for (; i < lines.length; i++) {
      const l = lines[i];
      if (isBlank(l.text)) break;
      if (isComment(l.text)) {
        req.comments.push(commentToken(l));
        if (misplacedCheck(l, out)) continue;
        if (optionLine.test(l.text)) {
          diag(
            out,
            "warning",
            "request options go before the request line; here this line is only a comment",
            range(l.line, 0, l.line, l.text.length),
            "misplaced-option",
          );
        }
        continue;
      }
      parseHeader(l, req, out);
    }
    parseBody(lines.slice(i + 1), req, out);
  }

  const content = lines.slice(separator ? 0 : firstLine).filter((l) => !isBlank(l.text));
  const first = separator ?? content[0];
  const last = content.length > 0 ? content[content.length - 1] : separator;
  if (!first || !last) return;
  req.range = range(first.line, 0, last.line, last.text.length);

  if (!req.url) {
    const meaningful =
      req.options.length > 0 ||
      req.name !== undefined ||
      req.assertions.length > 0 ||
      req.captures.length > 0 ||
      req.snapshot !== undefined;
    if (meaningful) {
      diag(
        out,
        "warning",
        `${req.name ? `request "${req.name.text}"` : "this request"} has no request line; add its URL (such as http://localhost:8080/pkg.Service/Method) after the options`,
        req.separator ?? req.range,
        "missing-url",
      );
    }
    return;
  }
  if (req.name) {
    const seen = state.names.get(req.name.text);
    if (seen) {
      diag(
        out,
        "warning",
        `another request is also named "${req.name.text}" (line ${seen.range.start.line + 1}); \`protocall run --name\` runs the first`,
        req.name.range,
        "duplicate-name",
      );
    } else state.names.set(req.name.text, req.name);
  }
  out.requests.push(req);
}

/**
 * An `@assert` or `@capture` line after the request line would be a test that never runs: an error,
 * not the warning other misplaced options get. True when the line is one.
 */
function misplacedCheck(l: Line, out: RpcFile): boolean {
  const m = optionLine.exec(l.text);
  if (!m || (m[2] !== "assert" && m[2] !== "capture" && m[2] !== "snapshot")) return false;
  diag(
    out,
    "error",
    `@${m[2]} goes before the request line, with the request's other options; here it would be ignored`,
    range(l.line, commentToken(l).range.start.character, l.line, l.text.trimEnd().length),
    "misplaced-assertion",
  );
  return true;
}

/**
 * `# @snapshot` turns on the snapshot check; `# @snapshot ignore <paths>` scrubs values that change
 * (times, ids); `# @snapshot headers <names>` stores those headers and trailers too. Several lines add up.
 */
function parseSnapshot(value: Token | undefined, lineRange: Range, req: RpcRequest, out: RpcFile): void {
  const snapshot = req.snapshot ?? { range: lineRange, ignore: [], headers: [] };
  req.snapshot = snapshot;
  if (!value) return;
  const words = value.text.split(/[\s,]+/).filter((w) => w !== "");
  const [kind, ...rest] = words;
  if ((kind !== "ignore" && kind !== "headers") || rest.length === 0) {
    diag(
      out,
      "error",
      `@snapshot takes no value, \`ignore <paths>\` or \`headers <names>\`, not "${value.text}"; such as # @snapshot ignore messages[*].id error.message`,
      value.range,
      "invalid-value",
    );
    return;
  }
  if (kind === "headers") {
    snapshot.headers.push(...rest.map((h) => h.toLowerCase()));
    return;
  }
  for (const path of rest) {
    const problem = snapshotPathProblem(path);
    if (problem) {
      diag(out, "error", `@snapshot ignore: ${problem}`, value.range, "invalid-value");
      continue;
    }
    snapshot.ignore.push(path);
  }
}

function commentToken(l: Line): Token {
  const start = l.text.length - l.text.trimStart().length;
  return token(l, start, l.text.trimEnd().length);
}

function parseOption(l: Line, m: RegExpExecArray, req: RpcRequest, out: RpcFile): void {
  const nameStart = m[1].length + 1;
  const nameText = m[2];
  const name = token(l, nameStart, nameStart + nameText.length);
  let value: Token | undefined;
  if (m[4] !== undefined && m[4] !== "") {
    const valueStart = nameStart + nameText.length + (m[3]?.length ?? 0);
    value = token(l, valueStart, valueStart + m[4].length);
  }
  const lineRange = range(l.line, commentToken(l).range.start.character, l.line, l.text.trimEnd().length);
  const option: RpcOption = value ? { name, value, range: lineRange } : { name, range: lineRange };

  if (nameText === "assert") {
    const { assertion, diagnostics } = parseAssertion(value, lineRange);
    out.diagnostics.push(...diagnostics);
    if (assertion) req.assertions.push(assertion);
    return;
  }
  if (nameText === "capture") {
    const { capture, diagnostics } = parseCapture(value, lineRange);
    out.diagnostics.push(...diagnostics);
    if (!capture) return;
    const previous = req.captures.find((c) => c.name.text === capture.name.text);
    if (previous) {
      diag(
        out,
        "warning",
        `${capture.name.text} is captured twice in this request (first on line ${previous.range.start.line + 1}); the last capture wins`,
        capture.name.range,
        "duplicate-capture",
      );
    }
    req.captures.push(capture);
    return;
  }
  if (nameText === "snapshot") {
    parseSnapshot(value, lineRange, req, out);
    return;
  }
  if (nameText === "load") {
    // `# @load rate=100 duration=10s`: how `protocall load` and the editor's Load Test run it; its words
    // are checked by the load options (core/load/load-options.ts, reported by core/analysis).
    req.load = [...(req.load ?? []), { text: value?.text ?? "", range: lineRange, valueRange: value?.range }];
    return;
  }
  if (nameText === "name") {
    // `# @name Greet` names the request, as .http files do.
    if (!value) {
      diag(out, "error", "@name needs a value: write `# @name <request name>`", name.range, "missing-value");
    } else if (!req.name) {
      req.name = value;
    }
    return;
  }
  const flag = optionFlag(nameText);
  if (!flag) {
    const hint = suggest(nameText);
    diag(
      out,
      "error",
      `unknown request option @${nameText}${hint ? ` (did you mean @${hint}?)` : ""}; options are the long flags of \`protocall curl\` without the dashes, such as @protocol grpc or @timeout 5s`,
      name.range,
      "unknown-option",
    );
    return;
  }
  if (flag.kind !== "strings" && req.options.some((o) => o.name.text === nameText)) {
    diag(
      out,
      "warning",
      `@${nameText} is given more than once; the last one wins`,
      lineRange,
      "duplicate-option",
    );
  }
  const problem = checkOptionValue(flag, value?.text);
  if (problem) {
    diag(out, "error", problem, value?.range ?? name.range, value ? "invalid-value" : "missing-value");
  }
  req.options.push(option);
}

function parseVariable(l: Line, out: RpcFile, requestSeen: boolean): void {
  const m = variableLine.exec(l.text) as RegExpExecArray;
  const nameStart = m[1].length + 1;
  const nameText = m[2];
  const whole = range(l.line, m[1].length, l.line, l.text.trimEnd().length);
  if (m[3] !== "=") {
    diag(
      out,
      "error",
      `expected a file variable \`@name = value\` or a request line (a URL), found ${JSON.stringify(l.text.trim())}`,
      whole,
      "syntax",
    );
    return;
  }
  const name = token(l, nameStart, nameStart + nameText.length);
  if (!variableName.test(nameText)) {
    diag(
      out,
      "error",
      `invalid variable name ${JSON.stringify(nameText)}: use letters, digits, _ . and -, starting with a letter or _`,
      nameText === "" ? whole : name.range,
      "invalid-variable-name",
    );
    return;
  }
  if (requestSeen) {
    diag(
      out,
      "error",
      `file variables are defined at the top of the file, before the first request; move @${nameText} there`,
      whole,
      "misplaced-variable",
    );
    return;
  }
  const valueEnd = l.text.trimEnd().length;
  const valueStart = valueEnd - m[4].length;
  const variable: RpcVariable = { name, value: token(l, valueStart, valueEnd), range: whole };
  const previous = out.variables.find((v) => v.name.text === nameText);
  if (previous) {
    diag(
      out,
      "warning",
      `@${nameText} is defined again (first on line ${previous.range.start.line + 1}); the last definition wins`,
      name.range,
      "duplicate-variable",
    );
  }
  out.variables.push(variable);
}

function parseRequestLine(l: Line, req: RpcRequest, out: RpcFile): void {
  const start = l.text.length - l.text.trimStart().length;
  const end = l.text.trimEnd().length;
  req.requestLine = range(l.line, start, l.line, end);
  let urlStart = start;
  const word = /^(\S+)(\s+)/.exec(l.text.slice(start, end));
  if (word) {
    const verb = verbs[word[1].toUpperCase()];
    if (verb) {
      const t = token(l, start, start + word[1].length);
      req.verb = { ...t, value: verb };
      urlStart = start + word[0].length;
    } else if (/^[A-Z][A-Z-]*$/.test(word[1])) {
      diag(
        out,
        "error",
        `unknown verb ${word[1]}: the request line is an optional GRPC, GRPC-WEB or CONNECT, then the URL`,
        range(l.line, start, l.line, start + word[1].length),
        "unknown-verb",
      );
      urlStart = start + word[0].length;
    }
  }
  const url = token(l, urlStart, end);
  req.url = url;
  if (/\s/.test(url.text)) {
    diag(
      out,
      "error",
      `the request line holds one URL, without spaces (found ${JSON.stringify(url.text)}); percent-encode spaces or remove the extra words`,
      url.range,
      "invalid-url",
    );
  } else if (!/^(https?:\/\/|\{\{)/i.test(url.text)) {
    diag(
      out,
      "error",
      `expected a URL starting with http:// or https:// (or a {{variable}}), found ${JSON.stringify(url.text)}`,
      url.range,
      "invalid-url",
    );
  }
}

function parseHeader(l: Line, req: RpcRequest, out: RpcFile): void {
  const start = l.text.length - l.text.trimStart().length;
  const end = l.text.trimEnd().length;
  const whole = range(l.line, start, l.line, end);
  const colon = l.text.indexOf(":");
  if (/^[{["]/.test(l.text.slice(start))) {
    diag(
      out,
      "error",
      "this looks like the body, but the body starts after an empty line: add an empty line after the headers (or after the request line)",
      whole,
      "missing-empty-line",
    );
    return;
  }
  if (colon < 0) {
    diag(
      out,
      "error",
      // The line is not quoted: a header without its colon may hold a secret (Authorization Bearer …).
      'expected a header `name: value` (this line has no ":"), or an empty line before the body',
      whole,
      "invalid-header",
    );
    return;
  }
  const nameText = l.text.slice(start, colon).trimEnd();
  const name = token(l, start, start + nameText.length);
  const afterColon = l.text.slice(colon + 1);
  const valueStart = colon + 1 + (afterColon.length - afterColon.trimStart().length);
  const value = token(l, Math.min(valueStart, Math.max(end, colon + 1)), Math.max(end, colon + 1));
  const header: RpcHeader = { name, value, range: whole };
  if (!headerName.test(nameText) && !/^\{\{[^}]*\}\}$/.test(nameText)) {
    diag(
      out,
      "error",
      `invalid header name ${JSON.stringify(nameText)}: a name is letters, digits and - _ . ! # $ % & ' * + ^ \` | ~, followed by ": value"`,
      nameText === "" ? whole : name.range,
      "invalid-header",
    );
    return;
  }
  if (isProtocolOwnedHeader(nameText)) {
    diag(
      out,
      "error",
      `header "${nameText}" is set by the RPC protocol and may not be given; remove it (use @protocol or a GRPC / GRPC-WEB / CONNECT verb to choose the protocol)`,
      name.range,
      "protocol-header",
    );
    return;
  }
  req.headers.push(header);
}

/**
 * The body: JSON documents found by tracking strings and nesting (each document is then checked with
 * JSON.parse unless it holds `{{...}}` references, which are checked after they are resolved), file
 * includes (`< path`) and comment lines between documents.
 */
/**
 * A body line outside any JSON document that is not the start of one: blank, an include (`< ./path`),
 * a comment, or an assertion written as `??` (told where assertions go). Undefined: a document starts.
 */
function lineBetweenDocuments(l: Line, req: RpcRequest, out: RpcFile): "include" | "other" | undefined {
  const s = l.text;
  if (isBlank(s)) return "other";
  const trimmed = s.trimStart();
  const lead = s.length - trimmed.length;
  if (/^<(\s|$)/.test(trimmed)) {
    const path = trimmed.slice(1).trim();
    const pathStart = s.indexOf(path, lead + 1);
    const whole = range(l.line, lead, l.line, s.trimEnd().length);
    if (path === "") {
      diag(out, "error", "an include line names a file: write `< ./path.json`", whole, "missing-path");
    } else {
      req.body.push({
        kind: "include",
        path: token(l, pathStart, pathStart + path.length),
        range: whole,
      });
    }
    return "include";
  }
  if (isComment(s)) {
    req.comments.push(commentToken(l));
    misplacedCheck(l, out);
    return "other";
  }
  if (trimmed.startsWith("??")) {
    diag(
      out,
      "error",
      "assertions are request options: write `# @assert <path> <operator> <value>` (such as # @assert status == ok) before the request line",
      range(l.line, lead, l.line, s.trimEnd().length),
      "misplaced-assertion",
    );
    return "other";
  }
  return undefined;
}

function parseBody(lines: Line[], req: RpcRequest, out: RpcFile): void {
  let depth = 0;
  let open: { start: Position; parts: string[]; scalar: boolean } | undefined;
  let firstLine = -1;
  let lastLine = -1;
  let lastEnd = 0;

  const close = (endLine: Line, endChar: number) => {
    if (!open) return;
    const textValue = open.parts.join("\n");
    const r: Range = { start: open.start, end: { line: endLine.line, character: endChar } };
    req.body.push({ kind: "json", text: textValue, range: r });
    if (!textValue.includes("{{")) checkJson(textValue, r, out);
    open = undefined;
    depth = 0;
  };

  for (const l of lines) {
    const s = l.text;
    if (!open) {
      const kind = lineBetweenDocuments(l, req, out);
      if (kind === "include") {
        if (firstLine < 0) firstLine = l.line;
        lastLine = l.line;
        lastEnd = s.trimEnd().length;
      }
      if (kind) continue;
    }
    if (firstLine < 0) firstLine = l.line;
    let inString = false;
    let escaped = false;
    let c = 0;
    if (open) open.parts.push("");
    const append = (from: number, to: number) => {
      if (open) open.parts[open.parts.length - 1] += s.slice(from, to);
    };
    let segment = 0; // where the not-yet-appended text of the open document starts on this line
    while (c < s.length) {
      const ch = s[c];
      if (!open) {
        if (ch === " " || ch === "\t" || ch === "\f" || ch === "\v" || ch === "\ufeff") {
          c++;
          continue;
        }
        open = { start: { line: l.line, character: c }, parts: [""], scalar: false };
        segment = c;
        if (ch === "{" || ch === "[") {
          depth = 1;
        } else if (ch === '"') {
          depth = 0;
          inString = true;
        } else {
          open.scalar = true;
        }
        c++;
        if (open.scalar) {
          // A scalar runs to the next space or the start of another document.
          while (c < s.length && !/[\s{["]/.test(s[c])) c++;
          append(segment, c);
          close(l, c);
          lastLine = l.line;
          lastEnd = c;
        }
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (ch === "\\") escaped = true;
        else if (ch === '"') {
          inString = false;
          if (depth === 0) {
            append(segment, c + 1);
            close(l, c + 1);
            lastLine = l.line;
            lastEnd = c + 1;
          }
        }
        c++;
        continue;
      }
      if (ch === '"') inString = true;
      else if (ch === "{" || ch === "[") depth++;
      else if (ch === "}" || ch === "]") {
        depth--;
        if (depth <= 0) {
          append(segment, c + 1);
          close(l, c + 1);
          lastLine = l.line;
          lastEnd = c + 1;
        }
      }
      c++;
    }
    if (open) {
      // The document goes on to the next line. A string cannot span lines in JSON: it ends here, and
      // the JSON check reports it.
      append(segment, s.length);
      if (depth === 0) {
        // An unterminated top-level string.
        close(l, s.length);
        lastLine = l.line;
        lastEnd = s.length;
      } else {
        lastLine = l.line;
        lastEnd = s.trimEnd().length;
      }
    }
  }
  if (open) {
    const o = open as { start: Position; parts: string[] };
    const r: Range = { start: o.start, end: { line: lastLine, character: lastEnd } };
    req.body.push({ kind: "json", text: o.parts.join("\n").trimEnd(), range: r });
    diag(
      out,
      "error",
      `this JSON document is not closed: ${depth} bracket${depth === 1 ? "" : "s"} still open at the end of the request; add the missing } or ]`,
      { start: o.start, end: { line: o.start.line, character: o.start.character + 1 } },
      "unclosed-json",
    );
  }
  if (firstLine >= 0 && lastLine >= 0) req.bodyRange = range(firstLine, 0, lastLine, lastEnd);
}

function checkJson(text: string, r: Range, out: RpcFile): void {
  // The validator finds the first problem without throwing; a failing JSON.parse costs an exception
  // (with its stack) per keystroke in the editor. Large documents go through JSON.parse first.
  if (text.length > 65536) {
    try {
      JSON.parse(text);
      return;
    } catch {
      // Located below.
    }
  }
  const problem = findJsonProblem(text);
  if (!problem) return;
  // The offending character; at the end of the document (or of a line), the character before it.
  let from = Math.min(Math.max(problem.offset, 0), text.length);
  if ((from === text.length || text[from] === "\n") && from > 0 && text[from - 1] !== "\n") from--;
  const to = from < text.length && text[from] !== "\n" ? from + 1 : from;
  diag(
    out,
    "error",
    `invalid JSON: ${problem.reason}`,
    { start: positionIn(text, r.start, from), end: positionIn(text, r.start, to) },
    "invalid-json",
  );
}

/** The position of `offset` in `text`, a document whose first character is at `start`; lines joined by \n. */
export function positionIn(text: string, start: Position, offset: number): Position {
  let line = start.line;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = text.indexOf("\n"); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, character: line === start.line ? start.character + end : end - lineStart };
}

/**
 * The offset in `text` (a document whose first character is at `start`, lines joined by \n) of a
 * position in the file; clamped to the text. The inverse of positionIn, for mapping an editor
 * position to a place in a JSON body document.
 */
export function offsetIn(text: string, start: Position, position: Position): number {
  if (position.line < start.line) return 0;
  let offset = 0;
  for (let line = start.line; line < position.line; line++) {
    const nl = text.indexOf("\n", offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  const lineEnd = text.indexOf("\n", offset);
  const column = position.line === start.line ? position.character - start.character : position.character;
  return Math.min(offset + Math.max(column, 0), lineEnd < 0 ? text.length : lineEnd);
}

/** The closest flag name to a misspelled option, if any is close. */
function suggest(name: string): string | undefined {
  const names = [...curlFlagsByName.keys(), ...extraOptionNames].filter((flag) => flag !== "help");
  return closest(name.toLowerCase(), names)[0];
}
