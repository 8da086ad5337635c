// `{{...}}` references in a `.rpc` file and their values:
//
//   {{name}}                a variable, looked up in this order (the first that defines it wins):
//                             1. `--var name=value` of `protocall run` (overrides)
//                             2. values captured by earlier requests of the run (`# @capture`)
//                             3. the selected environment (its private file over its shared file)
//                             4. file variables (`@name = value`; the last definition wins)
//                             5. the environment files' `$shared` defaults
//                           so an environment points a file at another server without editing it
//                           (`@host` in the file is the default, `host` in the environment wins), and
//                           a file's own value beats a workspace-wide default.
//   {{$env NAME}}           the process environment
//   {{$dotenv NAME}}        a `.env` file next to the .rpc file, then one at the workspace root
//   {{$uuid}}               a random UUID (v4)
//   {{$timestamp}}          the time in Unix seconds
//   {{$isoTimestamp}}       the time in ISO 8601 (UTC, milliseconds)
//   {{$randomInt MIN MAX}}  a random integer, MIN included, MAX excluded
//   {{$file PATH}}          in a body: a file's content (base64 for bytes fields, text for strings)
//
// A reference that cannot be resolved is an error with the reference's range; it is never sent as
// text. A name that only a `# @capture` of the file defines says which request to run first.
// Variable values may refer to other variables; a cycle is an error.
import { randomUUID } from "node:crypto";
import { ProtocallError } from "../errors";
import { positionIn } from "./parse";
import type { Diagnostic, Range, RpcVariable, Token } from "./types";

export interface VariableReference {
  /** The whole reference, `{{ name }}`. */
  text: string;
  /** The trimmed inside: `name`, `$uuid`, `$randomInt 1 10`. */
  expression: string;
  /** `name` for a variable, `$uuid` etc. for a system variable (its first word). */
  name: string;
  /** Words after a system variable's name (`$env NAME` → ["NAME"]). */
  args: string[];
  system: boolean;
  range: Range;
  /** Offsets of the reference in the token's text. */
  offset: number;
  length: number;
}

/** The system variables and the arguments each takes, for completion and hover. */
export const systemVariables: Readonly<Record<string, { args: string[]; doc: string }>> = {
  $env: { args: ["NAME"], doc: "The value of an environment variable of the process." },
  $dotenv: {
    args: ["NAME"],
    doc: "A value from the .env file next to the .rpc file, else from the workspace root's .env.",
  },
  $uuid: { args: [], doc: "A random UUID (version 4)." },
  $timestamp: { args: [], doc: "The current time in seconds since the Unix epoch." },
  $isoTimestamp: {
    args: [],
    doc: "The current time in ISO 8601 form, UTC, such as 2026-01-02T03:04:05.678Z.",
  },
  $randomInt: { args: ["MIN", "MAX"], doc: "A random integer from MIN (included) to MAX (excluded)." },
  $file: {
    args: ["PATH"],
    doc: 'A file\'s content, in a request body\'s JSON string: base64 in a bytes field, text in a string field ("data": "{{$file ./photo.png}}"). The path is relative to the .rpc file.',
  },
};

const referencePattern = /\{\{(.*?)\}\}/g;

/** The `{{...}}` references in a token, with their ranges in the file. Unclosed `{{` are not included. */
export function findReferences(tok: Token): VariableReference[] {
  const refs: VariableReference[] = [];
  const text = tok.text;
  referencePattern.lastIndex = 0;
  for (let m = referencePattern.exec(text); m; m = referencePattern.exec(text)) {
    if (m[1].includes("\n")) continue;
    const expression = m[1].trim();
    const words = expression.split(/\s+/).filter((w) => w !== "");
    const name = words[0] ?? "";
    const start = positionIn(text, tok.range.start, m.index);
    const end = positionIn(text, tok.range.start, m.index + m[0].length);
    refs.push({
      text: m[0],
      expression,
      name,
      args: words.slice(1),
      system: name.startsWith("$"),
      range: { start, end },
      offset: m.index,
      length: m[0].length,
    });
  }
  return refs;
}

