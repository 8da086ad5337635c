// The command line's arguments, for every command: a table of typed flags (kind, short form, default,
// help text) read with the rules of the flag library `buf` uses (spf13/pflag; the tokenizer is
// core/flag-scan.ts, which `protocall curl` and "Paste as Request" use too), the "Flags:" section of
// each command's --help written from the same table, and one wording for every usage error (what is
// wrong, where, how to fix it: unknown flags with the closest names, missing and invalid values).
//
// pflag's rules: `--flag value`, `--flag=value`, bools as `--flag` or `--flag=false`, `-d x`, `-dx`,
// `-d=x`, combined short bools (`-vk`), repeatable flags, flags before or after positionals, `--`
// ends the flags. node:util's parseArgs was not used: it refuses `--bool=false` and values starting
// with a dash (`-d -`), and its errors say neither how to fix them nor what was meant.
// This module runs on every command's start-up path, so it imports nothing heavy.
import { closest } from "../core/closest";
import { ProtocallError } from "../core/errors";
import { scanArgs, unknownFlag } from "../core/flag-scan";
import { parseBool } from "../core/invoke/curl-flags";
import { formatDuration, parseDuration } from "../core/invoke/duration";
import type { CliContext } from "./context";

export type FlagKind = "bool" | "string" | "strings" | "int" | "duration" | "size";

/** One flag of a command. */
export interface FlagDef {
  readonly kind: FlagKind;
  /** One letter: `-k` for `--insecure`. */
  readonly short?: string;
  /** What the flag does, for --help (one sentence; wrapped when printed). */
  readonly help: string;
  /** The value's name in --help and in errors: FILE, URL, N. Defaults by kind. */
  readonly value?: string;
  /** The value when the flag is absent (a duration in milliseconds, a size in bytes). Shown in --help. */
  readonly default?: string | number;
  /** How --help shows the default, when not the value itself ("any free port"). */
  readonly defaultText?: string;
  /** A command without this flag is refused, naming the flag. */
  readonly required?: boolean;
  /** Allowed values of a string flag. */
  readonly choices?: readonly string[];
  /** Smallest value of an int, duration or size flag (milliseconds, bytes), inclusive. */
  readonly min?: number;
  /** Largest value of an int flag, inclusive. */
  readonly max?: number;
  /** Listed in --help only when true (default), e.g. false for an alias kept for old scripts. */
  readonly listed?: boolean;
}

export type FlagSpec = Readonly<Record<string, FlagDef>>;

type ValueOf<D extends FlagDef> = D["kind"] extends "bool"
  ? boolean
  : D["kind"] extends "strings"
    ? string[]
    : D["kind"] extends "int" | "duration" | "size"
      ? number
      : D extends { readonly choices: readonly (infer C)[] }
        ? C
        : string;

type AlwaysSet<D extends FlagDef> = D["kind"] extends "bool" | "strings"
  ? true
  : D extends { readonly default: string | number }
    ? true
    : D extends { readonly required: true }
      ? true
      : false;

/** The parsed values: bools default to false, repeatable flags to [], others to their default. */
export type FlagValues<S extends FlagSpec> = {
  -readonly [K in keyof S]: AlwaysSet<S[K]> extends true ? ValueOf<S[K]> : ValueOf<S[K]> | undefined;
};

export interface ParsedArgs<S extends FlagSpec> {
  readonly values: FlagValues<S>;
  readonly positionals: string[];
  /** `-h` or `--help` was given: print the command's help; the rest was not checked. */
  readonly help: boolean;
  /** The flags given on the command line (not defaulted). */
  readonly given: ReadonlySet<keyof S & string>;
}

export interface ParseOptions {
  /** The command as the user types it, for messages: "protocall listen replay". */
  readonly command: string;
  /** How many positional arguments the command takes at most (default 0). */
  readonly positionals?: number;
}

/** Declares a command's flags; returns them as given, typed for `parseArgs`. */
export function defineFlags<const S extends FlagSpec>(spec: S): S {
  return spec;
}

/** `-h, --help`, which every command has. */
const helpFlag: FlagDef = { kind: "bool", short: "h", help: "show this help" };

/**
 * Reads a command's arguments against its flags. Throws ProtocallError (one line, exit 1) for an
 * unknown flag, a missing or invalid value, a missing required flag or too many arguments; with -h or
 * --help anywhere, returns `help: true` instead of failing.
 */
export function parseArgs<const S extends FlagSpec>(
  args: readonly string[],
  spec: S,
  options: ParseOptions,
): ParsedArgs<S> {
  try {
    return parseStrict(args, spec, options);
  } catch (err) {
    if (asksForHelp(args)) {
      return { values: {} as FlagValues<S>, positionals: [], help: true, given: new Set() };
    }
    throw err;
  }
}

