// Runs `protocall curl` and the real `buf curl` with the same arguments and compares what a user or a
// script sees: stdout byte for byte, the exit code, and for RPC errors the error JSON on stderr.
import assert from "node:assert/strict";
import { runBufCurl } from "../support/buf";
import { type RunOptions, type RunResult, runCli } from "../support/cli";

export interface Pair {
  ours: RunResult;
  buf: RunResult;
}

export interface BothOptions extends RunOptions {
  /** Run protocall, then buf (for servers that remember the latest request); default both at once. */
  sequential?: boolean;
}

/** Runs both tools on the same request, at once unless `sequential`. */
export async function runBoth(args: string[], options: BothOptions = {}): Promise<Pair> {
  if (options.sequential) {
    const ours = await runCli(["curl", ...args], options);
    return { ours, buf: await runBufCurl(args, options) };
  }
  const [ours, buf] = await Promise.all([runCli(["curl", ...args], options), runBufCurl(args, options)]);
  return { ours, buf };
}

function describePair(args: string[], { ours, buf }: Pair): string {
  return [
    `args: ${JSON.stringify(args)}`,
    `protocall exit ${ours.code}${ours.timedOut ? " (timed out)" : ""}, stderr:\n${ours.stderr}`,
    `buf exit ${buf.code}${buf.timedOut ? " (timed out)" : ""}, stderr:\n${buf.stderr}`,
  ].join("\n");
}

/**
 * Parses the Connect error JSON that both tools print on stderr for an RPC error: the lines from one
 * that is exactly `{` to one that is exactly `}` (verbose lines such as `{ (#2) [5 bytes data]` are
 * not part of it). buf writes the closing `}` and its newline apart, so under load another of its
 * verbose lines (`buf: * (#1) Finished upload`) can land right after the `}`.
 */
export function errorJson(stderr: string): { code?: string; message?: string; details?: unknown[] } {
  const m = /(?:^|\n)(\{\n[\s\S]*?\n\})(?=\n|$|buf: )/.exec(stderr);
  if (!m) throw new Error(`no error JSON on stderr:\n${stderr}`);
  return JSON.parse(m[1]);
}

export interface ParityOptions extends BothOptions {
  /** The exit code both must have (checked in addition to their equality). */
  code?: number;
  /**
   * How to compare RPC errors (exit code ≥ 8): "json" (default) compares the whole error JSON; "code"
   * only the code (for transport failures, whose messages come from different network stacks).
   */
  errors?: "json" | "code";
  /** Applied to both stdouts before comparing, for output where equivalent forms are allowed. */
  normalize?: (stdout: string) => string;
}

/**
 * For DemoService.Inspect output: a header repeated on separate lines and one line with the values
 * joined by ", " mean the same (RFC 9110, section 5.3), so both become the joined form.
 */
export function joinRepeatedHeaders(stdout: string): string {
  if (stdout === "") return stdout;
  const res = JSON.parse(stdout) as { headers?: { name: string; value: string }[] };
  const joined = new Map<string, string[]>();
  for (const h of res.headers ?? []) joined.set(h.name, [...(joined.get(h.name) ?? []), h.value]);
  res.headers = [...joined].map(([name, values]) => ({ name, value: values.join(", ") }));
  return JSON.stringify(res, null, 2);
}

/**
 * buf's own race: when a server answers and closes while buf is still writing its request (an
 * HTTP/1.1-only server refusing an HTTP/2 preface, on a loaded machine), buf reports the failed write
 * ("write: broken pipe", `canceled`) instead of the server's answer it reports otherwise.
 */
const bufWriteRace = /write: (broken pipe|connection reset by peer)/;

/** Runs both tools and asserts the same stdout, exit code and, for RPC errors, error JSON. */
export async function assertParity(args: string[], options: ParityOptions = {}): Promise<Pair> {
  const pair = await runBoth(args, options);
  // buf's outcome in its write race depends on timing: ask it again (protocall's answer stays as is).
  for (
    let again = 0;
    again < 3 && pair.buf.code !== pair.ours.code && bufWriteRace.test(pair.buf.stderr);
    again++
  ) {
    pair.buf = await runBufCurl(args, options);
  }
  const { ours, buf } = pair;
  const context = describePair(args, pair);
  assert.ok(!ours.timedOut && !buf.timedOut, `a run timed out\n${context}`);
  if (options.code !== undefined) assert.equal(buf.code, options.code, `buf's exit code\n${context}`);
  assert.equal(ours.code, buf.code, `exit codes differ\n${context}`);
  const normalize = options.normalize ?? ((s: string) => s);
  assert.equal(normalize(ours.stdout), normalize(buf.stdout), `stdout differs\n${context}`);
  if (ours.code >= 8) {
    const a = errorJson(ours.stderr);
    const b = errorJson(buf.stderr);
    if (options.errors === "code") assert.equal(a.code, b.code, `error codes differ\n${context}`);
    else assert.deepEqual(a, b, `error JSON differs\n${context}`);
  } else if (ours.code !== 0) {
    assert.match(ours.stderr, /^protocall: \S.*\n$/, `protocall prints one line on failure\n${context}`);
  }
  return pair;
}