/** A request of the file that captures a variable (`# @capture name = path`). */
export interface CaptureSource {
  /** Index of the request in the file. */
  index: number;
  /** The request's name, else `request N (line L)`. */
  label: string;
  /** Zero-based line of the capture. */
  line: number;
}

/** Where variable values come from; the order of precedence is at the top of this file. */
export interface VariableScope {
  /** `--var name=value`: above everything else. */
  overrides?: Readonly<Record<string, string>>;
  /** Values captured by requests that ran before this one. */
  captures?: Readonly<Record<string, string>>;
  /** File variables in order of definition; a later definition of a name wins. */
  fileVariables: readonly RpcVariable[];
  /** The selected environment's own variables (above file variables); empty without one. */
  environment: Readonly<Record<string, string>>;
  /** The environment files' `$shared` values (below file variables). */
  sharedEnvironment?: Readonly<Record<string, string>>;
  /** Which requests of the file capture each name, in file order (for "run … first" messages). */
  captureSources?: ReadonlyMap<string, readonly CaptureSource[]>;
  /** The index of the request being resolved, to tell earlier captures from later ones. */
  requestIndex?: number;
  /**
   * What a reference to a name that an earlier request captures, but that has no value yet, becomes:
   * "error" (the default: it must run first) or "defer" (kept as written and counted in
   * `VariableResolver.deferred`, for checking a file before its requests run).
   */
  pendingCaptures?: "error" | "defer";
  /** Why a request that ran took no value for a name it captures, by name (RunVariables.missedCaptures). */
  missedCaptures?: Readonly<Record<string, string>>;
  /** The name of the selected environment, for messages. */
  environmentName?: string;
  /** The process environment, for `$env`. */
  processEnv: Readonly<Record<string, string | undefined>>;
  /** `.env` values, for `$dotenv` (the file next to the .rpc file wins over the workspace root's). */
  dotenv: Readonly<Record<string, string>>;
  /** Defaults: the clock, Math.random and crypto.randomUUID. */
  now?: () => Date;
  random?: () => number;
  uuid?: () => string;
}

/**
 * Resolves references within one request: file variables are evaluated once and reused, so a
 * `{{$uuid}}` behind `@id` has one value across the request.
 */
export class VariableResolver {
  /** How many references were kept as written because their capture has not run (see pendingCaptures). */
  deferred = 0;
  private readonly cache = new Map<string, { value?: string; problem?: string }>();
  private readonly byName = new Map<string, RpcVariable>();

  constructor(private readonly scope: VariableScope) {
    for (const v of scope.fileVariables) this.byName.set(v.name.text, v);
  }

  /** Substitutes every reference in the token; problems become diagnostics at the references. */
  resolve(tok: Token, diagnostics: Diagnostic[]): string {
    const { value, problems } = this.substitute(tok.text, [], tok);
    for (const p of problems)
      diagnostics.push({ severity: "error", message: p.message, range: p.range, code: p.code });
    return value;
  }

  private substitute(
    text: string,
    stack: string[],
    tok: Token,
  ): { value: string; problems: { message: string; range: Range; code: string }[] } {
    const problems: { message: string; range: Range; code: string }[] = [];
    let result = "";
    let last = 0;
    for (const ref of findReferences({ text, range: tok.range })) {
      result += text.slice(last, ref.offset);
      last = ref.offset + ref.length;
      const r = this.evaluate(ref, stack);
      if (r.problem !== undefined)
        problems.push({ message: r.problem, range: ref.range, code: r.code ?? "undefined-variable" });
      else result += r.value;
    }
    result += text.slice(last);
    // `{{` left without its `}}` on the same line.
    const rest = text.slice(last);
    const open = rest.indexOf("{{");
    if (open >= 0 && !rest.slice(open).split("\n")[0].includes("}}")) {
      const at = positionIn(text, tok.range.start, last + open);
      problems.push({
        message: "`{{` is not closed: write {{name}} on one line",
        range: { start: at, end: { line: at.line, character: at.character + 2 } },
        code: "unclosed-reference",
      });
    }
    return { value: result, problems };
  }