function parseStrict<S extends FlagSpec>(
  args: readonly string[],
  spec: S,
  options: ParseOptions,
): ParsedArgs<S> {
  const { command } = options;
  const all: Record<string, FlagDef> = { help: helpFlag, ...spec };
  const byShort = new Map<string, string>();
  for (const [name, def] of Object.entries(all)) if (def.short) byShort.set(def.short, name);
  const values: Record<string, unknown> = {};
  const given = new Set<string>();
  let help = false;

  const positionals = scanArgs(args, {
    long: (name) => (Object.hasOwn(all, name) ? name : undefined),
    short: (letter) => byShort.get(letter),
    takesValue: (name) => all[name].kind !== "bool",
    set(name, raw, shown) {
      const def = all[name];
      if (name === "help") {
        help = parseBool(raw, shown);
        return;
      }
      given.add(name);
      if (def.kind === "strings") {
        ((values[name] ??= []) as string[]).push(raw as string);
        return;
      }
      values[name] = convertValue(def, raw, shown);
    },
    unknown: (shown, arg) => unknownFlag(shown, arg, Object.keys(all), command),
    missing: (name, shown) => missingValue(all[name], shown),
  });

  if (help)
    return { values: values as FlagValues<S>, positionals, help, given: given as Set<keyof S & string> };
  const max = options.positionals ?? 0;
  if (positionals.length > max) {
    const extra = positionals.map((p) => JSON.stringify(p)).join(", ");
    throw new ProtocallError(
      max === 0
        ? `${command} takes no arguments, got ${extra}: give every value after its flag (see \`${command} --help\`)`
        : `too many arguments for ${command}: expected at most ${max}, got ${extra}; quote values that contain spaces (see \`${command} --help\`)`,
    );
  }
  for (const [name, def] of Object.entries(spec)) {
    if (given.has(name)) continue;
    if (def.required) {
      throw new ProtocallError(
        `${command} needs --${name}, ${def.help.replace(/;\s.*$/s, "")}: write --${name} ${placeholder(def)} (see \`${command} --help\`)`,
      );
    }
    if (def.kind === "bool") values[name] = false;
    else if (def.kind === "strings") values[name] = [];
    else if (def.default !== undefined) values[name] = def.default;
  }
  return { values: values as FlagValues<S>, positionals, help, given: given as Set<keyof S & string> };
}

/** Whether `-h` or `--help` appears among the flags (before any `--`). */
function asksForHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === "--") return false;
    if (arg === "-h" || arg === "--help") return true;
  }
  return false;
}

function missingValue(def: FlagDef, shown: string): ProtocallError {
  return new ProtocallError(
    `flag ${shown} needs a value (${describeKind(def)}): write ${shown} ${placeholder(def)}`,
  );
}

/** What a flag's value must be, in words: "a whole number from 0 to 65535". */
function describeKind(def: FlagDef): string {
  switch (def.kind) {
    case "int":
      if (def.min !== undefined && def.max !== undefined)
        return `a whole number from ${def.min} to ${def.max}`;
      if (def.min === 1) return "a positive whole number";
      if (def.min !== undefined) return `a whole number of at least ${def.min}`;
      return "a whole number";
    case "duration":
      return "a duration such as 5s, 1m30s or 250ms";
    case "size":
      return "a size in bytes, or with KiB, MiB or GiB such as 64KiB";
    default:
      return def.choices ? `one of ${def.choices.join(", ")}` : "a string";
  }
}

function placeholder(def: FlagDef): string {
  if (def.value) return def.value;
  switch (def.kind) {
    case "int":
      return "N";
    case "duration":
      return "DURATION";
    case "size":
      return "SIZE";
    default:
      return def.choices ? def.choices.join("|") : "VALUE";
  }
}

