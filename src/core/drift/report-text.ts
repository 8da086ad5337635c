// A drift report as text for people: one line per difference, led by its place in the source
// (`file:line:`, as compilers write it, so terminals and editors open it), then whether buf calls it
// breaking, what differs in the words of the two sides, and buf's rule; a summary line last.
import { isAbsolute, relative } from "node:path";
import type { Difference, DriftReport, DriftSideSummary, SourcePlace } from "./drift";

/** Each kind of side with its preposition: "on the server", "in the workspace". */
const NOUNS = {
  server: "on the server",
  module: "in the module",
  workspace: "in the workspace",
  "descriptor-set": "in the descriptor set",
} as const;

/** How the two sides are called in the lines: by kind, or by what was named when both are of one kind. */
export function sideNames(report: DriftReport): { input: string; against: string } {
  const same = report.input.kind === report.against.kind;
  const name = (s: DriftSideSummary) => (same ? `in ${s.spec}` : NOUNS[s.kind]);
  return { input: name(report.input), against: name(report.against) };
}

/** A place relative to `cwd` when it is inside it. */
function placeText(p: SourcePlace, cwd: string): string {
  let file = p.file;
  if (isAbsolute(file)) {
    const rel = relative(cwd, file);
    if (!rel.startsWith("..") && !isAbsolute(rel)) file = rel;
  }
  return p.line === undefined ? file : `${file}:${p.line}`;
}

/** The place shown: the against side's (the source) when it has a line, else the input's, else a file. */
export function shownPlace(d: Difference): SourcePlace | undefined {
  if (d.against?.line !== undefined) return d.against;
  if (d.input?.line !== undefined) return d.input;
  return d.against ?? d.input;
}

/** What differs, in words. */
export function describeDifference(d: Difference, names: { input: string; against: string }): string {
  const what = d.element === "value" ? "enum value" : d.element;
  switch (d.change) {
    case "added":
      return `${what} ${d.name}: ${names.input}, not ${names.against}`;
    case "missing":
      return `${what} ${d.name}: ${names.against}, not ${names.input}`;
    case "changed":
      return `${what} ${d.name}: ${d.properties
        .map((p) => `${p.property} ${p.input} ${names.input}, ${p.against} ${names.against}`)
        .join("; ")}`;
    case "rule":
      return d.rules.map((r) => r.message).join(" ");
  }
}

/** The report as lines of text, ending with a newline. */
export function formatDriftText(report: DriftReport, cwd: string): string {
  const names = sideNames(report);
  const lines: string[] = [];
  for (const d of report.differences) {
    const place = shownPlace(d);
    const lead = place ? `${placeText(place, cwd)}: ` : "";
    const rules =
      d.change === "rule"
        ? ` (${d.rules.map((r) => r.rule).join(", ")})`
        : d.rules.length > 0
          ? ` (buf ${d.rules.map((r) => `${r.rule}: ${r.message}`).join("; ")})`
          : "";
    lines.push(`${lead}${d.breaking ? "breaking" : "compatible"}: ${describeDifference(d, names)}${rules}`);
  }
  const breaking = report.differences.filter((d) => d.breaking).length;
  const count = report.differences.length;
  lines.push(
    count === 0
      ? `no differences between ${report.input.spec} and ${report.against.spec}`
      : `${count} ${count === 1 ? "difference" : "differences"} between ${report.input.spec} and ${report.against.spec}: ` +
          `${breaking} breaking for clients of ${names.against.replace(/^(on|in) /, "")} (buf breaking), ${count - breaking} compatible`,
  );
  if (report.unserved.length > 0) {
    lines.push(
      `note: the server's files also declare ${report.unserved.length === 1 ? "a service" : "services"} it does not serve: ${report.unserved.join(", ")}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** The exit code of a report: 0 the same, 1 a difference breaks clients, 2 only compatible ones. */
export function driftExitCode(report: DriftReport): number {
  return report.verdict === "same" ? 0 : report.verdict === "breaking" ? 1 : 2;
}

/** The exit code when drift could not be determined (a side unreadable, a server unreachable, bad flags). */
export const DRIFT_ERROR_EXIT = 3;