  private evaluate(
    ref: VariableReference,
    stack: string[],
  ): { value?: string; problem?: string; code?: string } {
    if (ref.system) return this.system(ref);
    const name = ref.expression;
    if (name === "") return { problem: "empty reference {{}}: write {{name}}", code: "syntax" };
    if (!/^[A-Za-z_][\w.-]*$/.test(name)) {
      return {
        problem: `{{${name}}} is not a variable reference: a name is letters, digits, _ . and -, starting with a letter or _ (system variables start with $)`,
        code: "syntax",
      };
    }
    const literal = (values: Readonly<Record<string, string>> | undefined) =>
      values !== undefined && Object.hasOwn(values, name) ? { value: values[name] } : undefined;
    const given = literal(this.scope.overrides) ?? literal(this.scope.captures);
    if (given) return given;
    if (Object.hasOwn(this.scope.environment, name)) {
      return this.fromEnvironment(name, this.scope.environment[name], "environment variable", ref, stack);
    }
    const cached = this.cache.get(name);
    if (cached) return cached;
    const variable = this.byName.get(name);
    if (variable) {
      if (stack.includes(name)) {
        return {
          problem: `variable @${name} refers to itself (${[...stack, name].map((n) => `@${n}`).join(" → ")})`,
          code: "variable-cycle",
        };
      }
      const inner = this.substitute(variable.value.text, [...stack, name], variable.value);
      const result =
        inner.problems.length > 0
          ? {
              problem: `${inner.problems[0].message} (in @${name}, line ${variable.range.start.line + 1})`,
            }
          : { value: inner.value };
      this.cache.set(name, result);
      return result;
    }
    const shared = this.scope.sharedEnvironment;
    if (shared !== undefined && Object.hasOwn(shared, name)) {
      return this.fromEnvironment(name, shared[name], "shared environment variable", ref, stack);
    }
    const pending = this.pendingCapture(ref, name);
    if (pending) return pending;
    const where = this.scope.environmentName
      ? `the file or the environment "${this.scope.environmentName}"`
      : "the file, and no environment is selected";
    return {
      problem: `undefined variable {{${name}}}: it is not defined in ${where}; define it with \`@${name} = value\` at the top of the file${this.scope.environmentName ? " or in the environment file" : ", or select an environment"}`,
    };
  }

  private fromEnvironment(
    name: string,
    raw: string,
    what: string,
    ref: VariableReference,
    stack: string[],
  ): { value?: string; problem?: string; code?: string } {
    if (!raw.includes("{{")) return { value: raw };
    if (stack.includes(name)) return { problem: `${what} ${name} refers to itself`, code: "variable-cycle" };
    const inner = this.substitute(raw, [...stack, name], { text: raw, range: ref.range });
    return inner.problems.length > 0
      ? { problem: `${inner.problems[0].message} (in ${what} ${name})` }
      : { value: inner.value };
  }

  /** A name that only `# @capture` defines: which request to run first, or kept for later. */
  private pendingCapture(
    ref: VariableReference,
    name: string,
  ): { value?: string; problem?: string; code?: string } | undefined {
    const sources = this.scope.captureSources?.get(name);
    if (!sources || sources.length === 0) return undefined;
    const here = this.scope.requestIndex;
    const earlier = here === undefined ? sources : sources.filter((s) => s.index < here);
    const describe = (s: CaptureSource) => `request "${s.label}" (line ${s.line + 1})`;
    if (earlier.length > 0) {
      if (this.scope.pendingCaptures === "defer") {
        this.deferred++;
        return { value: ref.text };
      }
      const last = earlier[earlier.length - 1];
      const missed = this.scope.missedCaptures?.[name];
      if (missed !== undefined && Object.hasOwn(this.scope.missedCaptures ?? {}, name)) {
        return { problem: `{{${name}}} has no value: ${missed}`, code: "capture-missed" };
      }
      return {
        problem: `{{${name}}} has no value yet: it is captured by ${describe(last)}; run that request first`,
        code: "capture-not-run",
      };
    }
    const own = sources.find((s) => s.index === here);
    if (own) {
      return {
        problem: `{{${name}}} is captured by this request (line ${own.line + 1}), so it has no value before the request runs; capture it in an earlier request`,
        code: "capture-order",
      };
    }
    return {
      problem: `{{${name}}} is captured by ${describe(sources[0])}, which comes after this one; move that request before this one`,
      code: "capture-order",
    };
  }

