// The `.rpc` stub format of `protocall mock`: a request file whose requests say which calls they
// answer, each followed by the answer after a `>>>` line.
//
//   @greeting = Hello                          file variables, as in request files
//
//   ### greet world                            a stub (the name is optional)
//   # @priority 10                             higher first when several stubs match (default 0)
//   # @match request.name matches /^w/         a predicate in the assertion language, on the request:
//   # @match headers["x-tenant"] == "a"          request (the message; the last one of a client
//   /demo.v1.GreetService/Greet                  stream), requests (every message), headers
//   x-tenant: a                                request headers that must be present with this value
//
//   {"name": "world"}                          a request body that must match: every field given is
//                                              equal (several documents: the first messages of a
//                                              client stream, in order)
//   >>> ok                                     the answer: a status (default ok) and, for an error, its
//   # @delay 100ms                               message: `>>> unavailable "try again"`; options:
//   # @trailer x-cost: 3                           @delay (before the answer), @trailer, @detail TYPE
//   x-served-by: mock                              JSON (typed error details), @when (see per-message);
//                                              then response headers; an empty line; then the response
//   {"greeting": "{{greeting}}, {{request.name}}"}   messages (a stream when several), each optionally
//   # @delay 50ms                                  after `# @delay D` (the wait before that message)
//   {"greeting": "again"}
//   >>> unavailable "later"                    several answers: the Nth call of the stub gets the Nth,
//                                              the last one repeats (a reset starts over)
//
// `# @per-message` (bidirectional streams): each incoming message gets an answer of its
// own: the first answer whose `# @when` predicates (or `# @when {subset}`) hold for that message, or,
// without @when, the answers in order (a scripted exchange).
//
// The request part is parsed by the request-file parser itself (rpcfile/parse.ts), so it reads and
// is checked as a request; the request line may be a URL (its host is ignored) or the method path
// alone. The answer parts reuse that parser's header and body rules. This file only finds the
// pieces and reports problems at file:line:col; the schema checks are in stub-load.ts.
import type { RpcAssertion } from "./assertion-syntax";
import { parseAssertion, statusCodeNames } from "./assertion-syntax";
import { parseRpcFile, range, splitLines } from "./parse";
import type { Diagnostic, RpcBodyPart, RpcFile, RpcHeader, RpcRequest, RpcVariable, Token } from "./types";

/** `# @match` or `# @when`: a predicate on the request, with its text as written. */
export interface StubPredicate {
  /** As written: `request.name == "world"`. */
  text: string;
  /** Zero-based line. */
  line: number;
  assertion: RpcAssertion;
}

/** A JSON document of a stub (a request to match or a message to answer) as written. */
export interface StubDocument {
  text: string;
  /** Zero-based line and character of its start. */
  line: number;
  character: number;
  /** For answers: the wait before this message, in milliseconds. */
  delayMs: number;
  /** A `< path` include (the file is read when the stubs are loaded). */
  include?: string;
}

export interface StubAnswer {
  /** Zero-based line of its `>>>`. */
  line: number;
  /** The status code name: `ok`, `not_found`, … */
  status: string;
  /** An error's message, as written (may hold `{{...}}`). */
  message: string;
  /** Wait before the answer (its headers), in milliseconds. */
  delayMs: number;
  headers: RpcHeader[];
  trailers: RpcHeader[];
  /** `# @detail TYPE JSON`: an error detail. */
  details: { type: string; typeCharacter: number; json: StubDocument }[];
  /** `# @when`: predicates on an incoming message (per-message stubs). */
  when: StubPredicate[];
  /** `# @when {json}`: a subset the incoming message must match (per-message stubs). */
  whenBody?: StubDocument;
  messages: StubDocument[];
}

export interface ParsedStub {
  /** The stub's name (after `###` or `# @name`), or undefined. */
  name?: string;
  /** Zero-based line of the request line. */
  line: number;
  /** `package.Service/Method`. */
  method: string;
  priority: number;
  perMessage: boolean;
  headers: RpcHeader[];
  body: StubDocument[];
  predicates: StubPredicate[];
  answers: StubAnswer[];
}

export interface ParsedStubFile {
  variables: RpcVariable[];
  stubs: ParsedStub[];
  diagnostics: Diagnostic[];
}

/** Whether a `.rpc` text is a stub file of `protocall mock` (it has a `>>>` answer line). */
export function isStubText(text: string): boolean {
  return /^[ \t]*>>>/m.test(text);
}

