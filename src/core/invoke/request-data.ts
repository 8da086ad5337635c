// Request data of `protocall curl`: a stream of JSON documents, one per request message, read
// incrementally so a client stream of any length runs in constant memory and requests are sent
// while later ones are still being read (interactive stdin works for bidi streams).
//
// Hand-written on purpose: this is on the benchmarked streaming path. A byte-level state machine only
// finds where each document ends (tracking strings, escapes and nesting, with native indexOf over
// string contents); each complete document is then parsed by JSON.parse. Exact error positions come
// from a slower checker that runs only after JSON.parse has failed.
import { ProtocallError } from "../errors";
import { openSource, sourceLabel } from "./headers";
import type { InputIo } from "./io";
import { findJsonProblem } from "./json-error";
import type { CurlOptions } from "./options";
import { streamFileDocuments } from "./stream-file";
import type { StreamProgress } from "./stream-progress";

export interface RequestDocument {
  /** The parsed JSON value (integers beyond 2^53 are kept exactly, as strings). */
  value: unknown;
  /** 1-based line and column where the document starts. */
  line: number;
  column: number;
  /** 0-based position of the document in the stream. */
  index: number;
}

/** A document found in the input, not parsed yet. */
interface RawDocument {
  text: string;
  line: number;
  column: number;
  index: number;
}

const QUOTE = 34;
const NL = 10;

class Splitter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private inScalar = false;
  /** Pieces of the open document from earlier chunks. */
  private parts: string[] = [];
  /** Whether a document is open (its start may be in an earlier chunk). */
  private open = false;
  private docLine = 0;
  private docColumn = 0;
  /** Absolute offset of the current chunk's first character. */
  private base = 0;
  private line = 1;
  /** Absolute offset of the first character of the current line. */
  private lineStart = 0;
  private index = 0;
  private first = true;

  constructor(
    private readonly label: string,
    firstLine: number,
  ) {
    this.line = firstLine;
  }

  private where(abs: number): string {
    return `${this.label}:${this.line}:${abs - this.lineStart + 1}`;
  }

  /** Scans one chunk of text, appending completed documents to `out`. */
  push(s: string, out: RawDocument[]): void {
    let i = 0;
    const n = s.length;
    if (this.first && n > 0) {
      this.first = false;
      if (s.charCodeAt(0) === 0xfeff) {
        i = 1;
        this.lineStart = 1;
      }
    }
    let start = this.open ? 0 : -1;
    let nextBackslash = -1;
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        const q = s.indexOf('"', i);
        // The next backslash is searched once and reused until passed: searching it for every
        // string would scan to the end of the chunk each time.
        if (nextBackslash < i) {
          nextBackslash = s.indexOf("\\", i);
          if (nextBackslash < 0) nextBackslash = n;
        }
        const b = nextBackslash < n ? nextBackslash : -1;
        if (b >= 0 && (q < 0 || b < q)) {
          if (b + 1 >= n) {
            this.escaped = true;
            i = n;
          } else {
            i = b + 2;
          }
          continue;
        }
        if (q < 0) {
          i = n;
          continue;
        }
        i = q + 1;
        this.inString = false;
        if (this.depth === 0) {
          this.emit(s, start, i, out);
          start = -1;
        }
        continue;
      }
      const c = s.charCodeAt(i);
      if (this.inScalar) {
        // A top-level number or literal runs to the next delimiter.
        if (
          c === 32 ||
          c === NL ||
          c === 13 ||
          c === 9 ||
          c === 123 ||
          c === 91 ||
          c === QUOTE ||
          c === 125 ||
          c === 93
        ) {
          this.inScalar = false;
          this.emit(s, start, i, out);
          start = -1;
          continue; // the delimiter is scanned again at the top level
        }
        if (c < 32) this.binary(c, this.base + i);
        i++;
        continue;
      }
      switch (c) {
        case 32:
        case 9:
        case 13:
          break;
        case NL:
          this.line++;
          this.lineStart = this.base + i + 1;
          break;
        case QUOTE:
          if (this.depth === 0) start = this.begin(i);
          this.inString = true;
          break;
        case 123: // {
        case 91: // [
          if (this.depth === 0) start = this.begin(i);
          this.depth++;
          break;
        case 125: // }
        case 93: // ]
          if (this.depth === 0) {
            throw new ProtocallError(
              `${this.where(this.base + i)}: unexpected '${String.fromCharCode(c)}': no JSON object or array is open here; check the brackets of the previous document`,
            );
          }
          if (--this.depth === 0) {
            this.emit(s, start, i + 1, out);
            start = -1;
          }
          break;
        default:
          if (c < 32) this.binary(c, this.base + i);
          if (this.depth === 0) {
            start = this.begin(i);
            this.inScalar = true;
          }
      }
      i++;
    }
    if (start >= 0) this.parts.push(start === 0 ? s : s.slice(start));
    this.base += n;
  }

  private begin(i: number): number {
    this.open = true;
    this.docLine = this.line;
    this.docColumn = this.base + i - this.lineStart + 1;
    return i;
  }

  private binary(c: number, abs: number): never {
    throw new ProtocallError(
      `${this.where(abs)}: the request data is not JSON text (found the control byte 0x${c.toString(16).padStart(2, "0")}); give JSON documents, one per request message (binary protobuf is not accepted)`,
    );
  }

  private emit(s: string, start: number, end: number, out: RawDocument[]): void {
    let text: string;
    if (this.parts.length > 0) {
      this.parts.push(s.slice(0, end));
      text = this.parts.join("");
      this.parts = [];
    } else {
      text = s.slice(start, end);
    }
    this.open = false;
    out.push({ text, line: this.docLine, column: this.docColumn, index: this.index++ });
  }

  /** Parses one document found by `push`. Parsing is left to the consumer's pace, in order. */
  parse(raw: RawDocument): RequestDocument {
    const { text } = raw;
    try {
      const value = JSON.parse(/\d{16}/.test(text) ? quoteBigIntegers(text) : text);
      return { value, line: raw.line, column: raw.column, index: raw.index };
    } catch {
      const problem = findJsonProblem(text);
      if (!problem) {
        // Valid JSON that the big-integer rewrite could not handle: parse it as it is.
        return { value: JSON.parse(text), line: raw.line, column: raw.column, index: raw.index };
      }
      // Translate the offset in the document into a line and column of the input.
      const before = text.slice(0, problem.offset);
      const nl = before.lastIndexOf("\n");
      const lines = before.split("\n").length - 1;
      const line = raw.line + lines;
      const column = nl < 0 ? raw.column + problem.offset : problem.offset - nl;
      throw new ProtocallError(
        `${this.label}:${line}:${column}: invalid JSON in request message #${raw.index + 1}: ${problem.reason}`,
      );
    }
  }

  /** Checks the end of the input; completes a trailing scalar. */
  end(out: RawDocument[]): void {
    if (this.inScalar) {
      this.inScalar = false;
      this.emit("", -1, 0, out);
      return;
    }
    if (this.open) {
      // Brackets that do not match can make the document look unfinished: name the first error.
      const text = this.parts.join("");
      const problem = findJsonProblem(text);
      if (problem && problem.offset < text.length) {
        this.parse({ text, line: this.docLine, column: this.docColumn, index: this.index });
      }
      const what = this.inString ? "a string is not closed (a missing '\"'?)" : "a missing '}' or ']'?";
      throw new ProtocallError(
        `${this.label}:${this.docLine}:${this.docColumn}: the JSON document starting here is not complete at the end of the input (${what})`,
      );
    }
  }

  /** Where the scan is, for decoding errors. */
  position(): string {
    return `${this.label}:${this.line}`;
  }
}

