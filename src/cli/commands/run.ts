// `protocall run FILE.rpc [--name NAME] [--env ENV] [--var NAME=VALUE] [--bail] [--update-snapshots]
// [--reporter KIND=FILE]`:
// runs the requests of a request file in order as tests. The work is core/assertions/run-requests.ts
// (requests converted as the editor's Send converts them, called through one warm call session,
// judged by their `# @assert` and `# @snapshot` options, `# @capture` values feeding the requests after them); this
// file renders it: response messages on stdout as `protocall curl` prints them (one stdout sink),
// one line per request and per failure line (checked-request.ts) on stderr, with an RPC error's body,
// a summary, and the JUnit / JSON reports.
// Problems in the file (syntax, unknown options, undefined variables) are reported as
// `file:line:col: message` before anything is sent.

import { readFileSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { type RequestResult, type RequestVerdict, summarize } from "../../core/assertions/results";
import type { RequestRun, RunObserver } from "../../core/assertions/run-requests";
import { ProtocallError } from "../../core/errors";
import type { OutputSink } from "../../core/invoke/output-sink";
import { redactSecrets } from "../../core/invoke/redact";
import type { Range } from "../../core/rpcfile/types";
import { defineFlags, flagsHelp, invalidValue, parseArgs } from "../args";
import { cliTokens } from "../auth-interaction";
import type { CliContext, Command } from "../context";
import { homeDirectory } from "../io";
import { terminalProgress } from "../terminal-progress";
import { version } from "../version";

const flags = defineFlags({
  env: { kind: "string", value: "ENV", help: "environment to select from the environment file" },
  "env-file": {
    kind: "string",
    value: "FILE",
    help: "environment file (default: protocall.env.json at the workspace root); its private companion is the same name with .private before .json",
  },
  name: {
    kind: "strings",
    value: "NAME",
    help: "run only the request with this name (the text after ###, or # @name); repeatable, in the given order",
  },
  var: {
    kind: "strings",
    value: "NAME=VALUE",
    help: "set a variable above every other (environment, file, captures); repeatable",
  },
  bail: { kind: "bool", help: "stop at the first request that does not pass; the rest are skipped" },
  "update-snapshots": {
    kind: "bool",
    help: "store each # @snapshot request's response as its snapshot instead of comparing with it",
  },
  reporter: {
    kind: "strings",
    value: "KIND=FILE",
    help: "also write the results: junit=FILE (JUnit XML, for CI servers) or json=FILE; repeatable; written even when requests fail",
  },
});

const help = `Run the requests of a .rpc request file as tests: each is called as \`protocall curl\` would call it
and checked against its # @assert options.

Usage:
  protocall run FILE.rpc [flags]

Each request of the file runs in order; response messages are printed on stdout as \`protocall curl\`
prints them. On stderr, one line per request (PASS, FAIL, ERROR for a call that failed outside the RPC,
SKIP) with each check that did not hold under it as FILE:LINE:COL: message and an RPC error's
body (code, message, details) as \`protocall curl\` prints it, then a summary
(\`3 requests: 2 passed, 1 failed; 7 checks, 1 failed (42 ms)\`). The checks of a call that failed
outside the RPC (no connection) are not run, and counted so (\`3 checks, 3 not run\`). All requests run even if one fails,
unless --bail is given. A request passes when its status is ok and every # @assert holds (assert on
status or error to expect a failure: # @assert status == not_found). The exit code is 0 when every
request passes, else the first failing request's: its \`protocall curl\` exit code when its call
failed and nothing expected it (the gRPC code × 8 for an RPC error, 1 for other errors), 1 when an
assertion or capture did not hold or the request could not be sent.

A request file holds requests separated by "### <name>" lines; a file without ### holds one:

  @host = http://localhost:8080          file variables, at the top
  ### Greet                              a request and its name
  # @protocol grpc                       options: protocall curl's long flags without dashes
  # @timeout 5s                          (a bool flag alone means true: # @insecure)
  {{host}}/demo.v1.GreetService/Greet    the URL, optionally after GRPC, GRPC-WEB or CONNECT
  Authorization: Bearer {{$dotenv TOKEN}}   headers, then an empty line

  {"name": "world"}                      the body: JSON documents (several for a client stream)
  < ./more.json                          or a file to include, relative to the .rpc file

Assertions and captures are request options (README: "Request files that test themselves"):

  # @assert status == ok                 path, operator (== != < <= > >= contains matches
  # @assert message.greeting == "Hi"     exists !exists isType), a JSON value
  # @assert headers["content-type"] contains "grpc"
  # @assert error.details[google.rpc.BadRequest].fieldViolations[0].field == "name"
  # @capture token = message.token       {{token}} in the requests after this one
  # @snapshot                            compare the response with NAME.snapshots.json (written on
  # @snapshot ignore messages[*].id      the first run; --update-snapshots rewrites it); ignore
  # @snapshot headers x-request-id       scrubs changing values, headers stores chosen headers

A request that uses a captured value whose request has not run (it failed, or --name left it out)
is not sent, and names the request to run first.

Problems in the file (syntax, unknown request options, invalid values, undefined variables,
missing included files) are printed as FILE:LINE:COL: message, and nothing is sent (exit 1).

Variables: {{name}} takes the first of, in this order: a --var value, a value captured earlier in
the run, the environment chosen with --env, the file's own \`@name = value\`, the "$shared"
environment's defaults. So \`@host\` in a file is its default, and an environment (or --var) with
host points the file at another server without editing it. Environments are read from
protocall.env.json at the workspace root (the nearest directory above the file with that file,
else with .git), with values from protocall.env.private.json (meant to be git-ignored, for
secrets) overriding them. {{$env NAME}}, {{$dotenv NAME}} (.env next to the file, then at
the workspace root), {{$uuid}}, {{$timestamp}}, {{$isoTimestamp}}, {{$randomInt MIN MAX}} and, in a
body, {{$file PATH}} (a file's bytes or text) are
built in. Relative paths (includes, @cacert, @schema, ...) are relative to the .rpc file.

Examples:
  protocall run requests.rpc
  protocall run requests.rpc --name "Greet a person"
  protocall run api.rpc --env staging
  protocall run api.rpc --env prod --env-file config/protocall.env.json
  protocall run api.rpc --var host=https://staging.example.com --bail
  protocall run api.rpc --reporter junit=results.xml --reporter json=results.json

Flags:
${flagsHelp(flags)}`;

interface RunArgs {
  file?: string;
  names: string[];
  env?: string;
  envFile?: string;
  help: boolean;
  vars: Record<string, string>;
  reporters: Reporter[];
  bail: boolean;
  updateSnapshots: boolean;
}

/** A report file asked for with --reporter KIND=FILE. */
interface Reporter {
  kind: "junit" | "json";
  file: string;
}

/** `--var NAME=VALUE` into `vars`. */
function addVar(vars: Record<string, string>, text: string): void {
  const eq = text.indexOf("=");
  const name = eq > 0 ? text.slice(0, eq).trim() : "";
  if (!/^[A-Za-z_][\w.-]*$/.test(name)) {
    throw invalidValue(
      text,
      "--var",
      "write NAME=VALUE with a variable name (letters, digits, _ . -), e.g. --var host=http://localhost:8080",
    );
  }
  vars[name] = text.slice(eq + 1);
}

/** `--reporter KIND=FILE`. */
function parseReporter(text: string): Reporter {
  const eq = text.indexOf("=");
  const kind = eq > 0 ? text.slice(0, eq) : text;
  const file = eq > 0 ? text.slice(eq + 1) : "";
  if ((kind !== "junit" && kind !== "json") || file === "") {
    throw invalidValue(text, "--reporter", "write --reporter junit=FILE (JUnit XML) or --reporter json=FILE");
  }
  return { kind, file };
}

function parseRunArgs(args: string[]): RunArgs {
  const { values, positionals, help } = parseArgs(args, flags, {
    command: "protocall run",
    positionals: Number.POSITIVE_INFINITY,
  });
  const out: RunArgs = { names: [], help, vars: {}, reporters: [], bail: false, updateSnapshots: false };
  if (help) return out;
  if (positionals.length === 0) {
    throw new ProtocallError(
      "no request file given: write `protocall run FILE.rpc` (see `protocall run --help`)",
    );
  }
  if (positionals.length > 1) {
    throw new ProtocallError(
      `too many arguments: expected one .rpc file, got ${positionals.map((p) => JSON.stringify(p)).join(", ")}`,
    );
  }
  for (const v of values.var) addVar(out.vars, v);
  out.reporters = values.reporter.map(parseReporter);
  out.file = positionals[0];
  out.names = values.name;
  out.env = values.env;
  out.envFile = values["env-file"];
  out.bail = values.bail;
  out.updateSnapshots = values["update-snapshots"];
  return out;
}

export const command: Command = {
  async run(args: string[], ctx: CliContext): Promise<number> {
    const a = parseRunArgs(args);
    if (a.help || !a.file) {
      ctx.stdout.write(help);
      return 0;
    }
    const [{ parseRpcFile }, { openRpcContext }, { checkRequests, runRequests }, { createCallSession }] =
      await Promise.all([
        import("../../core/rpcfile/parse"),
        import("../../core/rpcfile/context"),
        import("../../core/assertions/run-requests"),
        import("../../core/invoke/call-session"),
      ]);
    const full = resolve(ctx.cwd, a.file);
    let text: string;
    try {
      text = readFileSync(full, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new ProtocallError(
        `cannot read ${a.file}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? (err as Error).message)}`,
      );
    }
    const shown = relative(ctx.cwd, full).startsWith("..") ? full : relative(ctx.cwd, full) || a.file;
    const where = (r: { start: { line: number; character: number } }) =>
      `${shown}:${r.start.line + 1}:${r.start.character + 1}`;

    const file = parseRpcFile(text);
    for (const d of file.diagnostics) {
      if (d.severity === "warning") ctx.stderr.write(`${where(d.range)}: warning: ${d.message}\n`);
    }
    const parseErrors = file.diagnostics.filter((d) => d.severity === "error");
    if (parseErrors.length > 0) {
      for (const d of parseErrors) ctx.stderr.write(`${where(d.range)}: ${d.message}\n`);
      return 1;
    }

    let requests = file.requests;
    if (a.names.length > 0) {
      requests = a.names.map((name) => {
        const found = file.requests.find((r) => r.name?.text === name);
        if (!found) {
          const known = file.requests.filter((r) => r.name).map((r) => JSON.stringify(r.name?.text));
          throw new ProtocallError(
            `${shown} has no request named ${JSON.stringify(name)}${known.length ? `; its requests: ${known.join(", ")}` : "; name requests with ### <name>"}`,
          );
        }
        return found;
      });
    }
    if (requests.length === 0) {
      throw new ProtocallError(`${shown} holds no request: add a request line (a URL) after ###`);
    }

    // The environment is read once for the file; --var values rank above everything else.
    const context = openRpcContext({
      filePath: full,
      environment: a.env,
      envFile: a.envFile,
      processEnv: ctx.env,
      overrides: a.vars,
    });
    const run = { text, parsed: file, filePath: full, shownFile: shown, requests, context };
    // Every request is converted before the first is sent, so a typo in the last one sends nothing.
    const problems = checkRequests(run);
    for (const d of problems) ctx.stderr.write(`${where(d.range)}: ${d.message}\n`);
    if (problems.length > 0) return 1;

    const stdinIsTTY = ctx.stdinIsTTY;
    // Ctrl-C cancels the running request and skips the rest (ctx.interrupted, as for protocall curl).
    const controller = new AbortController();
    const interrupted = ctx.interrupted();
    const onInterrupt = () => controller.abort();
    if (interrupted.aborted) controller.abort();
    else interrupted.addEventListener("abort", onInterrupt, { once: true });
    const { sinkFor } = await import("../../core/invoke/output-sink");
    const stdout = sinkFor(ctx.stdout);
    // Output that can no longer be written (`protocall run ... | head`) ends the run.
    const unwatch = stdout.onBroken((err) => controller.abort(err));
    const session = createCallSession({ product: `protocall/${version}` });
    const started = performance.now();
    let outcome: Awaited<ReturnType<typeof runRequests>>;
    try {
      outcome = await runRequests({
        ...run,
        session,
        bail: a.bail,
        updateSnapshots: a.updateSnapshots,
        signal: controller.signal,
        io: {
          env: ctx.env,
          homedir: homeDirectory(ctx),
          tokens: cliTokens(ctx),
          stdin: {
            // Created only if a request reads it (-d @-).
            get stdin() {
              return ctx.stdin;
            },
            stdinIsTTY,
            promptPassword: stdinIsTTY
              ? async (prompt) =>
                  (await import("../../core/invoke/prompt-password")).promptPassword(
                    prompt,
                    ctx.stdin,
                    ctx.stderr,
                  )
              : undefined,
          },
        },
        observer: printer(ctx, stdout, where),
      });
      await stdout.flush();
    } finally {
      unwatch();
      interrupted.removeEventListener("abort", onInterrupt);
      await session.close();
    }
    const broken = stdout.broken;
    if (broken) {
      if (broken.code === "EPIPE") return 141;
      ctx.stderr.write(`protocall: cannot write the output: ${broken.message}\n`);
      return 1;
    }
    const results = outcome.runs.map((r) => r.result);
    const elapsed = performance.now() - started;
    await new Promise<void>((done) => ctx.stderr.write(summaryLine(results, elapsed), () => done()));
    if (a.reporters.length > 0) {
      const [{ junitReport }, { jsonReport }] = await Promise.all([
        import("../../core/assertions/junit-report"),
        import("../../core/assertions/json-report"),
      ]);
      const timestamp = new Date(Date.now() - elapsed);
      for (const rep of a.reporters) {
        const body =
          rep.kind === "junit" ? junitReport(results, { timestamp }) : jsonReport(results, { timestamp });
        writeReport(resolve(ctx.cwd, rep.file), rep, body);
      }
    }
    return outcome.exitCode;
  },
};

const marks: Record<RequestVerdict, string> = {
  passed: "PASS",
  failed: "FAIL",
  errored: "ERROR",
  skipped: "SKIP",
};

/**
 * A request's line; under it, what kept it unsent, or its failure lines (checked-request.ts: the
 * call's failure once, else each check that did not hold), then an RPC error's body as
 * `protocall curl` prints it (code, message, details; secrets redacted).
 */
/**
 * What a run prints as it goes: messages on stdout, verbose lines and each request's result on
 * stderr, and a `# @stream-file` upload's progress line on a terminal (erased before anything else).
 */
function printer(ctx: CliContext, stdout: OutputSink, where: (range: Range) => string): RunObserver {
  const progress = terminalProgress(ctx.stderr, true);
  return {
    message: (json) => {
      progress.clear();
      void stdout.write(`${json}\n`);
    },
    log: (line) => {
      progress.clear();
      ctx.stderr.write(`${line}\n`);
    },
    streamProgress: progress.update,
    done: (r) => {
      progress.clear();
      if (r.call?.listing) stdout.write(r.call.listing.map((line) => `${line}\n`).join(""));
      ctx.stderr.write(requestLines(r, where));
    },
  };
}

function requestLines(r: RequestRun, where: (range: Range) => string): string {
  const res = r.result;
  const time =
    res.verdict === "skipped" ? ` (${res.message?.replace(/^not run: /, "")})` : ` (${ms(res.durationMs)})`;
  let out = `${marks[res.verdict]} ${res.name}${time}\n`;
  for (const p of r.problems) out += `  ${where(p.range)}: ${p.message}\n`;
  for (const f of r.failures ?? []) out += `  ${where(f.range)}: ${f.message}\n`;
  const error = r.call?.error;
  if (error && r.call?.code !== undefined && r.call.code !== "ok") {
    for (const line of error.text.trimEnd().split("\n")) out += `  ${redactSecrets(line)}\n`;
  }
  return out;
}

/**
 * `3 requests: 2 passed, 1 failed; 7 checks, 1 failed (42 ms)` and a newline; checks of calls that
 * failed outside the RPC are counted as not run (`; 3 checks, 3 not run`).
 */
function summaryLine(results: readonly RequestResult[], elapsedMs: number): string {
  const s = summarize(results);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  let line = `${plural(s.requests, "request")}: ${s.passed} passed`;
  if (s.failed) line += `, ${s.failed} failed`;
  if (s.errored) line += `, ${s.errored} errored`;
  if (s.skipped) line += `, ${s.skipped} skipped`;
  const checks = s.checks.passed + s.checks.failed + s.checks.notRun;
  line += `; ${plural(checks, "check")}`;
  if (s.checks.failed) line += `, ${s.checks.failed} failed`;
  if (s.checks.notRun) line += `, ${s.checks.notRun} not run`;
  return `${line} (${ms(elapsedMs)})\n`;
}

function ms(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`;
}

function writeReport(path: string, rep: Reporter, body: string): void {
  try {
    writeFileSync(path, body);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ProtocallError(
      `--reporter ${rep.kind}=${rep.file}: cannot write ${path}: ${code === "ENOENT" ? "no such directory" : code === "EISDIR" ? "it is a directory" : (code ?? (err as Error).message)}`,
    );
  }
}
