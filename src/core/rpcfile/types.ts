// The parsed form of a `.rpc` request file. Every token carries its range in the text, LSP style:
// zero-based lines and characters, characters counted in UTF-16 code units (JavaScript string
// indices), the end exclusive. Editors use the ranges for diagnostics, hover, completion and code
// lenses; the CLI turns them into `file:line:col` messages.
import type { RpcAssertion, RpcCapture } from "./assertion-syntax";

export interface Position {
  /** Zero-based line. */
  line: number;
  /** Zero-based offset in the line, in UTF-16 code units. */
  character: number;
}

export interface Range {
  start: Position;
  /** Exclusive. */
  end: Position;
}

export type Severity = "error" | "warning" | "information" | "hint";

export interface Diagnostic {
  severity: Severity;
  message: string;
  range: Range;
  /** A stable identifier of the kind of problem (for quick fixes), such as "unknown-option". */
  code?: string;
  /** Text that fixes the problem when it replaces the text at `range` (offered as a quick fix). */
  replacement?: string;
}

/** A piece of the file: its text exactly as written (multi-line for JSON documents) and its range. */
export interface Token {
  text: string;
  range: Range;
}

/** `@name = value` before the first request. */
export interface RpcVariable {
  name: Token;
  /** The value as written, trimmed; may hold `{{...}}` references. */
  value: Token;
  /** The whole line. */
  range: Range;
}

/** `# @flag [value]` (or `// @flag [value]`) before the request line. */
export interface RpcOption {
  /** The flag's long name, without `@`. */
  name: Token;
  /** The value as written, trimmed; absent for a bool flag given alone. */
  value?: Token;
  range: Range;
}

/** `name: value` after the request line. */
export interface RpcHeader {
  name: Token;
  /** Trimmed; may be empty (then its range is empty, right after the colon). */
  value: Token;
  range: Range;
}

export type RpcVerb = "GRPC" | "GRPC-WEB" | "CONNECT";

/** One part of a request body: a JSON document as written, or a `< path` line including a file. */
export type RpcBodyPart =
  | { kind: "json"; text: string; range: Range }
  | { kind: "include"; path: Token; range: Range };

export interface RpcRequest {
  /** Position in the file's list of requests, from 0. */
  index: number;
  /** The text after `###` (trimmed), or a `# @name` option; absent when unnamed. */
  name?: Token;
  /** The `###` line, absent for a request before any separator. */
  separator?: Range;
  /** From the separator (or the first line of the request) to its last non-blank line. */
  range: Range;
  /** Comment lines (`#`, `//`) of the request, the markers included. */
  comments: Token[];
  options: RpcOption[];
  /** `GRPC`, `GRPC-WEB` or `CONNECT` before the URL, normalized to upper case in `text`. */
  verb?: Token & { value: RpcVerb };
  /** The URL of the request line; may hold `{{...}}` references. */
  url?: Token;
  /** The whole request line. */
  requestLine?: Range;
  headers: RpcHeader[];
  /** JSON documents and includes, in order (several documents = a client or bidi stream). */
  body: RpcBodyPart[];
  /** From the first to the last body line; absent without a body. */
  bodyRange?: Range;
  /** `# @assert` options: what the response must be. */
  assertions: RpcAssertion[];
  /** `# @capture` options: values of the response that later requests use as variables. */
  captures: RpcCapture[];
  /** `# @snapshot` options, merged: the response is compared with a stored one (snapshot.ts). */
  snapshot?: RpcSnapshot;
  /** `# @load` lines: how to load-test the request (core/load/load-options.ts), their values as written. */
  load?: { text: string; range: Range; valueRange?: Range }[];
}

/** What `# @snapshot` lines ask for: the first line's range, the paths to scrub, the headers to keep. */
export interface RpcSnapshot {
  range: Range;
  /** Paths of the stored response (`messages[*].id`, `error.message`) whose values change each call. */
  ignore: string[];
  /** Header and trailer names (lower case) to store besides the messages, the status and the error. */
  headers: string[];
}

export interface RpcFile {
  variables: RpcVariable[];
  requests: RpcRequest[];
  diagnostics: Diagnostic[];
}
