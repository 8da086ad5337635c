// The one grammar for durations everywhere in Protocall (`--timeout`, `# @timeout`, the registry
// emulator's `--batch-interval`, any later duration flag): Go's time.ParseDuration syntax (`5s`,
// `1m30s`, `250ms`, `1.5h`, `.5s`, `0`), because `buf curl --timeout` takes exactly that and scripts
// written for it must keep working. A plain number other than 0 is refused, as buf refuses it
// ("missing unit in duration"), with the two readings it could have in the message; whether a flag
// allows 0 or negative values is the flag's own check.
import { ProtocallError } from "../errors";

const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

// µ (micro sign) and μ (Greek mu) as escapes: a non-ASCII character in a regular expression stays
// as it is in the bundle, and V8 then reads the whole bundle as a two-byte string (slower to start).
const part = /^(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/;

/**
 * Parses a Go-style duration into milliseconds. `flag` names the option in error messages.
 * A plain number other than 0 has no unit and is refused, as Go refuses it.
 */
export function parseDuration(text: string, flag = "--timeout"): number {
  let s = text;
  let sign = 1;
  if (s.startsWith("-") || s.startsWith("+")) {
    if (s[0] === "-") sign = -1;
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") throw invalid(text, flag, "it is empty");
  let total = 0;
  while (s.length > 0) {
    const m = part.exec(s);
    if (!m) {
      if (/^(\d+\.?\d*|\.\d+)$/.test(s)) {
        throw new ProtocallError(
          `invalid value "${text}" for ${flag}: it has no unit; write ${text}s for seconds or ${text}ms for milliseconds`,
        );
      }
      throw invalid(text, flag, "it is not a duration");
    }
    total += Number(m[1]) * unitMs[m[2]];
    s = s.slice(m[0].length);
  }
  return sign * total;
}

function invalid(text: string, flag: string, why: string): ProtocallError {
  return new ProtocallError(
    `invalid value "${text}" for ${flag}: ${why}; give a duration such as 5s, 1m30s or 250ms`,
  );
}

/** Formats milliseconds as a Go-style duration (`1m30s`, `250ms`), for messages. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms < 0.001) return `${Math.round(ms * 1e6)}ns`;
  if (ms < 1) return `${+(ms * 1000).toFixed(3)}µs`;
  if (ms < 1000) return `${+ms.toFixed(3)}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = +((ms % 60_000) / 1000).toFixed(3);
  return `${h ? `${h}h` : ""}${h || m ? `${m}m` : ""}${s}s`;
}