/** Options of a stub's request part that request files do not have. */
const stubOptions = new Set(["match", "priority", "per-message"]);
const optionLine = /^(\s*(?:#|\/\/)\s*)@([^\s=]*)(?:\s+(.*?))?\s*$/;
const methodPath = /^(?:https?:\/\/[^/]+)?\/?((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*\/[A-Za-z_]\w*)$/;

function err(
  diagnostics: Diagnostic[],
  message: string,
  line: number,
  from: number,
  to: number,
  code: string,
) {
  diagnostics.push({ severity: "error", message, range: range(line, from, line, Math.max(to, from)), code });
}

/**
 * A predicate in the assertion language on the request. `request` and `requests` stand for the
 * roots `message` and `messages` (same lengths, so every range stays true).
 */
export function parsePredicate(
  text: string,
  line: number,
  start: number,
  diagnostics: Diagnostic[],
): StubPredicate | undefined {
  const rewritten = text
    .replace(/^requests(?=[.[\s]|$)/, "messages")
    .replace(/^request(?=[.[\s]|$)/, "message");
  const lineRange = range(line, start, line, start + text.length);
  const { assertion, diagnostics: found } = parseAssertion({ text: rewritten, range: lineRange }, lineRange);
  for (const d of found) {
    diagnostics.push({
      ...d,
      message: d.message
        .replace(/# @assert/g, "# @match")
        .replace(/@assert/g, "@match")
        .replace(/\bmessages\[0\]/g, "request"),
    });
  }
  if (!assertion) return undefined;
  const root = assertion.path.root;
  if (root !== "message" && root !== "messages" && root !== "headers") {
    err(
      diagnostics,
      `@match tests the request: its path starts with request, requests or headers (${root} is part of a response)`,
      line,
      assertion.path.rootRange.start.character,
      assertion.path.rootRange.end.character,
      "invalid-match",
    );
    return undefined;
  }
  return { text, line, assertion };
}

/** Lines `start` to `end` (exclusive) of the file. */
interface Block {
  start: number;
  end: number;
}

/** A stub option (`# @match`, `# @priority`, `# @per-message`) as written in a request part. */
interface StubOption {
  line: number;
  name: string;
  value: string;
  valueStart: number;
}

/** Parses a stub file. Never throws: every problem is a diagnostic. */
export function parseStubFile(text: string): ParsedStubFile {
  const lines = splitLines(text);
  const diagnostics: Diagnostic[] = [];
  const blocks = blocksOf(lines);
  const { masked, answersOf, options } = maskAnswers(lines, blocks);
  const file = parseRpcFile(masked.join("\n"));
  diagnostics.push(...requestDiagnostics(file));
  const stubs: ParsedStub[] = [];
  for (const req of file.requests) {
    const url = req.url as Token;
    const line = url.range.start.line;
    const blockIndex = blocks.findIndex((b) => b.start <= line && line < b.end);
    const stub = parseStub(req, lines, blocks[blockIndex], answersOf[blockIndex], options, diagnostics);
    if (stub) stubs.push(stub);
  }
  return { variables: file.variables, stubs, diagnostics };
}

/** Blocks as the request parser makes them: before the first `###`, then each `###` and what follows. */
function blocksOf(lines: string[]): Block[] {
  const blocks: Block[] = [{ start: 0, end: lines.length }];
  lines.forEach((l, i) => {
    if (l.startsWith("###")) {
      blocks[blocks.length - 1].end = i;
      blocks.push({ start: i, end: lines.length });
    }
  });
  return blocks;
}

/**
 * What the request parser sees: answers blanked, stub options turned into plain comments. Also the
 * answer part of each block (from its first `>>>`) and the stub options taken out.
 */
function maskAnswers(
  lines: string[],
  blocks: Block[],
): { masked: string[]; answersOf: Block[]; options: StubOption[] } {
  const masked = [...lines];
  const answersOf: Block[] = [];
  const options: StubOption[] = [];
  for (const b of blocks) {
    let answerStart = b.end;
    for (let i = b.start; i < b.end; i++) {
      if (lines[i].trimStart().startsWith(">>>")) {
        answerStart = i;
        break;
      }
    }
    answersOf.push({ start: answerStart, end: b.end });
    for (let i = answerStart; i < b.end; i++) masked[i] = "";
    for (let i = b.start; i < answerStart; i++) {
      const m = optionLine.exec(lines[i]);
      if (m && stubOptions.has(m[2])) {
        const value = m[3] ?? "";
        options.push({
          line: i,
          name: m[2],
          value,
          valueStart: value ? lines[i].indexOf(value, m[1].length + 1 + m[2].length) : 0,
        });
        masked[i] = "#";
      }
    }
  }
  return { masked, answersOf, options };
}

/** The request parser's diagnostics that hold for stubs (a method path alone is a good request line). */
function requestDiagnostics(file: RpcFile): Diagnostic[] {
  const isMethodLine = (line: number) => {
    const req = file.requests.find((r) => r.url?.range.start.line === line);
    return req?.url !== undefined && methodPath.test(req.url.text);
  };
  return file.diagnostics.filter((d) => !(d.code === "invalid-url" && isMethodLine(d.range.start.line)));
}

/** One stub: its request part (as the request parser read it), its options and its answers. */
function parseStub(
  req: RpcRequest,
  lines: string[],
  block: Block,
  answers: Block,
  options: StubOption[],
  diagnostics: Diagnostic[],
): ParsedStub | undefined {
  const url = req.url as Token;
  const line = url.range.start.line;
  const m = methodPath.exec(url.text);
  if (!m) {
    err(
      diagnostics,
      `a stub's request line names the method it answers: /package.Service/Method (or a URL ending in it), found ${JSON.stringify(url.text)}`,
      line,
      url.range.start.character,
      url.range.end.character,
      "invalid-method",
    );
    return undefined;
  }
  for (const a of req.assertions) {
    err(
      diagnostics,
      'a stub tests its request with `# @match <path> <operator> <value>` (such as # @match request.name == "world"); @assert checks the responses of requests',
      a.range.start.line,
      a.range.start.character,
      a.range.end.character,
      "assert-in-stub",
    );
  }
  const stub: ParsedStub = {
    name: req.name?.text,
    line,
    method: m[1],
    priority: 0,
    perMessage: false,
    headers: req.headers,
    body: documents(req.body, 0),
    predicates: [],
    answers: [],
  };
  for (const o of options) {
    if (o.line < block.start || o.line >= block.end) continue;
    if (o.line > line) {
      err(
        diagnostics,
        `@${o.name} goes before the request line, with the stub's other options; here it would be ignored`,
        o.line,
        0,
        lines[o.line].trimEnd().length,
        "misplaced-option",
      );
      continue;
    }
    applyOption(stub, o, lines[o.line], diagnostics);
  }
  if (answers.start >= answers.end) {
    err(
      diagnostics,
      `stub ${req.name ? `"${req.name.text}" ` : ""}has no answer: add a line \`>>> ok\` (or \`>>> not_found "message"\`), an empty line and the response message after the request`,
      line,
      url.range.start.character,
      url.range.end.character,
      "missing-answer",
    );
    return undefined;
  }
  stub.answers = parseAnswers(lines, answers.start, answers.end, diagnostics);
  if (stub.answers.some((a) => a.when.length > 0 || a.whenBody) && !stub.perMessage) {
    const a = stub.answers.find((x) => x.when.length > 0 || x.whenBody) as StubAnswer;
    err(
      diagnostics,
      "@when chooses an answer per incoming message: add `# @per-message` to the stub's options",
      a.line,
      0,
      lines[a.line].length,
      "when-without-per-message",
    );
  }
  return stub;
}

/** `# @priority`, `# @per-message` or `# @match` of a stub (`lineText` is the option's line). */
function applyOption(stub: ParsedStub, o: StubOption, lineText: string, diagnostics: Diagnostic[]): void {
  if (o.name === "priority") {
    if (!/^-?\d+$/.test(o.value)) {
      err(
        diagnostics,
        `@priority takes a whole number (higher is tried first), found ${JSON.stringify(o.value)}`,
        o.line,
        o.valueStart,
        lineText.trimEnd().length,
        "invalid-value",
      );
    } else stub.priority = Number(o.value);
  } else if (o.name === "per-message") {
    if (o.value !== "" && o.value !== "true") {
      err(
        diagnostics,
        "@per-message takes no value",
        o.line,
        o.valueStart,
        lineText.trimEnd().length,
        "invalid-value",
      );
    } else stub.perMessage = true;
  } else if (o.value === "") {
    err(
      diagnostics,
      '@match needs a predicate: write # @match request.name == "world"',
      o.line,
      0,
      lineText.trimEnd().length,
      "missing-value",
    );
  } else {
    const p = parsePredicate(o.value, o.line, o.valueStart, diagnostics);
    if (p) stub.predicates.push(p);
  }
}

function documents(parts: RpcBodyPart[], _delay: number): StubDocument[] {
  return parts.map((p) =>
    p.kind === "json"
      ? { text: p.text, line: p.range.start.line, character: p.range.start.character, delayMs: 0 }
      : {
          text: "",
          line: p.range.start.line,
          character: p.range.start.character,
          delayMs: 0,
          include: p.path.text,
        },
  );
}

const codeAliases = new Map<string, string>([["cancelled", "canceled"]]);

/** The status code name of a `>>>` line's first word (a name in any case, or a number 0-16). */
export function statusName(word: string): string | undefined {
  if (/^\d+$/.test(word)) return statusCodeNames[Number(word)];
  const name = word.toLowerCase().replace(/^code_/, "");
  const canonical = codeAliases.get(name) ?? name;
  return statusCodeNames.includes(canonical) ? canonical : undefined;
}

function parseAnswers(lines: string[], start: number, end: number, diagnostics: Diagnostic[]): StubAnswer[] {
  const starts: number[] = [];
  for (let i = start; i < end; i++) if (lines[i].trimStart().startsWith(">>>")) starts.push(i);
  return starts.map((s, k) =>
    parseAnswer(lines, s, k + 1 < starts.length ? starts[k + 1] : end, diagnostics),
  );
}

function parseAnswer(lines: string[], start: number, end: number, diagnostics: Diagnostic[]): StubAnswer {
  const head = lines[start];
  const lead = head.indexOf(">>>") + 3;
  const rest = head.slice(lead).trim();
  const word = /^\S*/.exec(rest)?.[0] ?? "";
  const answer: StubAnswer = {
    line: start,
    status: "ok",
    message: "",
    delayMs: 0,
    headers: [],
    trailers: [],
    details: [],
    when: [],
    messages: [],
  };
  if (word !== "") {
    const status = statusName(word);
    const at = head.indexOf(word, lead);
    if (!status) {
      err(
        diagnostics,
        `unknown status ${JSON.stringify(word)}: write \`>>> ok\` or an error code such as \`>>> not_found "no such user"\` (${statusCodeNames.join(", ")})`,
        start,
        at,
        at + word.length,
        "unknown-status",
      );
    } else answer.status = status;
    let message = rest.slice(word.length).trim();
    if (message.startsWith('"')) {
      try {
        message = JSON.parse(message) as string;
      } catch {
        const m = head.indexOf(message, at + word.length);
        err(
          diagnostics,
          'the error message is a JSON string (with \\" for quotes) or plain text without a leading quote',
          start,
          m,
          m + message.length,
          "invalid-message",
        );
      }
    }
    answer.message = message;
    if (status === "ok" && message !== "") {
      const m = head.indexOf(message, at + word.length);
      err(
        diagnostics,
        "an ok answer has no error message; its messages go after an empty line",
        start,
        m,
        m + message.length,
        "invalid-message",
      );
    }
  }
  // Options and headers until the first empty line.
  let i = start + 1;
  for (; i < end; i++) {
    const l = lines[i];
    const trimmed = l.trim();
    if (trimmed === "") break;
    const at = l.length - l.trimStart().length;
    const opt = optionLine.exec(l);
    if (opt) {
      answerOption(answer, opt[2], opt[3] ?? "", i, l, diagnostics);
      continue;
    }
    if (trimmed.startsWith("#") || trimmed.startsWith("//")) continue;
    if (/^[{["]/.test(trimmed)) {
      err(
        diagnostics,
        "the response messages start after an empty line: add one after the answer's options and headers",
        i,
        at,
        l.trimEnd().length,
        "missing-empty-line",
      );
      break;
    }
    const header = headerOf(l, i, diagnostics);
    if (header) answer.headers.push(header);
  }
  const bodyStart = i + 1;
  if (bodyStart < end) {
    // The body, with the request parser's JSON scanner: the lines before it blanked, a request line
    // two lines up, so that every range stays true.
    const masked = lines.map((_, n) => (n >= bodyStart && n < end ? lines[n] : ""));
    masked[bodyStart - 2] = "http://answer/a.B/C";
    const parsed = parseRpcFile(masked.slice(0, end).join("\n"));
    for (const d of parsed.diagnostics) {
      if (d.range.start.line >= bodyStart && d.code !== "misplaced-assertion") diagnostics.push(d);
    }
    const req = parsed.requests[0];
    const delays = new Map<number, number>();
    for (const c of req?.comments ?? []) {
      const opt = optionLine.exec(c.text);
      if (!opt) continue;
      const n = c.range.start.line;
      if (opt[2] !== "delay") {
        err(
          diagnostics,
          `between response messages only \`# @delay DURATION\` is an option, found @${opt[2]}`,
          n,
          c.range.start.character,
          c.range.end.character,
          "unknown-option",
        );
        continue;
      }
      const ms = delay(opt[3] ?? "", n, lines[n], diagnostics);
      if (ms !== undefined) delays.set(n, ms);
    }
    let pending = 0;
    let lastLine = -1;
    for (const doc of documents(req?.body ?? [], 0)) {
      for (const [n, ms] of delays) if (n > lastLine && n < doc.line) pending += ms;
      doc.delayMs = pending;
      pending = 0;
      lastLine = doc.line;
      answer.messages.push(doc);
    }
  }
  return answer;
}

function delay(value: string, line: number, text: string, diagnostics: Diagnostic[]): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(value.trim());
  if (!m) {
    const at = value ? text.indexOf(value) : 0;
    err(
      diagnostics,
      `@delay takes a duration such as 100ms, 2s or 1m, found ${JSON.stringify(value)}`,
      line,
      at,
      at + value.length || text.length,
      "invalid-value",
    );
    return undefined;
  }
  return Math.round(Number(m[1]) * (m[2] === "ms" ? 1 : m[2] === "s" ? 1000 : 60_000));
}

function headerOf(l: string, line: number, diagnostics: Diagnostic[]): RpcHeader | undefined {
  const start = l.length - l.trimStart().length;
  const end = l.trimEnd().length;
  const colon = l.indexOf(":", start + 1);
  if (colon < 0 || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(l.slice(start, colon).trim())) {
    err(
      diagnostics,
      `expected a response header \`name: value\`, an option \`# @delay 100ms\`, or an empty line before the messages; found ${JSON.stringify(l.trim())}`,
      line,
      start,
      end,
      "invalid-header",
    );
    return undefined;
  }
  const nameText = l.slice(start, colon).trim();
  const valueText = l.slice(colon + 1).trim();
  const valueStart = valueText ? l.indexOf(valueText, colon + 1) : colon + 1;
  return {
    name: { text: nameText, range: range(line, start, line, start + nameText.length) },
    value: { text: valueText, range: range(line, valueStart, line, valueStart + valueText.length) },
    range: range(line, start, line, end),
  };
}

function answerOption(
  answer: StubAnswer,
  name: string,
  value: string,
  line: number,
  text: string,
  diagnostics: Diagnostic[],
) {
  const valueStart = value ? text.lastIndexOf(value) : text.trimEnd().length;
  switch (name) {
    case "delay": {
      const ms = delay(value, line, text, diagnostics);
      if (ms !== undefined) answer.delayMs = ms;
      return;
    }
    case "trailer": {
      const h = headerOf(`${" ".repeat(valueStart)}${value}`, line, diagnostics);
      if (h) answer.trailers.push(h);
      return;
    }
    case "detail": {
      const m = /^([A-Za-z_][\w.]*)\s+(.+)$/.exec(value);
      if (!m) {
        err(
          diagnostics,
          '@detail takes a message type and its JSON: # @detail google.rpc.RetryInfo {"retryDelay": "2s"}',
          line,
          valueStart,
          text.trimEnd().length,
          "invalid-value",
        );
        return;
      }
      const jsonAt = text.indexOf(m[2], valueStart + m[1].length);
      answer.details.push({
        type: m[1],
        typeCharacter: valueStart,
        json: { text: m[2], line, character: jsonAt, delayMs: 0 },
      });
      return;
    }
    case "when": {
      if (value.startsWith("{")) {
        answer.whenBody = { text: value, line, character: valueStart, delayMs: 0 };
        return;
      }
      const p = parsePredicate(value, line, valueStart, diagnostics);
      if (p) answer.when.push(p);
      return;
    }
    default: {
      const at = text.indexOf(`@${name}`);
      err(
        diagnostics,
        `unknown answer option @${name}: an answer takes @delay, @trailer, @detail and @when`,
        line,
        at,
        at + name.length + 1,
        "unknown-option",
      );
    }
  }
}
