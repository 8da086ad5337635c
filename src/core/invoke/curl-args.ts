// The flags of `protocall curl`, parsed with the semantics of the flag library `buf curl` uses
// (spf13/pflag), so any `buf curl` command line means the same thing here: `--flag value`,
// `--flag=value`, bools as `--flag` or `--flag=false`, `-d x`, `-dx`, `-d=x`, combined short bools
// (`-vk`), repeatable flags, flags after the URL, and `--` to end the flags.
// One difference on purpose: repeatable string flags are never split at commas, so a header such as
// `Accept-Language: en, fr` stays one header. Used by the CLI and by "Paste as Request".
import { ProtocallError } from "../errors";
import { type CurlFlag, convertFlagValue, curlFlags, parseBool } from "./curl-flags";
import { type CurlOptions, defaultCurlOptions } from "./options";

const byName = new Map(curlFlags.map((f) => [f.name, f]));
const byShort = new Map(curlFlags.filter((f) => f.short).map((f) => [f.short as string, f]));

const seeHelp = "run `protocall curl --help` for the list of flags";

/** Parses `protocall curl` arguments (everything after `curl`). Throws ProtocallError on bad usage. */
export function parseCurlArgs(args: string[]): { options: CurlOptions; help: boolean } {
  const options = defaultCurlOptions();
  const positionals: string[] = [];
  let help = false;

  const set = (flag: CurlFlag, raw: string | true, shown: string) => {
    if (flag.name === "help") {
      if (parseBool(raw, shown)) help = true;
      return;
    }
    flag.apply(options, convertFlagValue(flag, raw, shown));
  };

  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--") && arg.length > 2) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const flag = byName.get(name);
      if (!flag) throw new ProtocallError(`unknown flag --${name}: ${seeHelp}`);
      if (eq >= 0) set(flag, arg.slice(eq + 1), `--${name}`);
      else if (flag.kind === "bool") set(flag, true, `--${name}`);
      else if (i + 1 < args.length) set(flag, args[++i], `--${name}`);
      else throw needsArgument(flag, `--${name}`);
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      // One or more short flags: -v, -vk, -dx, -d=x, -d x, -k=false.
      let j = 1;
      while (j < arg.length) {
        const c = arg[j];
        const flag = byShort.get(c);
        if (!flag) {
          throw new ProtocallError(`unknown shorthand flag '${c}' in ${arg}: ${seeHelp}`);
        }
        const rest = arg.slice(j + 1);
        if (flag.kind === "bool") {
          if (rest.startsWith("=")) {
            set(flag, rest.slice(1), `-${c}`);
            break;
          }
          set(flag, true, `-${c}`);
          j++;
          continue;
        }
        if (rest.length > 0) set(flag, rest.startsWith("=") ? rest.slice(1) : rest, `-${c}`);
        else if (i + 1 < args.length) set(flag, args[++i], `-${c}`);
        else throw needsArgument(flag, `-${c}`);
        break;
      }
      continue;
    }
    positionals.push(arg);
  }

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
