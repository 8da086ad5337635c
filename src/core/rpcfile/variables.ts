// `{{...}}` references in a `.rpc` file and their values:
//
//   {{name}}                file variables (`@name = value`), then the selected environment
//   {{$env NAME}}           the process environment
//   {{$dotenv NAME}}        a `.env` file next to the .rpc file, then one at the workspace root
//   {{$uuid}}               a random UUID (v4)
//   {{$timestamp}}          the time in Unix seconds
//   {{$isoTimestamp}}       the time in ISO 8601 (UTC, milliseconds)
//   {{$randomInt MIN MAX}}  a random integer, MIN included, MAX excluded
//
// A reference that cannot be resolved is an error with the reference's range; it is never sent as
// text. Variable values may refer to other variables; a cycle is an error.
import { randomUUID } from "node:crypto";
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

/** Where variable values come from. */
export interface VariableScope {
  /** File variables in order of definition; a later definition of a name wins. */
  fileVariables: readonly RpcVariable[];
  /** The selected environment's variables (shared values merged in); empty without one. */
  environment: Readonly<Record<string, string>>;
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
    if (Object.hasOwn(this.scope.environment, name)) {
      const raw = this.scope.environment[name];
      if (!raw.includes("{{")) return { value: raw };
      if (stack.includes(name))
        return { problem: `environment variable ${name} refers to itself`, code: "variable-cycle" };
      const inner = this.substitute(raw, [...stack, name], { text: raw, range: ref.range });
      return inner.problems.length > 0
        ? { problem: `${inner.problems[0].message} (in environment variable ${name})` }
        : { value: inner.value };
    }
    const where = this.scope.environmentName
      ? `the file or the environment "${this.scope.environmentName}"`
      : "the file, and no environment is selected";
    return {
      problem: `undefined variable {{${name}}}: it is not defined in ${where}; define it with \`@${name} = value\` at the top of the file${this.scope.environmentName ? " or in the environment file" : ", or select an environment"}`,
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