/** Rewrites integers too large for a double (outside strings) as JSON strings, keeping every digit. */
function quoteBigIntegers(text: string): string {
  return text.replace(/"(?:[^"\\]|\\.)*"|(?<![\w.+-])-?\d{16,}(?![.eE\d])/g, (m) => {
    if (m.charCodeAt(0) === QUOTE) return m;
    return Number.isSafeInteger(Number(m)) ? m : `"${m}"`;
  });
}

/**
 * Parses a stream of JSON documents. `source` is text, or bytes in UTF-8; `label` names the
 * input in error messages (`requests.json`, `stdin`, `--data`), as `label:line:column: ...`;
 * `firstLine` is the line the source starts on (after the headers of a combined file).
 * Read it with `for await` (one `next()` at a time).
 */
export function readRequestDocuments(
  source: AsyncIterable<Uint8Array | string> | string,
  label: string,
  firstLine = 1,
): AsyncGenerator<RequestDocument> {
  return new DocumentStream(source, label, firstLine);
}

/** Also accepts an array or other sync iterable of chunks, as `for await` does. */
function syncToAsync<T>(items: Iterable<T>): AsyncIterator<T> {
  const it = items[Symbol.iterator]();
  return {
    next: () => Promise.resolve(it.next()),
    return: () => Promise.resolve(it.return?.() ?? { done: true, value: undefined }),
  };
}