  private system(ref: VariableReference): { value?: string; problem?: string; code?: string } {
    const spec = systemVariables[ref.name];
    if (!spec) {
      return {
        problem: `unknown system variable {{${ref.name}}}: use one of ${Object.keys(systemVariables).join(", ")}`,
        code: "unknown-system-variable",
      };
    }
    if (ref.args.length !== spec.args.length) {
      const usage = [ref.name, ...spec.args].join(" ");
      return {
        problem: `{{${ref.name}}} takes ${spec.args.length === 0 ? "no arguments" : spec.args.join(" and ")}: write {{${usage}}}`,
        code: "syntax",
      };
    }
    switch (ref.name) {
      case "$env": {
        const v = this.scope.processEnv[ref.args[0]];
        return v === undefined
          ? { problem: `environment variable ${ref.args[0]} is not set ({{$env ${ref.args[0]}}})` }
          : { value: v };
      }
      case "$dotenv": {
        const key = ref.args[0];
        return Object.hasOwn(this.scope.dotenv, key)
          ? { value: this.scope.dotenv[key] }
          : {
              problem: `${key} is not defined in a .env file ({{$dotenv ${key}}}); add \`${key}=value\` to the .env file next to the .rpc file or at the workspace root`,
            };
      }
      case "$uuid":
        return { value: (this.scope.uuid ?? randomUUID)() };
      case "$timestamp":
        return { value: String(Math.floor(this.now().getTime() / 1000)) };
      case "$isoTimestamp":
        return { value: this.now().toISOString() };
      case "$file":
        // In a body, to-curl.ts replaces it before resolving (fileReferences); anywhere else it has no meaning.
        return {
          problem: `{{$file ${ref.args[0]}}} goes in a request body's JSON string, such as "data": "{{$file ./photo.png}}"; headers, URLs and options cannot hold a file`,
          code: "syntax",
        };
      default: {
        const [min, max] = ref.args.map((a) => (/^[+-]?\d+$/.test(a) ? Number(a) : Number.NaN));
        if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min >= max) {
          return {
            problem: `{{$randomInt ${ref.args.join(" ")}}} needs two integers MIN < MAX, such as {{$randomInt 1 100}}`,
            code: "syntax",
          };
        }
        const random = this.scope.random ?? Math.random;
        return { value: String(min + Math.floor(random() * (max - min))) };
      }
    }
  }

  private now(): Date {
    return (this.scope.now ?? (() => new Date()))();
  }
}

/**
 * Reads `name=value`, as `protocall run --var` takes it (the value may be empty and may hold `=`).
 * Throws ProtocallError when it is not one.
 */
export function parseVariableAssignment(text: string): [name: string, value: string] {
  const eq = text.indexOf("=");
  const name = eq < 0 ? text : text.slice(0, eq);
  if (eq < 0 || !/^[A-Za-z_][\w.-]*$/.test(name)) {
    throw new ProtocallError(
      eq < 0
        ? `--var ${JSON.stringify(text)} needs a value: write --var name=value`
        : `--var ${JSON.stringify(text)}: ${JSON.stringify(name)} is not a variable name (letters, digits, _ . and -, starting with a letter or _); write --var name=value`,
    );
  }
  return [name, text.slice(eq + 1)];
}
