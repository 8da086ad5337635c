// Command-line arguments read with the rules of the flag library `buf` uses (spf13/pflag), for every
// `protocall` command and for "Paste as Request": `--flag value`, `--flag=value`, bools as `--flag`
// or `--flag=false`, `-d x`, `-dx`, `-d=x`, combined short bools (`-vk`), repeatable flags, flags
// before or after positionals, and `--` to end the flags. The caller's table says which flags exist
// and what they take; this file only walks the words, and words an unknown flag in one way
// (with the closest known name).
import { closest } from "./closest";
import { ProtocallError } from "./errors";

/** How the command line is read, flag by flag: what `scanArgs` asks of a flag table. */
export interface FlagScanner<F> {
  /** The flag with this long name, or undefined. */
  long(name: string): F | undefined;
  /** The flag with this one-letter short name, or undefined. */
  short(letter: string): F | undefined;
  /** Whether the flag takes a value (all but bools). */
  takesValue(flag: F): boolean;
  /** A flag was given: `raw` is its text, or `true` for a bool given alone; `shown` as typed (`-d`). */
  set(flag: F, raw: string | true, shown: string): void;
  /** The error for a flag that is not in the table; `arg` is the whole argument. */
  unknown(shown: string, arg: string): Error;
  /** The error for a flag that needs a value at the end of the line. */
  missing(flag: F, shown: string): Error;
}

/** Walks the arguments with pflag's rules, reporting each flag to `scanner`; returns the positionals. */
export function scanArgs<F>(args: readonly string[], scanner: FlagScanner<F>): string[] {
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--") && arg.length > 2) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const shown = `--${name}`;
      const flag = scanner.long(name);
      if (flag === undefined) throw scanner.unknown(shown, arg);
      if (eq >= 0) scanner.set(flag, arg.slice(eq + 1), shown);
      else if (!scanner.takesValue(flag)) scanner.set(flag, true, shown);
      else if (i + 1 < args.length) scanner.set(flag, args[++i], shown);
      else throw scanner.missing(flag, shown);
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      // One or more short flags: -v, -vk, -dx, -d=x, -d x, -k=false.
      let j = 1;
      while (j < arg.length) {
        const letter = arg[j];
        const shown = `-${letter}`;
        const flag = scanner.short(letter);
        if (flag === undefined) throw scanner.unknown(shown, arg);
        const rest = arg.slice(j + 1);
        if (!scanner.takesValue(flag)) {
          if (rest.startsWith("=")) {
            scanner.set(flag, rest.slice(1), shown);
            break;
          }
          scanner.set(flag, true, shown);
          j++;
          continue;
        }
        if (rest.length > 0) scanner.set(flag, rest.startsWith("=") ? rest.slice(1) : rest, shown);
        else if (i + 1 < args.length) scanner.set(flag, args[++i], shown);
        else throw scanner.missing(flag, shown);
        break;
      }
      continue;
    }
    positionals.push(arg);
  }
  return positionals;
}

/**
 * The error for a flag the command does not have: `unknown flag --protcol (did you mean
 * --protocol?): run \`protocall curl --help\` for the list of flags`.
 */
export function unknownFlag(
  shown: string,
  arg: string,
  names: Iterable<string>,
  command: string,
): ProtocallError {
  const seeHelp = `run \`${command} --help\` for the list of flags`;
  if (!shown.startsWith("--")) {
    return new ProtocallError(`unknown shorthand flag '${shown.slice(1)}' in ${arg}: ${seeHelp}`);
  }
  const [hint] = closest(
    shown.slice(2),
    [...names].filter((n) => n !== "help"),
  );
  return new ProtocallError(`unknown flag ${shown}${hint ? ` (did you mean --${hint}?)` : ""}: ${seeHelp}`);
}
