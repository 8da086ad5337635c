// The `# @load` line of a request in a .rpc file: the load test it is meant for, in the words of
// `protocall load`'s own flags, so the editor's "Load Test…" and `protocall load FILE` run it alike:
//
//   # @load rate=100 duration=10s threshold=p99<50ms threshold=errors<1%
//
// Each word is NAME=VALUE, NAME one of the flags below without the dashes; several `# @load` lines
// add up (a name given twice: the last wins, except threshold, which is repeatable). Flags given on
// the command line win over the file's.
import { ProtocallError } from "../errors";
import { durationMsOf, parseStages } from "./shape";
import { parseThreshold } from "./thresholds";

/** The names a `# @load` line takes (the flags of `protocall load` that shape a run). */
export const loadOptionNames = [
  "rate",
  "concurrency",
  "stages",
  "duration",
  "requests",
  "connections",
  "warmup",
  "threshold",
  "max-in-flight",
  "workers",
] as const;

export type LoadOptionName = (typeof loadOptionNames)[number];

/** One word of a `# @load` line, where it is on the line (0-based characters from the value's start). */
export interface LoadOptionWord {
  name: LoadOptionName;
  value: string;
  start: number;
  end: number;
}

/** A problem of a `# @load` line: what and where (characters from the value's start). */
export interface LoadOptionProblem {
  message: string;
  start: number;
  end: number;
}

/** Reads the value of a `# @load` line: its words, and what is wrong with any of them. */
export function parseLoadLine(text: string): { words: LoadOptionWord[]; problems: LoadOptionProblem[] } {
  const words: LoadOptionWord[] = [];
  const problems: LoadOptionProblem[] = [];
  for (const m of text.matchAll(/\S+/g)) {
    const word = m[0];
    const start = m.index ?? 0;
    const end = start + word.length;
    const eq = word.indexOf("=");
    const name = eq > 0 ? word.slice(0, eq) : word;
    if (!(loadOptionNames as readonly string[]).includes(name)) {
      problems.push({
        message: `unknown @load option "${name}": write NAME=VALUE with NAME one of ${loadOptionNames.join(", ")}`,
        start,
        end,
      });
      continue;
    }
    const value = eq > 0 ? word.slice(eq + 1) : "";
    if (value === "") {
      problems.push({ message: `@load ${name} needs a value: write ${name}=VALUE`, start, end });
      continue;
    }
    const why = loadValueProblem(name as LoadOptionName, value);
    if (why) problems.push({ message: why, start, end });
    else words.push({ name: name as LoadOptionName, value, start, end });
  }
  if (words.length === 0 && problems.length === 0) {
    problems.push({
      message: "@load needs options: write e.g. # @load rate=100 duration=10s threshold=p99<50ms",
      start: 0,
      end: 0,
    });
  }
  return { words, problems };
}

/** Why a value does not fit its option, or undefined. */
function loadValueProblem(name: LoadOptionName, value: string): string | undefined {
  const count = (integer: boolean) => {
    const n = Number(value);
    return Number.isFinite(n) && n > 0 && (!integer || Number.isInteger(n))
      ? undefined
      : `invalid @load ${name}=${value}: write a ${integer ? "whole " : ""}number above 0`;
  };
  switch (name) {
    case "rate":
      return count(false);
    case "concurrency":
    case "requests":
    case "connections":
    case "max-in-flight":
      return count(true);
    case "workers":
      return value === "auto" ? undefined : count(true);
    case "duration":
    case "warmup": {
      const ms = durationMsOf(value);
      return ms !== undefined && ms > 0
        ? undefined
        : `invalid @load ${name}=${value}: write a duration such as 30s, 2m or 500ms`;
    }
    case "stages":
    case "threshold":
      try {
        if (name === "stages") parseStages(value);
        else parseThreshold(value);
        return undefined;
      } catch (err) {
        return err instanceof ProtocallError ? `@load ${name}: ${err.message}` : String(err);
      }
  }
}

/**
 * The flag values of a request's `# @load` lines (their value texts, in order): a name given twice
 * keeps the last, except `threshold`, which adds up. Throws ProtocallError for a line with a problem.
 */
export function loadOptionValues(lines: readonly string[]): Map<LoadOptionName, string[]> {
  const values = new Map<LoadOptionName, string[]>();
  for (const line of lines) {
    const { words, problems } = parseLoadLine(line);
    if (problems.length > 0) throw new ProtocallError(problems[0].message);
    for (const w of words) {
      if (w.name === "threshold") values.set(w.name, [...(values.get(w.name) ?? []), w.value]);
      else values.set(w.name, [w.value]);
    }
  }
  return values;
}
