// JUnit XML for a run of request files, as CI systems read test results: one <testsuite> per .rpc
// file, one <testcase> per request, a <failure> per check that did not hold, <error> for a request
// that could not be checked (a failed snapshot lists each difference in it), <skipped> for one that did not run, and <system-out> listing every check.
//
// It keeps to the strictest common schema (the Jenkins / Ant junit-4 XSD that JUnit 5 tests its
// output against): testsuites {name, tests, failures, errors, time}; testsuite {name, tests,
// failures, errors, skipped, time, timestamp, hostname}; testcase {name, classname, time,
// assertions} holding skipped?, error*, failure*, system-out*; <skipped> holds its reason as text
// (that schema gives it no attributes). Locations go in the failure text as `file:line:col`, since
// testcase has no file or line attribute there. Written by hand: a few elements do not need an XML
// library, and the escaping (including characters XML 1.0 cannot hold) is here, tested.
import { show } from "./evaluate";
import { checkLocation, type RequestResult, summarize } from "./results";
import { differenceLine } from "./snapshot";

export interface JunitOptions {
  /** The name of the whole run (default "protocall run"). */
  name?: string;
  /** When the run started (each suite's timestamp); default now. */
  timestamp?: Date;
  /** The machine's name, when it should be recorded. */
  hostname?: string;
}

/** The JUnit XML document for a run, ending with a newline. */
export function junitReport(results: readonly RequestResult[], options: JunitOptions = {}): string {
  const byFile = new Map<string, RequestResult[]>();
  for (const r of results) {
    const list = byFile.get(r.file) ?? [];
    list.push(r);
    byFile.set(r.file, list);
  }
  const all = summarize(results);
  const stamp = (options.timestamp ?? new Date()).toISOString().slice(0, 19);
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(
    `<testsuites${attrs({
      name: options.name ?? "protocall run",
      tests: all.requests,
      failures: all.failed,
      errors: all.errored,
      time: seconds(all.durationMs),
    })}>`,
  );
  for (const [file, list] of byFile) {
    const s = summarize(list);
    out.push(
      `  <testsuite${attrs({
        name: file,
        tests: s.requests,
        failures: s.failed,
        errors: s.errored,
        skipped: s.skipped,
        time: seconds(s.durationMs),
        timestamp: stamp,
        hostname: options.hostname,
      })}>`,
    );
    for (const r of list) out.push(...testcase(r));
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return `${out.join("\n")}\n`;
}

function testcase(r: RequestResult): string[] {
  const head = `    <testcase${attrs({
    name: r.name,
    classname: r.file,
    time: seconds(r.durationMs),
    assertions: r.checks.length,
  })}`;
  const body: string[] = [];
  if (r.verdict === "skipped") body.push(`      <skipped>${text(r.message ?? "not run")}</skipped>`);
  if (r.verdict === "errored") {
    const message =
      r.message ?? r.checks.find((c) => !c.passed)?.message ?? "the request could not be checked";
    body.push(
      `      <error${attrs({ message, type: "error" })}>${text(`${r.file}:${r.line}: ${message}`)}</error>`,
    );
  } else {
    for (const c of r.checks) {
      if (c.passed) continue;
      let detail = `${checkLocation(r.file, c)}: ${c.message}`;
      if (c.diff) detail += `\n${c.diff.map(differenceLine).join("\n")}`;
      else if (c.found && show(c.actual ?? null).endsWith("...")) {
        // The message cuts long values; the whole value is here (up to 64 KB).
        const whole = JSON.stringify(c.actual, null, 2) ?? "null";
        detail += `\nactual: ${whole.length > 65536 ? `${whole.slice(0, 65536)}...` : whole}`;
      }
      body.push(
        `      <failure${attrs({ message: c.message, type: c.kind === "capture" || c.kind === "snapshot" ? c.kind : "assertion" })}>${text(detail)}</failure>`,
      );
    }
  }
  if (r.checks.length > 0) {
    const lines = r.checks.map((c) =>
      c.notRun ? `not run: ${c.text}` : `${c.passed ? "passed" : "FAILED"}: ${c.message}`,
    );
    body.push(`      <system-out>${text(lines.join("\n"))}</system-out>`);
  }
  if (body.length === 0) return [`${head}/>`];
  return [`${head}>`, ...body, "    </testcase>"];
}

function seconds(ms: number): string {
  return (Math.max(ms, 0) / 1000).toFixed(3);
}

function attrs(values: Record<string, string | number | undefined>): string {
  let s = "";
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    s += ` ${k}="${attribute(String(v))}"`;
  }
  return s;
}

/** Characters XML 1.0 cannot hold (controls, lone surrogates, U+FFFE/U+FFFF) become U+FFFD. */
const invalidXml = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Escapes element text. */
export function text(s: string): string {
  return s.replace(invalidXml, "\uFFFD").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Escapes an attribute value; tabs and line breaks as references, so parsers keep them. */
export function attribute(s: string): string {
  return text(s)
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")
    .replace(/\t/g, "&#9;")
    .replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;");
}