function convertValue(def: FlagDef, raw: string | true, shown: string): string | number | boolean {
  switch (def.kind) {
    case "bool":
      return parseBool(raw, shown);
    case "int": {
      const text = raw as string;
      const n = /^[+-]?\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
      const inRange =
        Number.isSafeInteger(n) &&
        (def.min === undefined || n >= def.min) &&
        (def.max === undefined || n <= def.max);
      if (!inRange) throw invalidValue(text, shown, `it must be ${describeKind(def)}`);
      return n;
    }
    case "duration": {
      const ms = parseDuration(raw as string, shown);
      if (def.min !== undefined && ms < def.min) {
        throw invalidValue(
          raw as string,
          shown,
          def.min === 0 ? "it must not be negative" : `it must be at least ${formatDuration(def.min)}`,
        );
      }
      return ms;
    }
    case "size": {
      const bytes = parseSize(raw as string);
      if (bytes === undefined) {
        throw invalidValue(raw as string, shown, "it is not a size; write bytes, or 64KiB, 256MiB, 1GiB");
      }
      const min = def.min ?? 1;
      if (bytes < min) {
        throw invalidValue(
          raw as string,
          shown,
          min === 1 ? "it must be more than zero bytes" : `it must be at least ${min} bytes`,
        );
      }
      return bytes;
    }
    default: {
      const text = raw as string;
      if (def.choices && !def.choices.includes(text)) {
        const [hint] = closest(text, def.choices);
        throw invalidValue(
          text,
          shown,
          `it must be ${def.choices.length === 2 ? def.choices.join(" or ") : `one of ${def.choices.join(", ")}`}${hint ? ` (did you mean ${hint}?)` : ""}`,
        );
      }
      return text;
    }
  }
}

/** Bytes from 1048576, 64KiB, 256MiB or 1GiB (KB, MB, GB and K, M, G mean the same powers of 1024). */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kib|kb|k|mib|mb|m|gib|gb|g)?$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = (m[2] ?? "b").toLowerCase()[0];
  return Math.floor(
    Number(m[1]) * (unit === "k" ? 1024 : unit === "m" ? 1024 ** 2 : unit === "g" ? 1024 ** 3 : 1),
  );
}

/** `invalid value "x" for --port: <why and how to fix>`. */
export function invalidValue(raw: string, shown: string, why: string): ProtocallError {
  return new ProtocallError(`invalid value ${JSON.stringify(raw)} for ${shown}: ${why}`);
}

/**
 * The flag lines of a --help text, one flag per entry in table order, `-h, --help` last:
 *   `  -k, --insecure        do not verify ... (default ...)`
 */
export function flagsHelp(spec: FlagSpec, width = 100): string {
  const rows: [string, string][] = [];
  for (const [name, def] of [...Object.entries(spec), ["help", helpFlag] as const]) {
    if (def.listed === false) continue;
    const value = def.kind === "bool" ? "" : ` ${placeholder(def)}`;
    const left = `${def.short ? `-${def.short}, ` : ""}--${name}${value}`;
    const shownDefault =
      def.defaultText ??
      (def.default === undefined
        ? undefined
        : def.kind === "duration"
          ? formatDuration(def.default as number)
          : String(def.default));
    const repeatable = def.kind === "strings" && !/repeat/i.test(def.help) ? "; repeatable" : "";
    rows.push([
      left,
      `${def.help}${repeatable}${shownDefault !== undefined ? ` (default ${shownDefault})` : ""}`,
    ]);
  }
  const column = Math.min(Math.max(...rows.map(([left]) => left.length)) + 4, 30);
  const lines: string[] = [];
  for (const [left, text] of rows) {
    const words = wrap(text, width - column);
    if (left.length + 2 + 2 > column) {
      lines.push(`  ${left}`);
      for (const w of words) lines.push(`${" ".repeat(column)}${w}`);
    } else {
      lines.push(`  ${left.padEnd(column - 2)}${words[0]}`);
      for (const w of words.slice(1)) lines.push(`${" ".repeat(column)}${w}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines;
}

/** A subcommand: runs with the arguments after its name. */
export type Subcommand = (args: string[], ctx: CliContext) => Promise<number>;

/**
 * Runs the subcommand named by the first argument. No argument prints `usage` on stderr (exit 1);
 * `-h`, `--help` or `help` print it on stdout (exit 0); an unknown name is an error with the closest
 * names. With `fallback`, arguments that do not start with a subcommand's name go to it instead
 * (`protocall listen --tls` runs the listener itself).
 */
export async function runSubcommand(
  args: string[],
  ctx: CliContext,
  options: {
    command: string;
    usage: string;
    subcommands: Readonly<Record<string, Subcommand>>;
    fallback?: Subcommand;
  },
): Promise<number> {
  const [name, ...rest] = args;
  const { subcommands, fallback } = options;
  if (name !== undefined && Object.hasOwn(subcommands, name)) return subcommands[name](rest, ctx);
  if (fallback && (name === undefined || name.startsWith("-"))) return fallback(args, ctx);
  if (name === undefined || name === "-h" || name === "--help" || name === "help") {
    (name === undefined ? ctx.stderr : ctx.stdout).write(options.usage);
    return name === undefined ? 1 : 0;
  }
  const names = Object.keys(subcommands);
  const [hint] = closest(name, names);
  const list = `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  throw new ProtocallError(
    `unknown subcommand "${name}" of ${options.command}${hint ? ` (did you mean ${hint}?)` : ""}: use ${list}`,
  );
}
