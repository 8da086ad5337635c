// The flags of `protocall curl`, read with the rules of the flag library `buf curl` uses (spf13/pflag,
// ../flag-scan.ts, shared with every protocall command), so any `buf curl` command line means the
// same thing here. Each value is converted and applied through the flag table, in the order given.
// One difference on purpose: repeatable string flags are never split at commas, so a header such as
// `Accept-Language: en, fr` stays one header. Used by the CLI and by "Paste as Request".
import { ProtocallError } from "../errors";
import { scanArgs, unknownFlag } from "../flag-scan";
import { type CurlFlag, convertFlagValue, curlFlags, curlFlagsByName, parseBool } from "./curl-flags";
import { type CurlOptions, defaultCurlOptions } from "./options";

const byShort = new Map(curlFlags.filter((f) => f.short).map((f) => [f.short as string, f]));

/** Parses `protocall curl` arguments (everything after `curl`). Throws ProtocallError on bad usage. */
export function parseCurlArgs(args: string[]): { options: CurlOptions; help: boolean } {
  const options = defaultCurlOptions();
  let help = false;
  const positionals = scanArgs(args, {
    long: (name) => curlFlagsByName.get(name),
    short: (letter) => byShort.get(letter),
    takesValue: (flag) => flag.kind !== "bool",
    set(flag, raw, shown) {
      if (flag.name === "help") {
        if (parseBool(raw, shown)) help = true;
        return;
      }
      flag.apply(options, convertFlagValue(flag, raw, shown));
    },
    unknown: (shown, arg) => unknownFlag(shown, arg, curlFlagsByName.keys(), "protocall curl"),
    missing: needsArgument,
  });

  if (positionals.length > 1 && !help) {
    throw new ProtocallError(
      `too many arguments: expected at most one URL, got ${positionals.length} (${positionals
        .map((p) => JSON.stringify(p))
        .join(", ")}); quote values that contain spaces and put every other value after its flag`,
    );
  }
  if (positionals.length > 0) options.url = positionals[0];
  return { options, help };
}

function needsArgument(flag: CurlFlag, shown: string): ProtocallError {
  return new ProtocallError(
    `flag ${shown} needs a value (${flag.kind === "duration" ? "a duration such as 5s" : flag.kind === "float" ? "a number of seconds" : "a string"}): write ${shown} <value>`,
  );
}