// A hand-written async iterator rather than an async generator: documents already found in a chunk
// are handed over without the generator machinery, which halves the cost per message.
class DocumentStream implements AsyncGenerator<RequestDocument> {
  private readonly splitter: Splitter;
  private readonly out: RawDocument[] = [];
  private pos = 0;
  /** A scan error, thrown after the documents found before it. */
  private error: unknown;
  private finished = false;
  private readonly text?: string;
  private readonly source?: AsyncIterator<Uint8Array | string>;
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });

  constructor(source: AsyncIterable<Uint8Array | string> | string, label: string, firstLine: number) {
    this.splitter = new Splitter(label, firstLine);
    if (typeof source === "string") this.text = source;
    else if (Symbol.asyncIterator in source) this.source = source[Symbol.asyncIterator]();
    else this.source = syncToAsync(source as Iterable<Uint8Array | string>);
  }

  [Symbol.asyncIterator](): AsyncGenerator<RequestDocument> {
    return this;
  }

  next(): Promise<IteratorResult<RequestDocument>> {
    if (this.pos < this.out.length) {
      try {
        return Promise.resolve({ done: false, value: this.splitter.parse(this.out[this.pos++]) });
      } catch (e) {
        return this.fail(e);
      }
    }
    return this.fill();
  }

  private async fill(): Promise<IteratorResult<RequestDocument>> {
    for (;;) {
      if (this.pos < this.out.length) {
        try {
          return { done: false, value: this.splitter.parse(this.out[this.pos++]) };
        } catch (e) {
          return this.fail(e);
        }
      }
      if (this.error !== undefined) return this.fail(this.error);
      if (this.finished) return { done: true, value: undefined };
      this.out.length = 0;
      this.pos = 0;
      if (this.source === undefined) {
        this.scan(() => {
          this.splitter.push(this.text ?? "", this.out);
          this.splitter.end(this.out);
        });
        this.finished = true;
        continue;
      }
      const r = await this.source.next();
      if (r.done) {
        this.finished = true;
        this.scan(() => {
          this.splitter.push(this.decode(undefined), this.out);
          this.splitter.end(this.out);
        });
      } else {
        const chunk = r.value;
        this.scan(() => this.splitter.push(typeof chunk === "string" ? chunk : this.decode(chunk), this.out));
      }
    }
  }

  private scan(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.error = e;
    }
  }

  private decode(chunk: Uint8Array | undefined): string {
    try {
      return chunk ? this.decoder.decode(chunk, { stream: true }) : this.decoder.decode();
    } catch {
      throw new ProtocallError(
        `${this.splitter.position()}: the request data is not UTF-8 text (binary data?); give JSON documents, one per request message`,
      );
    }
  }

  private async fail(e: unknown): Promise<never> {
    await this.stop();
    throw e;
  }

  private async stop(): Promise<void> {
    const wasFinished = this.finished;
    this.finished = true;
    this.error = undefined;
    this.out.length = 0;
    this.pos = 0;
    if (!wasFinished) await this.source?.return?.();
  }

  async return(): Promise<IteratorResult<RequestDocument>> {
    await this.stop();
    return { done: true, value: undefined };
  }

  async throw(e: unknown): Promise<IteratorResult<RequestDocument>> {
    await this.stop();
    throw e;
  }
}

/**
 * The request documents of `-d`: inline JSON, `@file`, `@-` (stdin), or the body of the combined
 * header/data file (`dataFromHeaderFile`, from readCurlHeaders). Undefined when there is no data
 * (no -d, or -d ""). Data that holds no document (an empty file) yields nothing: client and bidi
 * streams then send no message, as buf does; unary and server-streaming calls should refuse it with
 * `noRequestDataError`.
 */
export async function openRequestData(
  o: CurlOptions,
  io: InputIo,
  dataFromHeaderFile?: AsyncIterable<Uint8Array> & { firstLine?: number },
  onStreamProgress?: (p: StreamProgress) => void,
): Promise<AsyncGenerator<RequestDocument> | undefined> {
  const data = o.data;
  if (o.streamFile !== undefined) {
    if (data !== undefined && data !== "") {
      throw new ProtocallError("--stream-file and -d both give the request data: use one of them");
    }
    return streamFileDocuments(o.streamFile, o.streamChunk, io.cwd, onStreamProgress);
  }
  if (data === undefined || data === "") return undefined;
  if (!data.startsWith("@")) return readRequestDocuments(data, "--data");
  const path = data.slice(1);
  if (path === "") {
    throw new ProtocallError(
      "--data @ needs a file name: write -d @path to read a file, or -d @- to read stdin",
    );
  }
  if (dataFromHeaderFile) {
    return readRequestDocuments(dataFromHeaderFile, sourceLabel(path), dataFromHeaderFile.firstLine);
  }
  return readRequestDocuments(await openSource(path, io, "--data"), sourceLabel(path));
}

/** The label `openRequestData` uses in messages for this `-d` value. */
export function requestDataLabel(data: string): string {
  return data.startsWith("@") ? sourceLabel(data.slice(1)) : "--data";
}

/** The error for a unary or server-streaming call whose -d data holds no JSON document. */
export function noRequestDataError(label: string, method: string): ProtocallError {
  return new ProtocallError(
    `${label}: no request data: it holds no JSON document, but ${method} takes exactly one request message; give one, or omit -d to send an empty request`,
  );
}
