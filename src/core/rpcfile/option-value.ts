// The value of one request option (`# @timeout 5s`), read exactly as `protocall curl` reads the flag of
// the same name, so a request file and a command line can never mean different things.
import { ProtocallError } from "../errors";
import { type CurlFlag, convertFlagValue, curlFlagsByName } from "../invoke/curl-flags";
import { type CurlOptions, defaultCurlOptions } from "../invoke/options";

/**
 * Request options that are not flags of `protocall curl`: `@name` names the request, `@assert` and
 * `@capture` test the response and keep its values (assertion-syntax.ts), `@snapshot` compares it with
 * a stored one (core/assertions/snapshot.ts), `@load` says how to load-test it (core/load/load-options.ts).
 */
export const extraOptionNames: readonly string[] = ["name", "assert", "capture", "snapshot", "load"];

/** The flag a request option stands for; undefined for unknown names (and `help`). */
export function optionFlag(name: string): CurlFlag | undefined {
  return name === "help" ? undefined : curlFlagsByName.get(name);
}

/**
 * Applies one option to `o`, as the flag would. A bool flag without a value means true; every other
 * flag needs one. Throws ProtocallError naming the option when the value is invalid.
 */
export function applyOption(o: CurlOptions, flag: CurlFlag, value: string | undefined): void {
  const shown = `@${flag.name}`;
  if (value === undefined) {
    if (flag.kind !== "bool") {
      throw new ProtocallError(
        `${shown} needs a value (${flag.kind === "duration" ? "a duration such as 5s" : flag.kind === "float" ? "a number of seconds" : "a string"}): write # ${shown} <value>`,
      );
    }
    flag.apply(o, true);
    return;
  }
  let typed: string | boolean | number;
  try {
    typed = convertFlagValue(flag, value, shown);
  } catch (err) {
    if (flag.kind === "bool") {
      throw new ProtocallError(
        `invalid value "${value}" for ${shown}: write # ${shown} alone (true), or # ${shown} true or false`,
      );
    }
    throw err;
  }
  try {
    flag.apply(o, typed);
  } catch (err) {
    // The flag's own message names `--flag`; in a request file it is `@flag`.
    if (err instanceof ProtocallError)
      throw new ProtocallError(err.message.replaceAll(`--${flag.name}`, shown));
    throw err;
  }
}

/** Checks an option's value as written; returns the problem, or undefined if it is valid or holds `{{...}}`. */
export function checkOptionValue(flag: CurlFlag, value: string | undefined): string | undefined {
  if (value?.includes("{{")) return undefined;
  try {
    applyOption(defaultCurlOptions(), flag, value);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
